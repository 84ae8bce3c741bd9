"""The app in a real pseudo-terminal, its output read as a terminal would show it.

:class:`PtyApp` runs ``python -m tui_chat`` on a pty of a given size. A thread reads
everything the app writes, stamping each read with ``time.monotonic()`` (one clock with the
fake server's, which runs in another process) and answering the app's question whether the
terminal supports synchronized output (``DECRQM 2026``) as modern terminals do, so that every
frame arrives between ``ESC[?2026h`` and ``ESC[?2026l``. Keys are written to the pty as a
terminal writes them. Nothing is parsed while the figures are taken: the reads are replayed
afterwards through :class:`TerminalModel`, a ``pyte`` screen (a VT emulator), which yields
what the screen shows at the end of each frame, so "on screen" means what a user sees and
the bench's own parsing never delays the app or the reads.

The thread also samples the scheduler's statistics of the app's threads
(``/proc/PID/task/*/schedstat``: time on a CPU, time waiting for one) at each read and every
few milliseconds, so that the CPU time the app (and its event loop) spent in any window of
wall time is known: what the window needs on a quiet machine, where a busy one stretches it.
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyte

from benchmarks.common import die_with_parent

SYNC_START = b"\x1b[?2026h"
SYNC_END = b"\x1b[?2026l"
_SYNC = re.compile(re.escape(SYNC_START) + b"|" + re.escape(SYNC_END))
ASKS_SYNC = b"\x1b[?2026$p"
"""DECRQM for mode 2026: does the terminal support synchronized output?"""
SYNC_SUPPORTED = b"\x1b[?2026;2$y"
"""DECRPM: mode 2026 is supported (and reset)."""
SAMPLE_EVERY = 0.005
"""Seconds between two samples of the app's scheduler figures when it writes nothing."""
PLACEHOLDER = "Message Claude"
"""The start of the empty composer's placeholder."""


def prioritize(pid: int, nice: int) -> None:
    """Give the session (autogroup) of ``pid`` the nice value ``nice``.

    With autogroups (``kernel.sched_autogroup_enabled``), the scheduler shares the CPUs
    between sessions first, so a process's own nice value does not put it ahead of other
    sessions' work; its session's does. A negative value needs root.

    Raises:
        OSError: Not permitted, or no autogroups on this kernel.
    """
    Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")


def own_session(nice: int) -> None:
    """Put this process in a session of its own and prioritize it (see :func:`prioritize`),
    so that the reader's time stamps do not wait behind the machine's other work either."""
    if os.getsid(0) != os.getpid():
        os.setsid()
    prioritize(os.getpid(), nice)


@dataclass(frozen=True)
class Sched:
    """The app's scheduler figures at one moment (nanoseconds, summed over its threads)."""

    at: float
    run_ns: int
    """Time its threads spent on a CPU."""
    main_ns: int
    """Time its main thread (the event loop: keys, layout, rendering) spent on a CPU."""
    wait_ns: int
    """Time its main thread (the event loop) spent runnable, waiting for a CPU."""


class PtyApp:
    """``python -m MODULE ARGS`` on a pty of ``size`` (columns, rows), its output recorded.

    Args:
        args: Arguments after ``python -m MODULE``.
        env: The environment of the app.
        size: Columns and rows of the terminal.
        cwd: Where the app runs.
        nice: The nice value of the app's session (:func:`prioritize`); ``None``: as started,
            the normal priority a user runs it at.
        module: ``tui_chat``, or the floor (:mod:`benchmarks.floor_app`).
    """

    def __init__(
        self,
        args: list[str],
        env: dict[str, str],
        size: tuple[int, int],
        cwd: Path,
        nice: int | None = None,
        module: str = "tui_chat",
    ):
        self.size = size
        self.reads: list[tuple[float, bytes]] = []
        """Every read of the app's output with the time it was read."""
        self.sched: list[Sched] = []
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        env = dict(env, COLUMNS=str(size[0]), LINES=str(size[1]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        os.close(slave)
        if nice is not None:
            prioritize(self.process.pid, nice)
        self.master = master
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._thread.start()

    def send(self, data: bytes) -> float:
        """Write ``data`` as typed keys; returns when it was written (monotonic)."""
        with self._lock:
            sent = time.monotonic()
            os.write(self.master, data)
        return sent

    def _read(self) -> None:
        tail = b""
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], SAMPLE_EVERY)
            at = time.monotonic()
            if ready:
                try:
                    data = os.read(self.master, 1 << 16)
                except OSError:
                    return
                if not data:
                    return
                self.reads.append((at, data))
                if ASKS_SYNC in tail + data:
                    with self._lock:
                        os.write(self.master, SYNC_SUPPORTED)
                tail = data[-16:]
            sample = self._sample(at)
            if sample is not None:
                self.sched.append(sample)

    def _sample(self, at: float) -> Sched | None:
        pid = self.process.pid
        run = main = wait = 0
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return None
        for task in tasks:
            try:
                fields = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
            except OSError:
                continue
            run += int(fields[0])
            if task == str(pid):
                main, wait = int(fields[0]), int(fields[1])
        return Sched(at, run, main, wait)

    def sched_at(self, at: float) -> Sched | None:
        """The last sample taken at or before ``at``."""
        index = bisect.bisect_right([s.at for s in self.sched], at) - 1
        return self.sched[index] if index >= 0 else None

    def cpu(self, start: float, end: float) -> tuple[float, float]:
        """Milliseconds on a CPU in ``[start, end]``: the app's threads, and its main thread
        (between the first and last samples inside it, about every :data:`SAMPLE_EVERY` s;
        zeros when there are none)."""
        times = [s.at for s in self.sched]
        first = bisect.bisect_left(times, start)
        last = bisect.bisect_right(times, end) - 1
        if first >= last:
            return 0.0, 0.0
        a, b = self.sched[first], self.sched[last]
        return (b.run_ns - a.run_ns) / 1e6, (b.main_ns - a.main_ns) / 1e6

    def alive(self) -> bool:
        """Whether the app is still running."""
        return self.process.poll() is None

    def close(self) -> None:
        """Stop the app (SIGKILL to its process group) and the reader."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._stop.set()
        self._thread.join(timeout=5)
        os.close(self.master)


@dataclass(frozen=True)
class Frame:
    """What the screen showed at the end of one frame (or write outside a frame)."""

    at: float
    composer: str | None
    """The composer's first line (``""`` when it shows its placeholder; ``None``: not found)."""
    chat: tuple[str, ...]
    """The rows of the chat pane above the composer, within its columns."""


class TerminalModel:
    """A ``pyte`` screen fed with the app's output; yields what is shown frame by frame."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.screen = pyte.Screen(*size)
        self.stream = pyte.ByteStream(self.screen)
        self._carry = b""
        self._in_sync = False
        self.frames: list[Frame] = []
        self._fed = 0

    def advance(self, reads: list[tuple[float, bytes]]) -> list[Frame]:
        """Feed the reads not fed yet; returns the frames they completed."""
        new: list[Frame] = []
        while self._fed < len(reads):
            at, data = reads[self._fed]
            self._fed += 1
            new.extend(self._feed(at, data))
        self.frames.extend(new)
        return new

    def _feed(self, at: float, data: bytes) -> Iterator[Frame]:
        data = self._carry + data
        self._carry = b""
        # A sync marker cut by the read waits for its end.
        for keep in range(min(len(SYNC_START) - 1, len(data)), 0, -1):
            if SYNC_START.startswith(data[-keep:]) or SYNC_END.startswith(data[-keep:]):
                data, self._carry = data[:-keep], data[-keep:]
                break
        position = 0
        for marker in _SYNC.finditer(data):
            self.stream.feed(data[position : marker.end()])
            position = marker.end()
            if marker.group() == SYNC_START:
                self._in_sync = True
            else:
                self._in_sync = False
                yield self._frame(at)
        rest = data[position:]
        if rest:
            self.stream.feed(rest)
            if not self._in_sync:
                yield self._frame(at)

    def _frame(self, at: float) -> Frame:
        lines = self.screen.display
        composer: str | None = None
        chat: tuple[str, ...] = ()
        for y in range(len(lines) - 2, 0, -1):
            left = lines[y].rfind("╭─")
            if left < 0:
                continue
            right = lines[y].find("╮", left)
            right = right if right > 0 else len(lines[y])
            text = lines[y + 1][left + 1 : right].strip()
            composer = "" if text.startswith(PLACEHOLDER) else text
            chat = tuple(line[left : right + 1] for line in lines[1:y])
            break
        return Frame(at, composer, chat)

    def text(self) -> str:
        """The whole screen now, one line a row (trailing blanks removed)."""
        return "\n".join(line.rstrip() for line in self.screen.display)
