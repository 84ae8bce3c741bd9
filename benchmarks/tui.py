"""TUI: start-up to the first painted frame, opening the big conversation, and streaming.

- Start-up runs ``python -m tui_chat --db DB`` in a real pseudo-terminal (120x36) and times
  process start to the first frame that shows the main screen (its footer), with the scale
  database (which opens the 100,000-message conversation, the most recent one) and with an
  empty one. Median of a few starts each. Once the frame is seen the app is killed (its
  write-ahead log checkpointed, as a clean exit leaves the file) rather than quit.
- Opening the big conversation uses Textual's ``run_test`` (headless driver, the app's real
  widgets and compositor), timed from the call to the first screen refresh after it,
  alternating with a small conversation; widgets are counted after it.
- Streaming goes through a real terminal again (:mod:`benchmarks.tui_stream`): ``tui-chat``
  on a pty against the fake server in its own process, its output replayed through a VT
  emulator, keys written to the pty: keypress → echo while a long reply streams (the same
  keys with the app idle are the baseline) and last token → settled on screen (a short
  reply's is the baseline), at 120x36 (and 80x24, 200x50 in a full run).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import math
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

from benchmarks import tui_stream
from benchmarks.common import ROOT, Options, Row, die_with_parent, missing, p50, row
from benchmarks.datagen import FULL, QUICK, scale_db

GROUP = "tui"
SIZE = (120, 36)
PRIORITY = -15
"""Nice value of the app's session for the figures of a quiet machine (see
:func:`benchmarks.terminal.prioritize`)."""
REPLY_TOKENS = 10_000
QUICK_REPLY_TOKENS = 5_000
_ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")
FRAME_MARKER = "Help"
"""Text of the main screen's footer (``f1 Help``): its first appearance is the first frame."""


# -- start-up in a pseudo-terminal ---------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used (Linux ``/proc``; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_frame(
    db: Path,
    home: Path,
    timeout: float = 30.0,
    pycache: Path | None = None,
    module: str = "tui_chat",
) -> tuple[float, float]:
    """Seconds from spawning the app (``python -m MODULE --db DB``: ``tui_chat`` or the floor,
    :mod:`benchmarks.floor_app`) in a pty to its first painted main-screen frame.

    ``pycache``: where the app's compiled bytecode is kept (``PYTHONPYCACHEPREFIX``), written
    even when this shell says ``PYTHONDONTWRITEBYTECODE``: an installed copy has its bytecode,
    and compiling every module from source on each start is not what a user waits for.

    Returns:
        ``(wall, cpu)``: the wall time, and the CPU time the app's process had used by then
        (which a busy machine inflates much less than the wall time).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(TERM="xterm-256color", TUI_CHAT_HOME=str(home), COLUMNS="120", LINES="36")
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--db", str(db)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=die_with_parent,
    )
    os.close(slave)
    seen = b""
    elapsed: float | None = None
    try:
        while time.perf_counter() - started < timeout:
            ready, _, _ = select.select([master], [], [], 0.01)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                seen += os.read(master, 1 << 16)
            except OSError:
                break
            if FRAME_MARKER in _ANSI.sub(b"", seen).decode("utf-8", "replace"):
                elapsed = time.perf_counter() - started
                cpu = _cpu_seconds(process.pid)
                break
    finally:
        # The figure is taken: stop the app at once (an orderly quit took about a second per
        # start and measures nothing), then settle its database as a clean exit leaves it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        _drain(master)
        os.close(master)
        _checkpoint(db)
    if elapsed is None:
        tail = _ANSI.sub(b"", seen).decode("utf-8", "replace")[-300:]
        raise RuntimeError(f"no frame within {timeout:.0f} s: {tail!r}")
    return elapsed, cpu


def _checkpoint(db: Path) -> None:
    """Move a killed app's write-ahead log into ``db`` and remove it, as the last connection of
    a clean exit does: the next start finds the same files an orderly quit leaves."""
    if not db.exists():
        return
    connection = sqlite3.connect(db)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while select.select([fd], [], [], 0)[0]:
            if not os.read(fd, 1 << 16):
                break


# -- in-process (run_test) helpers -----------------------------------------------------------


async def _painted(app: Any) -> float:
    """The time of the next screen refresh."""
    done: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    def note() -> None:
        if not done.done():
            done.set_result(time.perf_counter())

    app.call_after_refresh(note)
    return await done


async def open_figures(db: Path, small_id: str, big_id: str, runs: int) -> tuple[list[float], int]:
    """Times (ms) to open the big conversation, and message widgets mounted after it."""
    from tui_chat.config import Config
    from tui_chat.tui.app import ChatApp
    from tui_chat.tui.widgets.message_view import MessageView

    app = ChatApp(Config(db_path=db, api_key=None), db, small_id, cursor_blink=False)
    samples: list[float] = []
    mounted = 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(runs):
            await app.main_screen.open_conversation(small_id)
            await _painted(app)
            await pilot.pause()
            started = time.perf_counter()
            await app.main_screen.open_conversation(big_id)
            painted = await _painted(app)
            samples.append((painted - started) * 1000)
            mounted = len(list(app.query(MessageView)))
    return samples, mounted


def run(options: Options) -> list[Row]:
    """Every TUI figure."""
    spec = QUICK if options.quick else FULL
    data = scale_db(options.data_dir, spec)
    rows: list[Row] = []
    starts = 2 if options.quick else 5
    work = Path(tempfile.mkdtemp(prefix="tui-bench-", dir=options.data_dir))
    try:
        home = work / "home"
        home.mkdir()
        db = work / "big.db"
        shutil.copyfile(data.path, db)
        pycache = options.data_dir / "pycache"
        first_frame(work / "warm-up.db", home, pycache=pycache)  # untimed: writes the bytecode
        empty_runs = [
            first_frame(work / f"empty-{i}.db", home, pycache=pycache) for i in range(starts)
        ]
        big_runs = [first_frame(db, home, pycache=pycache) for _ in range(starts)]
        empty = [wall for wall, _ in empty_runs]
        big = [wall for wall, _ in big_runs]
        base = p50(empty)
        cpu_empty = p50([cpu for _, cpu in empty_runs])
        cpu_big = p50([cpu for _, cpu in big_runs])
        rows.append(
            row(
                GROUP,
                "start to first frame, empty database (baseline)",
                base,
                "s",
                le=0.8,
                note=(
                    f"median of {starts} starts in a pty after an untimed one (bytecode "
                    f"cached, as installed); CPU time {cpu_empty:.2f} s"
                ),
            )
        )
        rows.append(
            row(
                GROUP,
                f"start to first frame, {spec.messages:,}-message database",
                p50(big),
                "s",
                le=1.0,
                ratio=p50(big) / base,
                note=f"opens the {spec.big:,}-message one; CPU time {cpu_big:.2f} s",
            )
        )

        samples, mounted = asyncio.run(
            open_figures(db, data.small_id, data.big_id, 3 if options.quick else 10)
        )
        rows.append(
            row(
                GROUP,
                f"open the {spec.big:,}-message conversation p50",
                p50(samples),
                "ms",
                le=300,
                note=f"run_test, to the first refresh after it; max {max(samples):.0f} ms",
            )
        )
        rows.append(
            row(GROUP, "message widgets mounted after opening it", mounted, "widgets", le=200)
        )
        reply_tokens = QUICK_REPLY_TOKENS if options.quick else REPLY_TOKENS
        sizes = [SIZE] if options.quick else [SIZE, (80, 24), (200, 50)]
        # As the machine is, then with the app's session ahead of the other work (root, last:
        # this process stays prioritized): what a quiet machine would show.
        for nice in (None, PRIORITY):
            for size in sizes:
                rows.extend(_streamed(work, size, reply_tokens, pycache, nice))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def _streamed(
    work: Path, size: tuple[int, int], tokens: int, pycache: Path, nice: int | None
) -> list[Row]:
    label = f"{size[0]}x{size[1]}" + ("" if nice is None else f", prioritized (nice {nice})")
    if nice is not None and os.geteuid() != 0:
        why = "prioritizing the app's session needs root"
        return [missing(GROUP, f"pty last token -> settled, {label}", "ms", why)]
    try:
        figures = tui_stream.measure(work, size, tokens, pycache, nice)
    except Exception as exc:  # report, never invent a figure
        return [missing(GROUP, f"pty last token -> settled, {label}", "ms", f"failed: {exc}")]
    return stream_rows(figures, tokens, label)


def stream_rows(figures: tui_stream.SizeFigures, tokens: int, size: str) -> list[Row]:
    """The rows of one terminal size (``size`` labels them): keys idle (baseline) and while
    streaming, a short reply's finish (baseline) and the long one's."""
    load = f"load {figures.load[0]:.1f}-{figures.load[1]:.1f} on {os.cpu_count()} CPUs"
    idle, streaming = figures.idle, figures.streaming
    short, finish = figures.short, figures.finish
    stream = f"{tokens:,} tokens at {tui_stream.TOKENS_PER_SECOND} tok/s, {figures.deltas} deltas"
    share = f"the app used {figures.app_cpu_share:.0%} of a CPU while it streamed"
    return [
        row(
            GROUP,
            f"pty keypress -> echo p95, idle, {size} (baseline)",
            idle.p95,
            "ms",
            note=f"{idle.note()}; {load}",
        ),
        row(
            GROUP,
            f"pty keypress -> echo p95 while streaming, {size}",
            streaming.p95,
            "ms",
            le=30,
            ratio=streaming.p95 / idle.p95,
            note=f"{streaming.note()}; {stream}; {share}; {load}",
        ),
        row(
            GROUP,
            f"pty last token -> settled, short reply, {size} (baseline)",
            short.settled_ms,
            "ms",
            note=short.note(),
        ),
        row(
            GROUP,
            f"pty last token -> settled on screen, {size}",
            finish.settled_ms,
            "ms",
            le=100,
            ratio=finish.settled_ms / short.settled_ms,
            note=f"{finish.note()}; {stream}",
        ),
    ]
