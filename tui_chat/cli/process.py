"""How a CLI process ends when it is told to: signals and a reader that went away.

- SIGTERM (``kill``) and SIGHUP (the terminal closed) cancel the running command like
  ``escape`` in the TUI: a reply being streamed is stored with every character that arrived,
  marked ``incomplete``; the process then exits with ``128 + signal`` and one line.
- A closed standard output (``tui-chat send … | head -c 10``) stops the printing, not the
  work: the reply is still received and stored whole, and nothing is printed about it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Iterator

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a command cleanly."""


class Stopped(Exception):
    """The command was stopped by a signal (after storing what it had)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        name = signal.Signals(signum).name
        super().__init__(
            f"stopped by {name}; a reply being streamed is saved, marked incomplete "
            "(`tui-chat retry` asks again)"
        )

    @property
    def exit_code(self) -> int:
        """The conventional exit code: ``128 + signal``."""
        return 128 + self.signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn :data:`SIGNALS` into :class:`Stopped` for the running task (inside the block)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def stop(signum: int) -> None:
        received.append(signum)
        if task is not None:
            task.cancel()

    installed = []
    for signum in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop, signum)
            installed.append(signum)
    try:
        yield
    except asyncio.CancelledError:
        if received:
            raise Stopped(received[0]) from None
        raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def silence_stdout() -> None:
    """The reader of standard output went away: send the rest of the output nowhere.

    Python would otherwise fail again when it flushes standard output at exit.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
