"""The terminal watch wakes on the hang-up itself, not at its next check.

It checked the terminal every quarter of a second; a stop by signal has two seconds in all,
so the watch now waits on the terminal (``poll``) and a hang-up ends the wait at once. Here
the check interval is made longer than the test's wait: only a watch woken by the hang-up
sends SIGHUP in time.
"""

from __future__ import annotations

import os
import pty
import signal
import threading

import pytest

from tui_chat.tui import terminal_watch
from tui_chat.tui.terminal_watch import TerminalWatch

WAIT = 30.0
"""Generous bound for the watch to react (a loaded machine)."""


def test_a_hang_up_wakes_the_watch_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[int] = []
    got = threading.Event()

    def kill(pid: int, signum: int) -> None:
        assert pid == os.getpid()
        sent.append(signum)
        got.set()

    monkeypatch.setattr(terminal_watch.os, "kill", kill)
    monkeypatch.setattr(terminal_watch, "hard_deadline", lambda code: None)
    master, slave = pty.openpty()
    watch = TerminalWatch([slave], poll=WAIT * 10)
    try:
        watch.start()
        assert not watch.lost()
        os.close(master)
        assert got.wait(WAIT), "the watch did not see the hang-up"
    finally:
        watch.stop()
        os.close(slave)
    assert sent == [signal.SIGHUP]


def test_input_waiting_is_no_hang_up() -> None:
    master, slave = pty.openpty()
    try:
        os.write(master, b"typed\n")
        assert not TerminalWatch([slave]).lost()
        os.close(master)
        assert TerminalWatch([slave]).lost()
    finally:
        os.close(slave)
