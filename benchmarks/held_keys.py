"""Held keys in a 10,000-message conversation, through a real pty, beside the floor app.

``tui-chat`` and the floor (:mod:`benchmarks.floor_app`, started with enough messages mounted
that the keys never reach its top) run on the same pty size at normal priority. Keys are
written at a key repeat rate (:data:`RATE` a second), as a terminal writes a held key:

- ``pageup`` from the end of the chat (the composer has the focus, as after a send);
- ``up`` in the messages (``f5``), one message a press, then ``down`` back over the pages
  the window pruned on the way up.

From the frames (``ESC[?2026h`` … ``l``, replayed through a VT emulator: what a user sees),
for each hold: the **messages a second** scrolled past (the ids in the messages' header lines,
first frame to the settled one), the **keys a second** handled (keys over the time to the
frame that shows the last one), the **longest freeze** (the longest time without a frame
while keys were still owed a frame: keys held, or the view not yet where they lead) and the
lag after the last key. Where a key moves the selection, the landing is checked: after
``n`` presses the highlighted header is the message ``n`` away (a key lost or a page
mounted in the wrong place shows there). The figures are reported as ratios to the floor's.

Run alone::

    python -m benchmarks.held_keys [--size 120x36] [--rounds 1] [--keys 300] [--pages 90]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import ROOT, Options, Row, row
from benchmarks.datagen import ScaleSpec, scale_db
from benchmarks.terminal import PtyApp, TerminalModel

GROUP = "held_keys"
FLOOR = "benchmarks.floor_app"
APP = "tui_chat"
SPEC = ScaleSpec(conversations=2, messages=11_000, big=10_000, medium=1_000, tail=800)
"""The most recent conversation (the one both apps open) holds 10,000 messages."""
RATE = 30.0
"""Keys a second: a usual key repeat rate."""
FLOOR_SHOWN = 700
"""Messages the floor mounts at start (all it ever scrolls through)."""
KEYS = {"pageup": b"\x1b[5~", "pagedown": b"\x1b[6~", "up": b"\x1b[A", "down": b"\x1b[B"}
F5 = b"\x1b[15~"
END = b"\x1b[F"
QUIET = 5.0
"""Seconds without a change of the chat after which it is settled (longer than a freeze)."""
LANDING = 30.0
"""Seconds a selection key's landing is waited for past the last key."""
HEADER = re.compile(r"(?:You|Claude|Tools)\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+#(\d+)")


@dataclass(frozen=True)
class Hold:
    """One held key: what it moved, how fast, and the longest wait for a frame."""

    key: str
    presses: int
    moved: int
    """Messages between the top header before and after (``up``/``down``: the selection)."""
    seconds: float
    """First key to the settled frame."""
    freeze_ms: float
    lag_ms: float
    """Last key to the settled frame."""
    landed: bool | None
    """The highlighted message is the one ``presses`` away (``None``: not a selection key)."""
    cpu_ms: float
    """CPU time of the app's main thread (its event loop) from the first key to the settled
    frame: what the keys cost it, which a loaded machine stretches far less than wall time."""

    @property
    def cpu_per_key_ms(self) -> float:
        """The loop's CPU time a press."""
        return self.cpu_ms / self.presses if self.presses else 0.0

    @property
    def messages_per_s(self) -> float:
        """Messages scrolled past a second."""
        return self.moved / self.seconds if self.seconds else 0.0

    @property
    def keys_per_s(self) -> float:
        """Keys handled a second."""
        return self.presses / self.seconds if self.seconds else 0.0

    def line(self, name: str) -> str:
        """One printed line."""
        landed = "" if self.landed is None else f", landed {'yes' if self.landed else 'NO'}"
        return (
            f"{name:>6} {self.key:>8} x{self.presses}: {self.messages_per_s:6.1f} messages/s, "
            f"{self.keys_per_s:5.1f} keys/s, longest freeze {self.freeze_ms:5.0f} ms, lag after "
            f"the last key {self.lag_ms:5.0f} ms, {self.cpu_per_key_ms:5.1f} ms of CPU a key "
            f"({self.moved} messages in {self.seconds:.2f} s{landed})"
        )


def _chat_rows(lines: list[str]) -> list[int]:
    """The rows above the composer's box (its top border ``╭─``, the lowest one)."""
    for y in range(len(lines) - 2, 0, -1):
        if "╭─" in lines[y]:
            return list(range(1, y))
    return list(range(len(lines)))


def _headers(model: TerminalModel) -> dict[int, str]:
    """The message headers on screen: id → the background of the header's first cell."""
    found: dict[int, str] = {}
    lines = model.screen.display  # rendered at each reading: once
    for y in _chat_rows(lines):
        for match in HEADER.finditer(lines[y]):
            found[int(match.group(1))] = model.screen.buffer[y][match.start()].bg
    return found


def _selected(model: TerminalModel, background: str) -> int | None:
    """The highlighted message: the header drawn on the highlight's ``background``."""
    chosen = [message_id for message_id, bg in _headers(model).items() if bg == background]
    return chosen[0] if len(chosen) == 1 else None


class Watch:
    """Feeds the app's reads to the terminal model one at a time and notes when the chat
    (its rows' text and its headers' highlight) changed: a cursor's blink is no change."""

    def __init__(self, app: PtyApp, model: TerminalModel) -> None:
        self.app = app
        self.model = model
        self.changes: list[float] = []
        self._fed = 0
        self._last: tuple[object, ...] = ()

    def poll(self) -> None:
        """Feed the reads not fed yet."""
        reads = self.app.reads
        while self._fed < len(reads):
            self._fed += 1
            self.model.advance(reads[: self._fed])
            rows = self.model.screen.display
            headers = _headers(self.model)
            signature = (tuple(rows[y] for y in _chat_rows(rows)), tuple(headers.items()))
            if signature != self._last:
                self._last = signature
                self.changes.append(reads[self._fed - 1][0])

    def settle(
        self,
        since: float = 0.0,
        timeout: float = 180.0,
        landed: Callable[[], bool] | None = None,
    ) -> float:
        """Wait until the chat has not changed for :data:`QUIET` s since its last change or
        ``since`` (the last key), whichever is later (and has ``landed``, or
        :data:`LANDING` s have passed); returns the last change's time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.app.alive():
                raise RuntimeError(f"the app ended: {self.model.text()[-400:]!r}")
            self.poll()
            last = self.changes[-1] if self.changes else 0.0
            quiet = time.monotonic() - max(last, since)
            if quiet > QUIET and (landed is None or landed() or quiet > LANDING):
                return last
            time.sleep(0.05)
        raise RuntimeError(f"the chat did not settle within {timeout:.0f} s")


def hold(watch: Watch, key: str, presses: int, background: str = "") -> Hold:
    """Write ``presses`` of ``key`` at :data:`RATE` a second, wait for the chat to settle."""
    app, model = watch.app, watch.model
    watch.settle()
    before = sorted(_headers(model))
    selected = _selected(model, background)
    start = time.monotonic()
    sent = start
    for n in range(presses):
        delay = start + n / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sent = app.send(KEYS[key])
    step = {"up": -1, "down": 1}.get(key, 0)
    expected = None if selected is None else selected + step * presses

    def landed() -> bool:
        return expected is None or _selected(model, background) == expected

    end = watch.settle(since=sent, landed=landed if step else None)
    after = sorted(_headers(model))
    times = [start, *(t for t in watch.changes if t >= start)]
    freeze = max((b - a for a, b in itertools.pairwise(times)), default=0.0)
    landed: bool | None = None
    if key in ("up", "down"):
        now = _selected(model, background)
        moved = abs(now - selected) if now is not None and selected is not None else 0
        landed = expected is not None and now == expected
    else:
        moved = abs(before[0] - after[0]) if before and after else 0
    _threads, main = app.cpu(start, end)
    return Hold(key, presses, moved, end - start, freeze * 1000, (end - sent) * 1000, landed, main)


def measure(
    work: Path,
    db: Path,
    module: str,
    size: tuple[int, int],
    keys: int,
    pages: int,
    source: Path | None = None,
) -> list[Hold]:
    """``pageup`` x ``pages`` from the end, then ``up`` x ``keys`` and ``down`` x ``keys``."""
    run = f"held-{module}-{size[0]}x{size[1]}" + ("-before" if source else "")
    copy = work / f"{run}.db"
    shutil.copyfile(db, copy)
    home = work / f"{run}-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "TEXTUAL"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        TERM="xterm-256color",
        COLORTERM="truecolor",
        TUI_CHAT_HOME=str(home),
        PYTHONPYCACHEPREFIX=str(work.parent / "pycache"),
    )
    if source is not None:  # another copy of the package (``--before``)
        env["PYTHONPATH"] = str(source)
    args = ["--db", str(copy)] + (["--shown", str(FLOOR_SHOWN)] if module == FLOOR else [])
    app = PtyApp(args, env, size, ROOT, None, module)
    watch = Watch(app, TerminalModel(size))
    try:
        deadline = time.monotonic() + 120
        while not _headers(watch.model):  # the first frame with messages
            if time.monotonic() > deadline or not app.alive():
                raise RuntimeError(f"no message on screen: {watch.model.text()[-400:]!r}")
            time.sleep(0.1)
            watch.poll()
        results = [hold(watch, "pageup", pages)]
        app.send(F5)  # the messages have the focus
        watch.settle(since=time.monotonic())
        app.send(END)  # the newest message selected, at the end of the chat
        watch.settle(since=time.monotonic())
        headers = _headers(watch.model)
        background = headers[max(headers)]  # the highlight's
        results.append(hold(watch, "up", keys, background))
        results.append(hold(watch, "down", keys, background))
        return results
    finally:
        app.close()
        copy.unlink(missing_ok=True)


def figures(
    data_dir: Path, size: tuple[int, int], keys: int, pages: int, say: object = print
) -> tuple[list[Hold], list[Hold], tuple[float, float]]:
    """The app's holds, the floor's, and the load before and after."""
    data = scale_db(data_dir, SPEC)
    work = Path(tempfile.mkdtemp(prefix="held-", dir=data_dir))
    load = os.getloadavg()[0]
    try:
        floor = measure(work, data.path, FLOOR, size, keys, pages)
        app = measure(work, data.path, APP, size, keys, pages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return app, floor, (load, os.getloadavg()[0])


def run(options: Options) -> list[Row]:
    """The rows: messages a second and the longest freeze of each held key, with the floor's
    as the ratio's baseline."""
    keys, pages = (90, 45) if options.quick else (300, 90)
    app, floor, load = figures(options.data_dir, (120, 36), keys, pages)
    note = f"120x36, {RATE:.0f} keys/s, load {load[0]:.1f}-{load[1]:.1f} on {os.cpu_count()} CPUs"
    rows: list[Row] = []
    for mine, theirs in zip(app, floor, strict=True):
        landed = "" if mine.landed is None else f"; landed {'yes' if mine.landed else 'NO'}"
        rows.append(
            row(
                GROUP,
                f"held {mine.key}, messages a second (10,000 messages)",
                mine.messages_per_s,
                "msg/s",
                ge=30,
                ratio=mine.messages_per_s / theirs.messages_per_s if theirs.moved else None,
                note=f"floor {theirs.messages_per_s:.1f}; {mine.keys_per_s:.1f} keys/s{landed}"
                f"; {note}",
            )
        )
        rows.append(
            row(
                GROUP,
                f"held {mine.key}, longest freeze",
                mine.freeze_ms,
                "ms",
                le=200,
                ratio=mine.freeze_ms / theirs.freeze_ms if theirs.freeze_ms else None,
                note=f"floor {theirs.freeze_ms:.0f} ms; lag after the last key "
                f"{mine.lag_ms:.0f} ms (floor {theirs.lag_ms:.0f})",
            )
        )
    return rows


def main() -> None:
    """Print the figures (the command line of this module)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="120x36")
    parser.add_argument("--keys", type=int, default=300, help="presses of up, then of down")
    parser.add_argument("--pages", type=int, default=90, help="presses of pageup")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=(APP, FLOOR), default=None)
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a folder holding another tui_chat package (git archive main tui_chat): measured "
        "too, in the same rounds",
    )
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tui-chat-bench")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    columns, lines = (int(n) for n in args.size.split("x"))
    data = scale_db(args.data, SPEC)
    for n in range(args.rounds):
        one, five, _ = os.getloadavg()
        print(f"round {n + 1}, {args.size}, load {one:.1f} (5 min {five:.1f})", flush=True)
        work = Path(tempfile.mkdtemp(prefix="held-", dir=args.data))
        try:
            modules = (args.only,) if args.only else (FLOOR, APP) if n % 2 == 0 else (APP, FLOOR)
            results = {
                m: measure(work, data.path, m, (columns, lines), args.keys, args.pages)
                for m in modules
            }
            if args.before is not None:
                results["before"] = measure(
                    work, data.path, APP, (columns, lines), args.keys, args.pages, args.before
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for module, holds in results.items():
            for one_hold in holds:
                print(one_hold.line({APP: "app", FLOOR: "floor"}.get(module, module)), flush=True)
        if APP in results and FLOOR in results:
            for mine, theirs in zip(results[APP], results[FLOOR], strict=True):
                speed = mine.messages_per_s / theirs.messages_per_s if theirs.moved else 0.0
                freeze = mine.freeze_ms / theirs.freeze_ms if theirs.freeze_ms else 0.0
                print(
                    f"ratios {mine.key:>8}: messages/s {speed:.2f} of the floor's, longest "
                    f"freeze {freeze:.2f}x the floor's, CPU a key {mine.cpu_per_key_ms:.1f} vs "
                    f"{theirs.cpu_per_key_ms:.1f} ms",
                    flush=True,
                )
        if APP in results and "before" in results:
            for mine, theirs in zip(results[APP], results["before"], strict=True):
                print(
                    f"after/before {mine.key:>8}: messages/s {mine.messages_per_s:.1f} vs "
                    f"{theirs.messages_per_s:.1f}, longest freeze {mine.freeze_ms:.0f} vs "
                    f"{theirs.freeze_ms:.0f} ms, CPU a key {mine.cpu_per_key_ms:.1f} vs "
                    f"{theirs.cpu_per_key_ms:.1f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    sys.exit(main())
