"""Speed a user feels, at normal priority, as ratios to the floor app measured in the same run.

Users run ``tui-chat`` at normal priority beside other work, so nothing here is prioritized:
the app and the floor (:mod:`benchmarks.floor_app`: a minimal Textual app drawing a similar
screen, the same database and the same server) are started the same way, on the same pty
size, in the same rounds, and each figure is reported as the app's value over the floor's.
A loaded machine stretches both; the ratio is the figure, the milliseconds and the load are
printed beside it.

- First frame: process start to the first frame showing the footer, for an empty database
  and one conversation of 1,000, 100,000 and 200,000 messages (both open the most recent
  conversation); floor and app alternate in each round; the median of each.
- Keys and the settle (:func:`benchmarks.tui_stream.measure`): keypress → echo with the app
  idle and while a long reply streams (about 7,500 words), last token → settled for a short
  reply and for the long one, at 120x36. The app's keys while streaming are compared with the
  floor's idle keys (the floor's own streaming, Textual's ``MarkdownStream``, is printed too).

Run alone::

    python -m benchmarks.feel [--rounds 5] [--sizes 0,1000,100000,200000] [--tokens 10000]
                              [--skip-stream] [--skip-start]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks import exports, tui_stream
from benchmarks.common import Options, Row, p50, row
from benchmarks.tui import first_frame

GROUP = "feel"
FLOOR = "benchmarks.floor_app"
APP = "tui_chat"
SIZES = (0, 1_000, 100_000, 200_000)
TOKENS = 10_000
SIZE = (120, 36)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def start_figures(
    data_dir: Path, sizes: tuple[int, ...], rounds: int, say: Callable[[str], None]
) -> list[tuple[int, float, float, str]]:
    """``(messages, app median s, floor median s, load)`` for each history size."""
    results = []
    pycache = data_dir / "pycache"
    work = Path(tempfile.mkdtemp(prefix="feel-", dir=data_dir))
    try:
        home = work / "home"
        home.mkdir()
        for module in (APP, FLOOR):  # untimed: writes the bytecode
            first_frame(work / f"warm-{module}.db", home, pycache=pycache, module=module)
        for size in sizes:
            source = exports.database(data_dir, size) if size else None
            times: dict[str, list[float]] = {APP: [], FLOOR: []}
            for n in range(rounds):
                for module in (FLOOR, APP) if n % 2 else (APP, FLOOR):
                    db = work / f"{module}-{size}-{n}.db"
                    if source is not None:
                        shutil.copyfile(source, db)
                    wall, _cpu = first_frame(db, home, pycache=pycache, module=module)
                    times[module].append(wall)
                    db.unlink(missing_ok=True)
            app, floor = p50(times[APP]), p50(times[FLOOR])
            load = _load()
            say(
                f"first frame, {size:>7,} messages: app {app * 1000:6.0f} ms, floor "
                f"{floor * 1000:6.0f} ms, ratio {app / floor:4.2f} (median of {rounds}; {load})"
            )
            results.append((size, app, floor, load))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def stream_figures(
    data_dir: Path, tokens: int, say: Callable[[str], None]
) -> tuple[tui_stream.SizeFigures, tui_stream.SizeFigures]:
    """The app's and the floor's key and settle figures (floor first, then the app)."""
    work = Path(tempfile.mkdtemp(prefix="feel-stream-", dir=data_dir))
    try:
        pycache = data_dir / "pycache"
        floor = tui_stream.measure(work, SIZE, tokens, pycache, None, FLOOR)
        app = tui_stream.measure(work, SIZE, tokens, pycache, None, APP)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, f in (("floor", floor), ("app", app)):
        say(
            f"{name:>5}: keys idle p95 {f.idle.p95:6.1f} ms ({f.idle.lost} lost), while "
            f"streaming p95 {f.streaming.p95:6.1f} ms ({f.streaming.lost} lost); settled: short "
            f"{f.short.settled_ms:5.0f} ms, {tokens:,} tokens {f.finish.settled_ms:5.0f} ms "
            f"(load {f.load[0]:.1f}-{f.load[1]:.1f})"
        )
    say(
        f"ratios: keys while streaming / floor idle {app.streaming.p95 / floor.idle.p95:.2f} "
        f"(<= 1.5), idle / floor idle {app.idle.p95 / floor.idle.p95:.2f} (<= 1.2), settled "
        f"short {app.short.settled_ms / floor.short.settled_ms:.2f}, long "
        f"{app.finish.settled_ms / floor.finish.settled_ms:.2f} (<= 1.5)"
    )
    return app, floor


def run(options: Options) -> list[Row]:
    """The rows: each figure as the app's over the floor's."""
    rows: list[Row] = []
    sizes = (0, 1_000) if options.quick else SIZES
    for size, app, floor, load in start_figures(
        options.data_dir, sizes, 2 if options.quick else 5, print
    ):
        rows.append(
            row(
                GROUP,
                f"first frame / floor's, {size:,} messages",
                app / floor,
                "x",
                le=1.5,
                note=f"app {app * 1000:.0f} ms, floor {floor * 1000:.0f} ms; {load}",
            )
        )
    tokens = 5_000 if options.quick else TOKENS
    app, floor = stream_figures(options.data_dir, tokens, print)
    load = f"load {app.load[0]:.1f}-{app.load[1]:.1f}"
    pairs = [
        ("keys while streaming p95 / floor's idle p95", app.streaming.p95, floor.idle.p95, 1.5),
        ("keys idle p95 / floor's idle p95", app.idle.p95, floor.idle.p95, 1.2),
        ("settled, short reply / floor's", app.short.settled_ms, floor.short.settled_ms, 1.5),
        (
            f"settled, {tokens:,} tokens / floor's",
            app.finish.settled_ms,
            floor.finish.settled_ms,
            1.5,
        ),
    ]
    for figure, mine, theirs, limit in pairs:
        rows.append(
            row(
                GROUP,
                figure,
                mine / theirs,
                "x",
                le=limit,
                note=f"{mine:.0f} vs {theirs:.0f} ms; {load}",
            )
        )
    return rows


def main() -> None:
    """Print the figures (the command line of this module)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--tokens", type=int, default=TOKENS)
    parser.add_argument("--skip-start", action="store_true")
    parser.add_argument("--skip-stream", action="store_true")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tui-chat-bench")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)

    def say(line: str) -> None:
        print(line, flush=True)

    say(f"normal priority, {_load()}")
    if not args.skip_start:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        start_figures(args.data, sizes, args.rounds, say)
    if not args.skip_stream:
        stream_figures(args.data, args.tokens, say)


if __name__ == "__main__":
    sys.exit(main())
