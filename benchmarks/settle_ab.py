"""Last token → settled: the floor, a copy of main and this checkout, rotating in one run.

``python -m benchmarks.settle_ab --before DIR [--tokens 10000] [--rounds 2]`` runs
:func:`benchmarks.tui_stream.measure` (120x36, normal priority) for the floor app, the copy of
the app in ``DIR`` (``git archive main | tar -x -C DIR``) and this checkout, in turn, the order
reversed every other round, each in a process of its own started in that checkout's root (so
``python -m tui_chat`` runs that copy). Per run it prints the short and the long reply's last
token → settled (ms) with the event loop's CPU time in that window, the load, and the keys'
p95 while streaming; then the short reply's settle over the floor's of the same round.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT

ONE = r"""
import json, sys, tempfile
from pathlib import Path
from benchmarks import tui_stream
work = Path(tempfile.mkdtemp(prefix="settle-ab-"))
f = tui_stream.measure(work, (120, 36), int(sys.argv[1]), work / "pyc", module=sys.argv[2])
print("RESULT " + json.dumps({
    "short": [f.short.settled_ms, f.short.quiet_ms],
    "long": [f.finish.settled_ms, f.finish.quiet_ms],
    "load": f.load, "keys_p95": f.streaming.p95, "lost": f.streaming.lost,
    "idle_p95": f.idle.p95, "idle_lost": f.idle.lost,
    "idle_loop": [tui_stream.p50(f.idle.quiet), tui_stream.percentile(f.idle.quiet, 95)],
    "keys_loop": [tui_stream.p50(f.streaming.quiet),
                  tui_stream.percentile(f.streaming.quiet, 95)]}))
"""


def one(root: Path, module: str, tokens: int) -> dict[str, Any] | None:
    """One measurement in a process started in ``root``; ``None`` when it failed."""
    done = subprocess.run(
        [sys.executable, "-c", ONE, str(tokens), module],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            figures: dict[str, Any] = json.loads(line[7:])
            return figures
    print(done.stderr[-2000:], file=sys.stderr)
    return None


def main() -> None:
    """Print the figures (the command line of this module)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    apps = [("floor", ROOT, "benchmarks.floor_app"), ("before", args.before, "tui_chat")]
    apps.append(("after", ROOT, "tui_chat"))
    for round_ in range(args.rounds):
        shorts: dict[str, float] = {}
        results: dict[str, dict[str, Any]] = {}
        for name, root, module in apps if round_ % 2 == 0 else apps[::-1]:
            f = one(root, module, args.tokens)
            if f is None:
                print(f"round {round_} {name}: failed", flush=True)
                continue
            shorts[name] = f["short"][0]
            results[name] = f
            print(
                f"round {round_} {name:6} short {f['short'][0]:6.0f} ms (loop {f['short'][1]:4.0f})"
                f"  {args.tokens:,} tokens {f['long'][0]:6.0f} ms (loop {f['long'][1]:4.0f})"
                f"  keys p95 {f['keys_p95']:5.1f} ms (loop p50/p95 {f['keys_loop'][0]:.1f}/"
                f"{f['keys_loop'][1]:.1f}, {f['lost']} lost)  idle p95 {f['idle_p95']:5.1f} ms"
                f" (loop {f['idle_loop'][0]:.1f}/{f['idle_loop'][1]:.1f}, {f['idle_lost']} lost)"
                f"  load {f['load'][0]:.1f}-{f['load'][1]:.1f}",
                flush=True,
            )
        if shorts.get("floor"):
            ratios = ", ".join(
                f"{n} {shorts[n] / shorts['floor']:.1f}x"
                for n in ("before", "after")
                if n in shorts
            )
            print(f"round {round_} short settle / floor's (<= 1.5): {ratios}", flush=True)
        if "floor" in results:
            idle = results["floor"]["idle_p95"]
            for n in ("before", "after"):
                if n in results:
                    print(
                        f"round {round_} {n}: keys streaming / floor idle "
                        f"{results[n]['keys_p95'] / idle:.2f} (<= 1.5), idle / floor idle "
                        f"{results[n]['idle_p95'] / idle:.2f} (<= 1.2), long settle / floor's "
                        f"{results[n]['long'][0] / results['floor']['long'][0]:.2f} (<= 1.5)",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
