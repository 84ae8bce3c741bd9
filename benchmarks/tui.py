"""TUI: start-up to the first painted frame, opening the big conversation, and streaming.

- Start-up runs ``python -m tui_chat --db DB`` in a real pseudo-terminal (120x36) and times
  process start to the first frame that shows the main screen (its footer), with the scale
  database (which opens the 100,000-message conversation, the most recent one) and with an
  empty one. Median of a few starts each. Once the frame is seen the app is killed (its
  write-ahead log checkpointed, as a clean exit leaves the file) rather than quit.
- Opening the big conversation and streaming use Textual's ``run_test`` (headless driver, the
  app's real widgets and compositor). Opening is timed from the call to the first screen
  refresh after it, alternating with a small conversation; widgets are counted after it.
- Streaming: a 10,000-token reply (cl100k tokens; Markdown with lists and code) from
  ``tests/fake_anthropic.py`` in its own process at 500 tokens/s. The finish lag is the time
  from the last text delta reaching the app to the first refresh after the reply's message
  view shows the stored, final message. Keypresses are sent through the driver every 150 ms
  while the reply streams; latency is key sent → the composer's text changed.

The streaming figures find what they observe through public ways in, so that the TUI's
internals can change under them: deltas by wrapping the engine's ``ChatService.send`` (the
call the app makes to stream a reply), the composer as the focused ``TextArea``, the reply's
view as the ``MessageView`` holding its message id.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import math
import os
import pty
import random
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, Options, Row, missing, p50, percentile, row
from benchmarks.datagen import FULL, QUICK, TextMaker, scale_db

GROUP = "tui"
SIZE = (120, 36)
REPLY_TOKENS = 10_000
QUICK_REPLY_TOKENS = 5_000
TOKENS_PER_SECOND = 500
WORDS_PER_CHUNK = 3
KEY_INTERVAL = 0.15
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
    db: Path, home: Path, timeout: float = 30.0, pycache: Path | None = None
) -> tuple[float, float]:
    """Seconds from spawning the app in a pty to its first painted main-screen frame.

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
        [sys.executable, "-m", "tui_chat", "--db", str(db)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
        start_new_session=True,
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


def reply_text(tokens: int = REPLY_TOKENS, seed: int = 3) -> str:
    """A Markdown reply of about ``tokens`` tokens: headings, paragraphs, lists, code."""
    from tui_chat.core.tokens import get_counter

    counter = get_counter()
    maker = TextMaker(random.Random(seed))
    parts: list[str] = []
    total = 0
    section = 0
    while total < tokens:
        section += 1
        block = [f"## Part {section}: {maker.sentence(3, 6).rstrip('.?!')}"]
        block.append(maker.paragraph(4))
        block.append("\n".join(f"- {maker.sentence(5, 12)}" for _ in range(4)))
        if section % 2 == 0:
            block.append(maker.code())
        block.append(maker.paragraph(3))
        text = "\n\n".join(block)
        parts.append(text)
        total = counter.count("\n\n".join(parts))
    return "\n\n".join(parts)


def _start_server(reply: str, chunks_per_second: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "fake_anthropic.py"),
            "--port",
            "0",
            "--chunks-per-second",
            f"{chunks_per_second:.3f}",
            "--words-per-chunk",
            str(WORDS_PER_CHUNK),
            "--reply",
            reply,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        server.kill()
        raise RuntimeError("the fake API server did not start")
    return server, url


class _Recorder:
    """Wraps the engine callback of a send, noting when text deltas arrive."""

    def __init__(self) -> None:
        self.last_delta = 0.0
        self.deltas = 0
        self.finished: Any = None
        """The :class:`~tui_chat.engine.events.ReplyFinished` event, once it came."""
        self.finished_at = 0.0
        """When the engine reported the reply stored."""

    def wrap(self, callback: Callable[[Any], None] | None) -> Callable[[Any], None]:
        """``callback`` with the recording in front of it."""
        from tui_chat.engine.events import ReplyDelta, ReplyFinished

        def record(event: Any) -> None:
            if isinstance(event, ReplyDelta):
                self.last_delta = time.perf_counter()
                self.deltas += 1
            elif isinstance(event, ReplyFinished):
                self.finished = event
                self.finished_at = time.perf_counter()
            if callback is not None:
                callback(event)

        return record


def _spy_sends(service: Any, recorder: _Recorder) -> None:
    """Route every ``ChatService.send`` of this engine through ``recorder``.

    The engine's public ``send(conversation_id, text, on_event)`` is the one thing the app
    must call to stream a reply, whatever its screens and bridges are named.
    """
    send = service.send

    async def spied(
        conversation_id: str, text: str, on_event: Any = None, *args: Any, **kw: Any
    ) -> Any:
        return await send(conversation_id, text, recorder.wrap(on_event), *args, **kw)

    service.send = spied


def _composer(app: Any) -> Any:
    """The composer: the focused text area of the main screen (found by type, not by id)."""
    from textual.widgets import TextArea

    focused = app.focused
    if isinstance(focused, TextArea):
        return focused
    areas = [w for w in app.screen.query(TextArea) if not w.read_only]
    if not areas:
        raise RuntimeError("no editable text area on the main screen")
    return areas[0]


async def _until(done: Callable[[], bool], what: str, timeout: float, step: float) -> None:
    """Wait until ``done()``; a benchmark that cannot see what it waits for fails, not hangs."""
    deadline = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")
        await asyncio.sleep(step)


async def _rendered(app: Any, message_id: int, status: str) -> float:
    """The first refresh after the reply's message view shows its final, stored state."""
    from tui_chat.tui.widgets.message_view import MessageView

    def shown() -> bool:
        views = [v for v in app.screen.query(MessageView) if v.message.id == message_id]
        return bool(views) and views[0].message.status == status

    await _until(shown, "the reply's view showing its stored state", 30, 0.003)
    return await _painted(app)


async def stream_figures(work: Path, tokens: int = REPLY_TOKENS) -> dict[str, Any]:
    """Stream one long reply in the app; returns the finish lag and keypress latencies."""
    from textual import events
    from textual.widgets import TextArea
    from textual.worker import WorkerCancelled

    from tui_chat.config import Config
    from tui_chat.tui.app import ChatApp

    reply = reply_text(tokens)
    words = len(re.findall(r"\s*\S+\s*", reply))
    seconds = tokens / TOKENS_PER_SECOND
    server, url = _start_server(reply, math.ceil(words / WORDS_PER_CHUNK) / seconds)
    db = work / "stream.db"
    config = Config(db_path=db, api_key="sk-ant-bench-0000", base_url=url, max_retries=0)
    app = ChatApp(config, db, cursor_blink=False)
    latencies: list[float] = []
    recorder = _Recorder()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            _spy_sends(app.service, recorder)
            composer = _composer(app)
            changed = asyncio.Event()
            post = composer.post_message

            def spy(message: Any) -> bool:
                if isinstance(message, TextArea.Changed):
                    changed.set()
                return bool(post(message))

            composer.post_message = spy
            composer.text = "Write the full migration guide."
            await pilot.press("enter")
            driver = app._driver
            assert driver is not None
            await _until(lambda: recorder.deltas > 0, "the first reply delta", 30, 0.01)
            deadline = time.perf_counter() + 10 * seconds + 60
            while recorder.finished is None:
                if time.perf_counter() > deadline:
                    raise RuntimeError("the reply did not finish")
                await asyncio.sleep(KEY_INTERVAL)
                if recorder.finished is not None:
                    break
                changed.clear()
                key = events.Key("x", "x")
                key.set_sender(app)
                sent = time.perf_counter()
                driver.send_message(key)
                await asyncio.wait_for(changed.wait(), 30)
                latencies.append((time.perf_counter() - sent) * 1000)
            stored = recorder.finished.message
            rendered = await _rendered(app, stored.id, stored.status)
            complete = stored.status == "complete" and stored.text == reply
            # Let the work the reply set off (list, timeline, gauge) finish before leaving;
            # work the app itself cancelled (a newer gauge count) is not waited for.
            with contextlib.suppress(WorkerCancelled):
                await app.workers.wait_for_complete()
            await pilot.pause()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return {
        "lag_ms": (rendered - recorder.last_delta) * 1000,
        "engine_ms": (recorder.finished_at - recorder.last_delta) * 1000,
        "keys_ms": latencies,
        "deltas": recorder.deltas,
        "complete": complete,
    }


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
        try:
            reply_tokens = QUICK_REPLY_TOKENS if options.quick else REPLY_TOKENS
            streamed = asyncio.run(stream_figures(work, reply_tokens))
        except Exception as exc:  # report, never invent a figure
            rows.append(missing(GROUP, "stream finish lag", "ms", f"failed: {exc}", le=100))
            return rows
        note = f"{reply_tokens:,} tokens at {TOKENS_PER_SECOND} tok/s, {streamed['deltas']} deltas"
        if not streamed["complete"]:
            note += "; the stored reply is NOT complete"
        rows.append(
            row(
                GROUP,
                "stream finish lag after the last token",
                streamed["lag_ms"],
                "ms",
                le=100,
                note=note,
            )
        )
        keys = streamed["keys_ms"]
        rows.append(
            row(
                GROUP,
                "keypress latency while streaming p95",
                percentile(keys, 95),
                "ms",
                le=50,
                note=f"{len(keys)} keys; p50 {p50(keys):.1f} ms, max {max(keys):.1f} ms",
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows
