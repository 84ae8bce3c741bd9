"""``tui-chat`` run under a sampling profiler of its event loop's CPU time (for the feel runs).

``python -m benchmarks.sampled ARGS`` runs ``python -m tui_chat ARGS`` with a thread that,
every :data:`EVERY` seconds, reads how much CPU time the main thread used since the last look
(``/proc/self/task/TID/schedstat``) and charges it to the main thread's stack at that moment.
Waiting for a CPU on a loaded machine costs nothing here, so the profile is what the loop
needs, not what the load makes of it. The samples, each ``(monotonic time, CPU ns, stack)``,
are written to ``$TUI_BENCH_SAMPLES`` every second (the benchmark ends the app by SIGKILL).
Read them with :func:`report`::

    TUI_BENCH_MODULE=benchmarks.sampled TUI_BENCH_SAMPLES=/tmp/s.pickle \\
        python -m benchmarks.feel --skip-start --tokens 5000
    python -m benchmarks.sampled --report /tmp/s.pickle [--since T] [--until T]
"""

from __future__ import annotations

import collections
import os
import pickle
import runpy
import sys
import threading
import time
from pathlib import Path
from types import FrameType

EVERY = 0.002
"""Seconds between two samples."""

Stack = tuple[str, ...]


def _stack(frame: FrameType | None) -> Stack:
    names: list[str] = []
    while frame is not None:
        code = frame.f_code
        names.append(f"{Path(code.co_filename).name}:{code.co_name}")
        frame = frame.f_back
    return tuple(reversed(names))


def _sampler(main: threading.Thread, out: Path) -> None:
    tid = main.native_id
    stat = f"/proc/self/task/{tid}/schedstat"
    samples: list[tuple[float, int, Stack]] = []
    last = int(Path(stat).read_text().split()[0])
    written = time.monotonic()
    while True:
        time.sleep(EVERY)
        try:
            ran = int(Path(stat).read_text().split()[0])
        except OSError:
            return
        used, last = ran - last, ran
        frame = sys._current_frames().get(main.ident or 0)
        if used > 0:
            samples.append((time.monotonic(), used, _stack(frame)))
        if time.monotonic() - written > 1.0:
            temp = out.with_suffix(".tmp")
            temp.write_bytes(pickle.dumps(samples))
            temp.replace(out)
            written = time.monotonic()


def report(path: Path, since: float = 0.0, until: float = float("inf"), top: int = 40) -> None:
    """Print the functions with the most CPU time (inclusive and own) in ``[since, until]``."""
    samples = [s for s in pickle.loads(path.read_bytes()) if since <= s[0] <= until]
    total = sum(s[1] for s in samples) or 1
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for _, used, stack in samples:
        for name in set(stack):
            inclusive[name] += used
        if stack:
            own[stack[-1]] += used
    print(f"{len(samples)} samples, {total / 1e6:.0f} ms of the main thread's CPU time")
    for title, counter in (("inclusive", inclusive), ("own", own)):
        print(f"-- {title}")
        for name, used in counter.most_common(top):
            print(f"{used / total * 100:5.1f} % {used / 1e6:8.1f} ms  {name}")


def main() -> None:
    """Run the app sampled, or print a report (``--report FILE [--since T] [--until T]``)."""
    if sys.argv[1:2] == ["--report"]:
        args = sys.argv[2:]
        since = float(args[args.index("--since") + 1]) if "--since" in args else 0.0
        until = float(args[args.index("--until") + 1]) if "--until" in args else float("inf")
        report(Path(args[0]), since, until)
        return
    out = Path(os.environ["TUI_BENCH_SAMPLES"])
    thread = threading.Thread(
        target=_sampler, args=(threading.main_thread(), out), daemon=True, name="sampler"
    )
    thread.start()
    sys.argv = ["tui_chat", *sys.argv[1:]]
    runpy.run_module("tui_chat", run_name="__main__")


if __name__ == "__main__":
    main()
