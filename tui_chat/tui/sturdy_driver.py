"""Textual's Linux driver with a writer thread that survives a dead terminal.

Textual writes to the terminal from a thread fed by a queue of 30 writes. On a terminal that
has gone away (a closed window, ``tmux kill-session``) its first write fails with ``EIO`` and
the thread dies of it; the queue then fills, and the next write of the app's own thread — a
frame, or leaving application mode at exit — waits for room for ever. The TUI stopped there,
its reply saved, until the 10 s deadline of :mod:`~tui_chat.tui.terminal_watch` ended it.

:class:`SturdyWriter` keeps taking from the queue once a write has failed, dropping what can no
longer be written, so no write ever waits on a dead terminal and the app quits by its own path.

Once the terminal is known to be gone, :meth:`SturdyLinuxDriver.terminal_lost` also ends
Textual's input thread, which otherwise reads end-of-file from the dead terminal in a tight loop
— taking the interpreter from the app's own thread while it stores the reply and quits — and
is then waited for when the app leaves application mode.

Keys typed before the app takes the terminal (while Python starts) are typed in the terminal's
ordinary line mode, which turns the Enter key's carriage return into a line feed (``ICRNL``):
read as it is, "hello⏎" typed ahead became "hello" and a new line (``ctrl+j``) in the
composer, never sent. :func:`typed_ahead` reads those whole lines before the terminal is put
in raw mode, with their Enter given back, and they reach the app first, in order.
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import weakref
from typing import Any

from textual._xterm_parser import XTermParser
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver


class SturdyWriter(WriterThread):
    """A writer thread that drains its queue to the end, whatever the terminal does."""

    broken = False
    """A write failed: the terminal is gone, what comes after is dropped."""

    def run(self) -> None:
        """Write what is queued until the ``None`` that stops it; after a failed write, only
        take from the queue."""
        queue = self._queue
        while (text := queue.get()) is not None:
            if self.broken:
                continue
            try:
                self._file.write(text)
                if queue.qsize() == 0:
                    self._file.flush()
            except (OSError, ValueError):  # EIO from a hung-up terminal, a closed file
                self.broken = True
        if not self.broken:
            with contextlib.suppress(OSError, ValueError):
                self._file.flush()


_LIVE: weakref.WeakSet[SturdyLinuxDriver] = weakref.WeakSet()
"""The drivers in application mode (one per running app)."""


def lose_terminal() -> None:
    """The terminal has gone away: every live driver stops reading and writing it."""
    for driver in list(_LIVE):
        driver.terminal_lost()


class SturdyLinuxDriver(LinuxDriver):
    """:class:`LinuxDriver` writing through a :class:`SturdyWriter`."""

    def start_application_mode(self) -> Any:
        """Enter application mode, then hand the writing to a :class:`SturdyWriter` (Textual's
        own thread writes what it was given and ends first). The lines typed ahead
        (:func:`typed_ahead`) are given to the app before the input thread reads on."""
        ahead = typed_ahead(self.fileno)
        if ahead:
            parser = XTermParser()
            for event in [*parser.feed(ahead), *parser.tick()]:
                self.process_message(event)
        result = super().start_application_mode()  # type: ignore[no-untyped-call]
        textual_writer = self._writer_thread
        if (
            textual_writer is not None
            and not isinstance(textual_writer, SturdyWriter)
            and self._file is not None
        ):
            textual_writer.stop()
            self._writer_thread = SturdyWriter(self._file)
            self._writer_thread.start()
        _LIVE.add(self)
        return result

    def terminal_lost(self) -> None:
        """The terminal has gone away: stop reading it (the input thread ends after its current
        wait) and drop what is still written. Leaving application mode then waits for
        nothing: there is no terminal left to restore."""
        self.exit_event.set()
        if isinstance(self._writer_thread, SturdyWriter):
            self._writer_thread.broken = True


def typed_ahead(fileno: int) -> str:
    """The whole lines typed into the terminal ``fileno`` while it is still in line mode,
    read now, with each line's end given back as the carriage return the Enter key sent
    (the line mode's ``ICRNL`` made it a line feed); ``""`` when it is no terminal in line
    mode or nothing was typed. What is typed after the last Enter stays in the terminal and is
    read in raw mode as it comes."""
    try:
        attributes = termios.tcgetattr(fileno)
    except (termios.error, OSError):
        return ""
    if not attributes[3] & termios.ICANON or not attributes[0] & termios.ICRNL:
        return ""
    chunks: list[bytes] = []
    while select.select([fileno], [], [], 0)[0]:
        try:
            chunk = os.read(fileno, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace").replace("\n", "\r")
