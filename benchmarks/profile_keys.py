"""What a key and a reply's end call, in ``tui_chat`` and in the floor: ``cProfile`` by CPU time.

``python -m benchmarks.profile_keys [--tokens 4000] [--keys 125] [--top 30]`` runs each app on a
pty (120x36, normal priority) under :mod:`benchmarks.profiled` against the fake server, and
profiles three windows: :data:`~benchmarks.tui_stream.IDLE_KEYS` keys typed with nothing
streaming, a short reply from its ``enter`` to a second after its last word, and a long reply
from its ``enter`` to a second after its last word with keys typed while it streams. For each
window it prints the main thread's CPU time (under the profiler, which slows every call: the
figures are for comparing, not the app's speed) and the functions with the most.
"""

from __future__ import annotations

import argparse
import math
import os
import pstats
import re
import signal
import tempfile
import time
from pathlib import Path

from benchmarks import tui_stream
from benchmarks.common import ROOT
from benchmarks.terminal import PtyApp, TerminalModel

APPS = {"floor": "benchmarks.floor_app", "app": "tui_chat"}


def _toggle(app: PtyApp) -> None:
    os.kill(app.process.pid, signal.SIGUSR1)
    time.sleep(0.05)


def profile(work: Path, module: str, tokens: int, keys: int) -> list[Path]:
    """Run ``module`` through the three windows; returns the three profiles."""
    reply = tui_stream.reply_text(tokens)
    words = len(re.findall(r"\s*\S+\s*", reply))
    seconds = tokens / tui_stream.TOKENS_PER_SECOND
    rate = math.ceil(words / tui_stream.WORDS_PER_CHUNK) / seconds
    server, url = tui_stream.start_server(reply, rate)
    out = work / f"{module}.prof"
    home = work / f"{module}-home"
    home.mkdir()
    env = tui_stream.app_env(home, url, TUI_BENCH_PROFILE=str(out))
    db = work / f"{module}.db"
    app = PtyApp([module, "--db", str(db)], env, (120, 36), ROOT, None, "benchmarks.profiled")
    model = TerminalModel((120, 36))
    try:
        tui_stream._wait(tui_stream._composer_shows(app, model, ""), "the main screen", 60)
        time.sleep(1.5)  # the panels and the warm-up after the first frame
        plan = [(b"\x0c", ""), *tui_stream.key_plan(keys - 1, seed=2)]
        _toggle(app)
        tui_stream._type(app, plan)
        tui_stream._wait(tui_stream._composer_shows(app, model, plan[-1][1]), "the echo", 30)
        _toggle(app)
        tui_stream._push(url, {"text": tui_stream.short_reply(), "target": "chat"})
        for prompt, sentinel, typed in (
            ("Briefly, please.", tui_stream.SHORT_SENTINEL, False),
            (tui_stream.PROMPT, tui_stream.SENTINEL, True),
        ):
            app.send(b"\x0c")
            tui_stream._wait(tui_stream._composer_shows(app, model, ""), "the cleared composer", 30)
            app.send(prompt.encode())
            tui_stream._wait(tui_stream._composer_shows(app, model, prompt), "the prompt", 30)
            reads = len(app.reads)
            _toggle(app)
            app.send(b"\r")
            if typed:
                time.sleep(0.5)
                count = max(50, int((seconds - 1.5) / tui_stream.KEY_INTERVAL))
                tui_stream._type(app, tui_stream.key_plan(count, seed=1))

            def drawn(word: bytes = sentinel.encode(), first: int = reads) -> bool:
                return word in b"".join(d for _, d in app.reads[first:])

            tui_stream._wait(drawn, "the last word", 120)
            time.sleep(1.0)
            _toggle(app)
        time.sleep(0.5)
    finally:
        app.close()
        server.terminate()
        server.wait(timeout=10)
    return [Path(f"{out}.{n}") for n in range(3)]


def main() -> None:
    """Print the profiles (the command line of this module)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4_000)
    parser.add_argument("--keys", type=int, default=tui_stream.IDLE_KEYS)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--only", choices=sorted(APPS))
    parser.add_argument("--keep", type=Path, help="a folder to keep the profiles in")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="profile-keys-"))
    work.mkdir(parents=True, exist_ok=True)
    for name, module in APPS.items():
        if args.only and name != args.only:
            continue
        paths = profile(work, module, args.tokens, args.keys)
        for window, path in zip(
            ("idle keys", "short reply", "long reply, typed"), paths, strict=True
        ):
            stats = pstats.Stats(str(path))
            print(f"== {name}: {window}: {stats.total_tt * 1000:.0f} ms of CPU ({path})")  # type: ignore[attr-defined]
            stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
