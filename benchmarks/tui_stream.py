"""Streaming a long reply, measured through a real terminal (see :mod:`benchmarks.terminal`).

``tui-chat`` (``python -m tui_chat``) runs on a pty against ``tests/fakes/fake_anthropic.py`` in its
own process, streaming a Markdown reply of ``tokens`` cl100k tokens at 500 tokens/s, 3 words
a delta. What the terminal receives is replayed through a VT emulator (``pyte``) afterwards;
every figure is read off what the emulated screen shows at the end of each frame.

- Keypress → echo: while the reply streams, keys are written to the pty every
  :data:`KEY_INTERVAL` (25 keys/s, faster than anyone types; a key does not wait for the echo
  of the one before): words of :data:`WORD` random letters, each followed by ``ctrl+l``
  (clear the composer), so that every state of the composer's line is new. A key's echo is
  the end of the first frame whose composer line shows the state after it (or a later one:
  two keys drawn in one frame are both echoed by it). A key never shown is counted lost.
- The same keys with nothing streaming (the app idle, the long reply on screen) are the
  baseline, measured in the same run.
- Last token → settled: from the fake server writing the last text delta (``time.monotonic``,
  one clock with the reader's) to the last frame, within :data:`OBSERVE` seconds, that
  changes the chat pane above the composer (the reply's end drawn, its final render and any
  reflow after it). The same for a short reply (about 40 words) is its baseline.
- What it would be on a quiet machine: the CPU time the app's event loop (its main thread)
  ran in each window, from the scheduler's figures (a loaded machine stretches the wall time
  of a window by the time the loop waits for a CPU, not the CPU time it needs).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import string
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, die_with_parent, p50, percentile
from benchmarks.datagen import TextMaker
from benchmarks.terminal import Frame, PtyApp, TerminalModel, own_session, prioritize

TOKENS_PER_SECOND = 500
WORDS_PER_CHUNK = 3
KEY_INTERVAL = 0.04
"""Seconds between two keys (25 keys a second)."""
WORD = 24
"""Letters typed before each ``ctrl+l``."""
IDLE_KEYS = 125
OBSERVE = 2.5
"""Seconds the screen is watched after a last token for the frames that change the chat."""
SENTINEL = "zqxfinalword"
"""The long reply's last word: its frame shows the reply's end."""
SHORT_SENTINEL = "zqxshortword"
"""The short reply's last word. Not the long one's: the short reply is still in the app's
output (repainted) while the long one streams, so a shared word would be found there at once
and the long reply's end taken mid-stream (session 5's 0.9-1.5 s "settle" of a 10,000-token
reply was the rest of its stream)."""
PROMPT = "Write the full migration guide."


def reply_text(tokens: int, seed: int = 3) -> str:
    """A Markdown reply of about ``tokens`` tokens (headings, paragraphs, lists, code) ending
    with :data:`SENTINEL`."""
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
    return "\n\n".join(parts) + f"\n\nThat is the whole guide, {SENTINEL}"


def short_reply() -> str:
    """About 40 words, ending with :data:`SHORT_SENTINEL`."""
    maker = TextMaker(random.Random(5))
    return f"{maker.paragraph(3)} {SHORT_SENTINEL}"


def app_env(home: Path, url: str, **more: str) -> dict[str, str]:
    """The environment an app under test runs in: this one's without its API and Textual
    settings, a colour terminal, its own home and the local server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TEXTUAL"))}
    env.update(
        TERM="xterm-256color",
        COLORTERM="truecolor",
        TUI_CHAT_HOME=str(home),
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="sk-ant-bench-0000",
        **more,
    )
    return env


def start_server(
    reply: str, chunks_per_second: float, nice: int | None = None
) -> tuple[subprocess.Popen[str], str]:
    """The fake API in its own process (and session), answering every chat request with
    ``reply``; ``nice``: its session's nice value (see :func:`benchmarks.terminal.prioritize`)."""
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "fakes" / "fake_anthropic.py"),
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
        start_new_session=True,
        preexec_fn=die_with_parent,
    )
    if nice is not None:
        prioritize(server.pid, nice)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        server.kill()
        raise RuntimeError("the fake API server did not start")
    return server, url


def _streams(url: str) -> list[dict[str, Any]]:
    """The streamed chat requests the server received, oldest first."""
    with urllib.request.urlopen(f"{url}/_fake/requests", timeout=10) as answer:
        requests: list[dict[str, Any]] = json.load(answer)
    return [
        r
        for r in requests
        if r["path"] == "/v1/messages" and isinstance(r["body"], dict) and r["body"].get("stream")
    ]


def _push(url: str, behaviour: dict[str, Any]) -> None:
    request = urllib.request.Request(
        f"{url}/_fake/push",
        data=json.dumps(behaviour).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10):
        pass


def _wait(done: Callable[[], bool], what: str, timeout: float, step: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(step)


def key_plan(count: int, seed: int) -> list[tuple[bytes, str]]:
    """``count`` keys to write and the composer's line after each."""
    rng = random.Random(seed)
    plan: list[tuple[bytes, str]] = []
    state = ""
    while len(plan) < count:
        for _ in range(WORD):
            letter = rng.choice(string.ascii_lowercase)
            state += letter
            plan.append((letter.encode(), state))
        plan.append((b"\x0c", ""))
        state = ""
    return plan[:count]


@dataclass
class Keys:
    """Keys written in one phase: when, and the composer's line after each."""

    sent: list[float] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    start: float = 0.0
    end: float = 0.0


def _type(app: PtyApp, plan: list[tuple[bytes, str]]) -> Keys:
    keys = Keys(start=time.monotonic())
    for index, (data, state) in enumerate(plan):
        delay = keys.start + index * KEY_INTERVAL - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        keys.sent.append(app.send(data))
        keys.states.append(state)
    keys.end = time.monotonic()
    return keys


def echoes(keys: Keys, frames: list[Frame], until: float) -> list[float | None]:
    """For each key, the time of the first frame showing its state or a later one (``None``:
    never shown before ``until``)."""
    shown: list[float | None] = [None] * len(keys.sent)
    acked = -1
    for frame in frames:
        if frame.at < keys.start or frame.composer is None:
            continue
        if frame.at > until:
            break
        for j in range(acked + 1, len(keys.sent)):
            if keys.sent[j] > frame.at:
                break
            if keys.states[j] == frame.composer:
                for i in range(acked + 1, j + 1):
                    shown[i] = frame.at
                acked = j
                break
    return shown


@dataclass
class KeyFigures:
    """Keypress → echo over one phase (ms)."""

    latencies: list[float]
    quiet: list[float]
    """The CPU time the app's event loop ran in each key's window (what the window needs
    when the loop does not wait for a CPU)."""
    lost: int

    @property
    def p95(self) -> float:
        return percentile(self.latencies, 95)

    def note(self) -> str:
        if not self.latencies:
            return "no key echoed"
        return (
            f"{len(self.latencies)} keys at {1 / KEY_INTERVAL:.0f}/s, {self.lost} lost; "
            f"p50 {p50(self.latencies):.1f} ms, max {max(self.latencies):.1f} ms; "
            f"event loop's CPU time in the window p95 {percentile(self.quiet, 95):.1f} ms"
        )


def key_figures(app: PtyApp, keys: Keys, frames: list[Frame], until: float) -> KeyFigures:
    """Latencies of the keys whose state differs from the one before (the others change
    nothing a user could see)."""
    latencies: list[float] = []
    quiet: list[float] = []
    lost = 0
    previous: str | None = None
    for sent, state, echo in zip(keys.sent, keys.states, echoes(keys, frames, until), strict=True):
        changes = state != previous
        previous = state
        if not changes:
            continue
        if echo is None:
            lost += 1
            continue
        latencies.append((echo - sent) * 1000)
        quiet.append(app.cpu(sent, echo)[1])
    return KeyFigures(latencies, quiet, lost)


@dataclass
class Finish:
    """Last token → settled on screen (ms)."""

    shown_ms: float
    """To the first frame showing the reply's last word."""
    settled_ms: float
    """To the last frame within :data:`OBSERVE` s that changed the chat pane."""
    quiet_ms: float
    """The CPU time the app's event loop ran in that window."""
    cpu_ms: float
    """The CPU time of all the app's threads in it."""

    def note(self) -> str:
        return (
            f"last word drawn after {self.shown_ms:.0f} ms; the event loop's CPU time in it "
            f"{self.quiet_ms:.0f} ms (all threads {self.cpu_ms:.0f} ms)"
        )


def finish_figures(app: PtyApp, frames: list[Frame], last: float, word: str = SENTINEL) -> Finish:
    """When the reply whose last delta (ending with ``word``) was written at ``last`` settled
    on screen: the last frame changing the chat pane up to :data:`OBSERVE` s after its last
    word was drawn."""
    shown = settled = math.nan
    previous: tuple[str, ...] | None = None
    for frame in frames:
        if not math.isnan(shown) and frame.at > shown + OBSERVE:
            break
        if frame.at >= last and frame.chat != previous and previous is not None:
            settled = frame.at
        if frame.at >= last and math.isnan(shown) and any(word in r for r in frame.chat):
            shown = frame.at
        previous = frame.chat
    if math.isnan(shown):
        raise RuntimeError("the reply's last word was never shown")
    settled = shown if math.isnan(settled) else max(settled, shown)
    cpu, loop = app.cpu(last, settled)
    return Finish((shown - last) * 1000, (settled - last) * 1000, loop, cpu)


@dataclass
class SizeFigures:
    """Every figure at one terminal size."""

    size: tuple[int, int]
    streaming: KeyFigures
    idle: KeyFigures
    finish: Finish
    short: Finish
    load: tuple[float, float]
    """The 1-minute load average before and after."""
    deltas: int
    app_cpu_share: float
    """The app's CPU time over the stream divided by its wall time."""


def _exchange(app: PtyApp, model: TerminalModel, url: str, prompt: str) -> int:
    """Send ``prompt`` (typed at once, Enter on its own) once the composer is cleared; returns
    the index of its reply among the server's streamed requests."""
    count = len(_streams(url))
    app.send(b"\x0c")
    _wait(_composer_shows(app, model, ""), "the cleared composer", 30)
    app.send(prompt.encode())
    _wait(_composer_shows(app, model, prompt), "the prompt's echo", 30)
    app.send(b"\r")
    _wait(lambda: len(_streams(url)) > count, "the reply's request", 120, 0.05)
    return count


def _settle(
    app: PtyApp, url: str, index: int, first_read: int, timeout: float, last_word: str
) -> float:
    """Wait for reply ``index``'s last word (``last_word``, in no other reply) in the app's
    output, then :data:`OBSERVE` s more; returns when the server wrote the reply's last delta
    (before the app could draw it)."""
    word = last_word.encode()

    def drawn() -> bool:
        return word in b"".join(d for _, d in app.reads[first_read:])

    _wait(drawn, "its last word", timeout, 0.1)
    time.sleep(OBSERVE)
    last: float = _streams(url)[index]["last_delta_at"]
    return last


def _composer_shows(app: PtyApp, model: TerminalModel, text: str) -> Callable[[], bool]:
    def check() -> bool:
        model.advance(app.reads)
        if not app.alive():
            raise RuntimeError(f"the app ended: {model.text()[-400:]!r}")
        return bool(model.frames) and model.frames[-1].composer == text

    return check


def measure(
    work: Path,
    size: tuple[int, int],
    tokens: int,
    pycache: Path,
    nice: int | None = None,
    module: str = "tui_chat",
) -> SizeFigures:
    """A short reply first (the finish lag's baseline; the app's first send), then the long
    one with keys typed while it streams, then the same keys with the app idle.

    ``nice``: run the app, the fake server and this process each in a session of its own
    with that nice value (root; :func:`benchmarks.terminal.prioritize`). A negative value puts
    them ahead of the machine's other work: the figures a quiet machine would give.
    ``module``: ``tui_chat``, or the floor app (:mod:`benchmarks.floor_app`), measured alike."""
    if nice is not None:
        own_session(nice)
    load_before = os.getloadavg()[0]
    reply = reply_text(tokens)
    words = len(re.findall(r"\s*\S+\s*", reply))
    seconds = tokens / TOKENS_PER_SECOND
    server, url = start_server(reply, math.ceil(words / WORDS_PER_CHUNK) / seconds, nice)
    run = f"stream-{module}-{size[0]}x{size[1]}" + ("" if nice is None else f"-nice{nice}")
    db = work / f"{run}.db"  # a fresh database and home: no draft left by an earlier run
    home = work / f"{run}-home"
    home.mkdir()
    env = app_env(home, url, PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    app = PtyApp(["--db", str(db)], env, size, ROOT, nice, module)
    model = TerminalModel(size)
    try:
        _wait(_composer_shows(app, model, ""), "the main screen", 60)
        _push(url, {"text": short_reply(), "target": "chat"})
        reads = len(app.reads)
        short = _exchange(app, model, url, "Briefly, please.")
        short_last = _settle(app, url, short, reads, 60, SHORT_SENTINEL)
        reads = len(app.reads)
        index = _exchange(app, model, url, PROMPT)
        sched_start = app.sched[-1] if app.sched else None
        if os.environ.get("TUI_BENCH_DEBUG"):  # for a profiler: the app's pid, now streaming
            Path(os.environ["TUI_BENCH_DEBUG"] + ".pid").write_text(str(app.process.pid))
        count = max(100, int((seconds - 1.5) / KEY_INTERVAL))
        streaming = _type(app, key_plan(count, seed=1))
        last = _settle(app, url, index, reads, 10 * seconds + 60, SENTINEL)
        sched_end = app.sched_at(last)
        idle = _type(app, [(b"\x0c", ""), *key_plan(IDLE_KEYS - 1, seed=2)])
        with contextlib.suppress(RuntimeError):  # a key never shown is counted lost
            _wait(_composer_shows(app, model, idle.states[-1]), "the last key's echo", 30)
        time.sleep(0.5)
        model.advance(app.reads)
        frames = model.frames
        if os.environ.get("TUI_BENCH_DEBUG"):
            import pickle

            Path(os.environ["TUI_BENCH_DEBUG"]).write_bytes(
                pickle.dumps((frames, last, short_last, streaming, idle))
            )
        share = math.nan
        if sched_start is not None and sched_end is not None:
            share = (sched_end.run_ns - sched_start.run_ns) / 1e9 / (sched_end.at - sched_start.at)
        return SizeFigures(
            size=size,
            streaming=key_figures(app, streaming, frames, idle.start),
            idle=key_figures(app, idle, frames, math.inf),
            finish=finish_figures(app, frames, last),
            short=finish_figures(app, frames, short_last, SHORT_SENTINEL),
            load=(load_before, os.getloadavg()[0]),
            deltas=math.ceil(words / WORDS_PER_CHUNK),
            app_cpu_share=share,
        )
    finally:
        app.close()
        server.terminate()
        server.wait(timeout=10)
