"""An app (``tui_chat`` or the floor) run under ``cProfile`` counting its main thread's CPU time,
switched on and off by ``SIGUSR1`` (for comparing what a key or a reply's end calls).

``python -m benchmarks.profiled MODULE ARGS`` runs ``python -m MODULE ARGS``; the first
``SIGUSR1`` starts a profile (its clock: ``time.thread_time``, so waiting for a CPU on a
loaded machine costs nothing), the next writes it to ``$TUI_BENCH_PROFILE.N`` (``N`` counting
from 0) and so on. Read a profile with ``pstats``; :mod:`benchmarks.profile_keys` drives the
app and the floor through a terminal and prints the two side by side.
"""

from __future__ import annotations

import cProfile
import os
import runpy
import signal
import sys
import time
from types import FrameType


def main() -> None:
    """Run the module with the switch installed."""
    out = os.environ["TUI_BENCH_PROFILE"]
    state: dict[str, cProfile.Profile | int | None] = {"profile": None, "count": 0}

    def toggle(_signum: int, _frame: FrameType | None) -> None:
        profile = state["profile"]
        if profile is None:
            profile = cProfile.Profile(time.thread_time)
            state["profile"] = profile
            profile.enable()
            return
        assert isinstance(profile, cProfile.Profile)
        profile.disable()
        count = state["count"]
        assert isinstance(count, int)
        profile.dump_stats(f"{out}.{count}")
        state["count"] = count + 1
        state["profile"] = None

    signal.signal(signal.SIGUSR1, toggle)
    module, *args = sys.argv[1:]
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
