"""The TUI process ends after the app quits even when a thread left behind never ends (Textual's
input thread reading a dead terminal), and waits for threads that do end."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # real processes


def _run(body: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        """
        import threading, time
        from tui_chat.tui import leave_if_stuck
        """
    ) + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )


def test_a_thread_that_never_ends_does_not_keep_the_process_alive() -> None:
    done = _run(
        """
        stop = threading.Event()
        threading.Thread(target=stop.wait, name="stuck-input").start()  # never set
        print("quit", flush=False)
        leave_if_stuck(7, wait=0.2)
        print("not reached")
        """
    )
    assert done.returncode == 7
    assert done.stdout == "quit\n"  # flushed before leaving; nothing ran after


def test_threads_that_end_are_waited_for_and_nothing_is_cut_short() -> None:
    done = _run(
        """
        out = []
        worker = threading.Thread(target=lambda: (time.sleep(0.3), out.append("stored")))
        worker.start()
        leave_if_stuck(0, wait=30)
        print(out, worker.is_alive())
        """
    )
    assert done.returncode == 0
    assert done.stdout == "['stored'] False\n"
