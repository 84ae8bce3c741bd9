"""Lines typed before the TUI takes its terminal keep their Enter: the terminal's line mode
turns the key's carriage return into a line feed (``ctrl+j``, a new line in the composer), and
:func:`~tui_chat.tui.sturdy_driver.typed_ahead` gives it back before raw mode begins. A real
pseudo-terminal, in the line mode a new one starts in."""

from __future__ import annotations

import os
import pty
import select
import termios
import tty
from collections.abc import Iterator

import pytest

from tui_chat.tui.sturdy_driver import typed_ahead


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: (the emulator's side, the program's side)."""
    master, slave = pty.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


def _readable(fileno: int) -> None:
    """Wait until the terminal's line discipline has something for ``fileno`` to read."""
    ready, _, _ = select.select([fileno], [], [], 60)
    assert ready, "the typed line never reached the program's side"


def test_a_line_typed_ahead_is_read_with_its_enter_and_the_rest_stays(
    terminal: tuple[int, int],
) -> None:
    master, slave = terminal
    os.write(master, "héllo there\rnot yet".encode())
    _readable(slave)
    assert typed_ahead(slave) == "héllo there\r"
    # What follows the last Enter is read in raw mode, as it comes.
    tty.setraw(slave, termios.TCSANOW)  # as Textual does: what is typed stays
    _readable(slave)
    assert os.read(slave, 100) == b"not yet"


def test_a_terminal_in_raw_mode_or_no_terminal_gives_nothing(terminal: tuple[int, int]) -> None:
    master, slave = terminal
    tty.setraw(slave, termios.TCSANOW)  # as Textual does: what is typed stays
    os.write(master, b"typed\r")
    _readable(slave)
    assert typed_ahead(slave) == ""  # raw mode: the app reads it as typed
    assert os.read(slave, 100) == b"typed\r"
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"piped\n")
        assert typed_ahead(read_end) == ""
    finally:
        os.close(read_end)
        os.close(write_end)


def test_nothing_typed_is_nothing_read(terminal: tuple[int, int]) -> None:
    _master, slave = terminal
    assert typed_ahead(slave) == ""
