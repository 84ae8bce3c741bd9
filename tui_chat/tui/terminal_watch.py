"""The TUI ends when its terminal goes away, whatever it is doing.

Closing a terminal window or killing its tmux session hangs up the pseudo-terminal. A process
that has it as its controlling terminal gets SIGHUP, one started without one gets nothing; and
Textual's input thread, reading end-of-file from the hung-up terminal, loops on it for ever
without telling the app. Processes were found alive hours later, their database open, some
spinning at 100 % CPU.

:class:`TerminalWatch` is a thread that waits on the terminal (``poll``). When it has hung up,
it sends this process SIGHUP: the app's handler (``termination``) stores the streaming reply
and quits, and before the app is running Python's default for SIGHUP ends the process. Every
stop by signal also arms :func:`hard_deadline`: should the app's own shutdown hang (a thread
waiting on a dead terminal), the process still ends with ``128 + signal`` after
:data:`GRACE_SECONDS` — by then what arrived is stored, and a reply left ``streaming`` is marked
``incomplete`` at the next start in any case.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import stat
import sys
import threading

POLL_SECONDS = 0.25
"""The longest wait on the terminal between checks that the watch is still wanted (a hang-up
ends the wait at once)."""

GRACE_SECONDS = 10.0
"""How long a stop by signal gets to finish before the process is ended regardless."""

_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def terminal_gone(fd: int) -> bool:
    """Whether the terminal open on ``fd`` has hung up (or ``fd`` is no longer open)."""
    poller = select.poll()
    poller.register(fd, 0)  # hang-ups and errors are always reported
    try:
        events = poller.poll(0)
    except OSError:
        return True
    return any(mask & _GONE for _, mask in events)


def terminal_fds() -> list[int]:
    """The standard streams open on character devices: the terminal Textual reads and writes,
    even one already hung up (``isatty`` is false then), never a file or a pipe."""
    found = []
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            if stat.S_ISCHR(os.fstat(fd).st_mode):
                found.append(fd)
    return found


def leave(code: int) -> None:
    """End the process now with ``code`` (standard streams flushed if they still can be)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


_armed = threading.Event()


def hard_deadline(code: int, seconds: float = GRACE_SECONDS) -> None:
    """End the process with ``code`` in ``seconds`` unless it has ended by then (once)."""
    if _armed.is_set():
        return
    _armed.set()
    timer = threading.Timer(seconds, leave, (code,))
    timer.name = "tui-chat-deadline"
    timer.daemon = True  # a process that ends by itself does not wait for it
    timer.start()


class TerminalWatch:
    """Watches the terminal from a daemon thread; SIGHUP to this process when it is gone.

    Args:
        fds: The terminal's file descriptors (:func:`terminal_fds`).
        poll: Seconds between checks.
    """

    def __init__(self, fds: list[int], poll: float = POLL_SECONDS) -> None:
        self._fds = fds
        self._poll = poll
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tui-chat-terminal", daemon=True)

    def start(self) -> None:
        """Start watching (nothing to watch when no standard stream is a terminal)."""
        if self._fds:
            self._thread.start()

    def lost(self) -> bool:
        """Whether the terminal has gone away."""
        return any(terminal_gone(fd) for fd in self._fds)

    def stop(self) -> None:
        """Stop watching (the app has quit)."""
        self._stopped.set()

    def _run(self) -> None:
        # The wait is on the terminal itself: a hang-up ends it at once, not at the next
        # check (a quarter of a second of the two the process has to end).
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, 0)  # hang-ups and errors are always reported
        while not self._stopped.is_set():
            try:
                woken = bool(poller.poll(self._poll * 1000))
            except OSError:
                woken = True
            if self._stopped.is_set():
                return
            if not self.lost():
                if woken:  # never a busy loop, whatever the terminal reports
                    self._stopped.wait(self._poll)
                continue
            hard_deadline(128 + signal.SIGHUP)
            os.kill(os.getpid(), signal.SIGHUP)
            return
