"""SIGTERM (``kill``) and SIGHUP (the terminal closed) end the TUI without losing text.

Python's default for both signals ends the process at once: the reply being streamed lost
what arrived since the last flush (up to half a second) and stayed ``streaming``. Here the
signal cancels the reply as ``escape`` does — the engine stores every character that arrived
and marks the reply ``incomplete`` — then the app exits with ``128 + signal``. Should that
shutdown hang, the process ends all the same a few seconds later
(:func:`~tui_chat.tui.terminal_watch.hard_deadline`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

from textual.app import App

from tui_chat.tui import gc_pause
from tui_chat.tui.terminal_watch import hard_deadline, terminal_fds, terminal_gone

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""The signals that end the TUI cleanly."""

_stopping: set[asyncio.Task[None]] = set()
"""Keeps the stop task referenced until it is done."""

_held_batches: list[contextlib.ExitStack] = []
"""The batch :func:`quiet` opens and never closes, kept referenced so it stays open."""


def install(app: App[None]) -> None:
    """Make :data:`SIGNALS` stop ``app`` cleanly (call once its event loop runs)."""
    loop = asyncio.get_running_loop()
    for signum in SIGNALS:
        # Not every platform or thread can take signal handlers; those keep the default.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, _start_stop, app, signum)


def _start_stop(app: App[None], signum: int) -> None:
    hard_deadline(128 + signum)
    task = asyncio.ensure_future(stop(app, signum))
    _stopping.add(task)
    task.add_done_callback(_stopping.discard)


def quiet(app: App[None]) -> None:
    """Draw nothing more: the app is leaving.

    A frame costs the event loop the time the stop needs. Under a dialog it is dearest: every
    change to the screen below (a streaming reply) redraws all of that screen, dimmed, behind
    the dialog — with the export dialog open over a streaming reply the stop took 1.8–3.7 s of
    mostly such frames. Nor is memory collected again (:func:`~tui_chat.tui.gc_pause.leaving`).
    When the terminal itself is gone, its input thread is ended too
    (:meth:`~tui_chat.tui.sturdy_driver.SturdyLinuxDriver.terminal_lost`).
    """
    batch = contextlib.ExitStack()
    batch.enter_context(app.batch_update())
    _held_batches.append(batch)  # never closed: no frame is drawn again
    gc_pause.leaving()
    if any(terminal_gone(fd) for fd in terminal_fds()):
        from tui_chat.tui.sturdy_driver import lose_terminal  # loaded with the driver already

        lose_terminal()


async def stop(app: App[None], signum: int) -> None:
    """Cancel the streaming reply, wait until it is stored, and exit with ``128 + signum``."""
    quiet(app)
    replies = [w for w in app.workers if w.group == "reply" and not w.is_finished]
    for worker in replies:
        worker.cancel()
    for worker in replies:
        # The worker ends cancelled once the engine has stored what arrived.
        with contextlib.suppress(Exception):
            await worker.wait()
    name = signal.Signals(signum).name
    saved = "; the reply so far is saved, marked incomplete" if replies else ""
    app.exit(return_code=128 + signum, message=f"tui-chat: stopped by {name}{saved}")
