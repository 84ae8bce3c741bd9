"""The full-screen Textual interface. Importing this package does not import Textual."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_chat.config import Config

__all__ = ["leave_if_stuck", "run_app"]


def run_app(
    config: Config, db_path: Path | None = None, conversation_ref: str | None = None
) -> int:
    """Run the TUI until the user quits.

    Args:
        config: The loaded configuration.
        db_path: Database file (``--db``); defaults to the config's.
        conversation_ref: Conversation to open (id, unique prefix or ``last``); ``None`` opens
            the last conversation, or a new one when there is none.

    Returns:
        The process exit code (1 when the conversation or the database cannot be opened).
    """
    from tui_chat.tui.terminal_watch import TerminalWatch, leave, terminal_fds

    watch = TerminalWatch(terminal_fds())  # a lost terminal ends the process
    watch.start()
    from tui_chat.tui.app import ChatApp

    app = ChatApp(config, db_path, conversation_ref)
    app.freeze_after_start = True
    try:
        app.run()
    except OSError:  # the last words written to a terminal that is gone
        if not watch.lost():
            raise
    watch.stop()
    if watch.lost():
        # Everything is stored and closed once the app has quit: with the terminal gone the
        # process ends now, waiting neither for a thread Textual left reading the dead
        # terminal nor for the interpreter's tear-down (0.7 s of the 2 s budget).
        leave(128 + signal.SIGHUP)
    code = app.return_code or 0
    leave_if_stuck(code)
    return code


STUCK_SECONDS = 2.0
"""How long the app's own threads get to end after it has quit."""


def leave_if_stuck(code: int, wait: float = STUCK_SECONDS) -> None:
    """End the process if threads the app left behind do not end by themselves.

    When the terminal goes away in some states, Textual's driver can miss stopping its input
    thread, which then reads end-of-file from the dead terminal in a loop for ever: the process
    outlives its terminal, using CPU, and Python waits for that thread at exit. Everything of
    ours is already stored and closed when the app has quit, so after ``wait`` seconds the
    process exits with ``code`` without waiting for such threads.
    """
    deadline = time.monotonic() + wait
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.current_thread()
    ):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
