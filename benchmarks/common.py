"""Rows, targets and timing helpers shared by every benchmark group.

A group module exposes ``run(options) -> list[Row]``; ``benchmarks/run.py`` runs each group
in its own process and prints the rows as one table. Benchmarks print figures: nothing here
ever fails on a missed target.

The machine is shared and noisy, so every timing row also carries its value divided by the
time of a fixed reference workload (:func:`reference_ms`: SQLite, JSON and plain Python, the
mix the app spends its time in) measured in the same process right when the row is made:
a busy machine slows both, and the quotient moves less than the raw figure.
"""

from __future__ import annotations

import gc
import json
import math
import multiprocessing
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
"""The repository root (holds ``tui_chat/``, ``tests/`` and ``benchmarks/``)."""

LOCOMO_DIR = ROOT.parent / "shared" / "data" / "locomo"
"""The LoCoMo conversations (``../shared/data/locomo`` from the project's root)."""

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Options:
    """What a group run may use."""

    quick: bool
    """Smaller sizes and subsets, so that every group together finishes in 90 seconds."""
    data_dir: Path
    """Where generated data (the scale database) lives for this run."""
    jobs: int = 1
    """Worker processes a group may use for work whose figures do not depend on time (the
    cost replays, the quality evaluations). Timed work always runs alone."""


def die_with_parent() -> None:
    """``preexec_fn`` of every process a benchmark starts (the app, the floor, the fake API): the
    kernel kills it when the benchmark dies (Linux's ``PR_SET_PDEATHSIG``), so a run that is
    interrupted or killed leaves nothing running. Start such processes from the main thread: the
    signal follows the thread that forked them."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def default_jobs() -> int:
    """Worker processes for untimed work: one per CPU (at most four)."""
    return max(1, min(os.cpu_count() or 1, 4))


_T = TypeVar("_T")
_R = TypeVar("_R")


def parallel_map(function: Callable[[_T], _R], items: Iterable[_T], jobs: int) -> list[_R]:
    """``[function(item) for item in items]``, over up to ``jobs`` fresh processes.

    Only for work whose results do not depend on time or on what else runs: each item is
    computed exactly as it would be alone, and results come back in the order of ``items``.
    ``function`` must be a module-level function (it is pickled by name); workers are
    started with ``spawn``, so nothing of this process (event loops, open databases,
    threads) is inherited.
    """
    work = list(items)
    workers = min(jobs, len(work))
    if workers <= 1:
        return [function(item) for item in work]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return list(pool.map(function, work))


def _call(call: tuple[Callable[[Any], Any], Any]) -> Any:
    function, argument = call
    return function(argument)


def parallel_calls(calls: Sequence[tuple[Callable[[Any], Any], Any]], jobs: int) -> list[Any]:
    """``[function(argument) for function, argument in calls]`` over one pool of ``jobs``
    processes (see :func:`parallel_map`): different kinds of work share the workers."""
    return parallel_map(_call, calls, jobs)


@dataclass(frozen=True)
class Row:
    """One printed figure."""

    group: str
    figure: str
    value: float | None
    unit: str
    target: str | None = None
    """``"<= 10"`` or ``">= 75"`` (in ``unit``), or ``None`` for an informational figure."""
    met: bool | None = None
    """Whether ``value`` meets ``target`` (``None`` without a target or a value)."""
    ratio: float | None = None
    """Ratio to the baseline measured in the same run, where one exists (table only)."""
    note: str = ""
    """Why a figure is missing, or what it was measured on (table only)."""
    per_ref: float | None = None
    """A timing divided by the reference workload's time measured just before (table only)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON row: exactly ``group, figure, value, unit, target, met``."""
        data = asdict(self)
        return {key: data[key] for key in ("group", "figure", "value", "unit", "target", "met")}


def row(
    group: str,
    figure: str,
    value: float | None,
    unit: str,
    *,
    le: float | None = None,
    ge: float | None = None,
    ratio: float | None = None,
    note: str = "",
) -> Row:
    """Build a row, judging ``value`` against an upper (``le``) or lower (``ge``) target."""
    target: str | None = None
    met: bool | None = None
    if le is not None:
        target = f"<= {le:g}"
        met = None if value is None else value <= le
    elif ge is not None:
        target = f">= {ge:g}"
        met = None if value is None else value >= ge
    per_ref: float | None = None
    if value is not None and unit in _TIME_UNITS:
        per_ref = round(value * _TIME_UNITS[unit] / reference_ms(), 3)
    if value is not None:
        value = round(float(value), 4 if abs(value) < 1 else 2)
    if ratio is not None:
        ratio = round(ratio, 3)
    return Row(group, figure, value, unit, target, met, ratio, note, per_ref)


_TIME_UNITS = {"ms": 1.0, "s": 1000.0}
"""Units of timing rows, in milliseconds."""


def _reference_work() -> None:
    """A fixed mix of the app's kinds of work: SQLite writes and reads, JSON, Python loops."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, v TEXT)")
    rows = [(i, f"k{i % 97}", json.dumps({"n": i, "text": "word " * 8})) for i in range(1_500)]
    db.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    total = sum(len(json.loads(v)["text"]) for (v,) in db.execute("SELECT v FROM t WHERE k < 'k5'"))
    db.close()
    assert total > 0


def reference_ms(runs: int = 3) -> float:
    """The median time of the reference workload now, in ms (about 25 ms on the dev machine)."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        _reference_work()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def missing(group: str, figure: str, unit: str, why: str, *, le: float | None = None) -> Row:
    """A figure that could not be measured, with the reason (never a made-up value)."""
    target = f"<= {le:g}" if le is not None else None
    return Row(group, figure, None, unit, target, None, None, why)


def percentile(samples: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0–100) by the nearest-rank method."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def p50(samples: Sequence[float]) -> float:
    """The median."""
    return statistics.median(samples) if samples else math.nan


async def time_async(
    call: Callable[[], Awaitable[object]], runs: int, warmup: int = 3
) -> list[float]:
    """Wall times of ``runs`` awaited calls in milliseconds (after ``warmup`` untimed ones)."""
    for _ in range(warmup):
        await call()
    samples: list[float] = []
    gc.collect()
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def time_sync(call: Callable[[], object], runs: int, warmup: int = 3) -> list[float]:
    """Wall times of ``runs`` calls in milliseconds (after ``warmup`` untimed ones)."""
    for _ in range(warmup):
        call()
    samples: list[float] = []
    gc.collect()
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB.

    On Linux ``VmHWM`` is read: ``ru_maxrss`` carries the parent's peak over ``fork`` +
    ``exec``, which would charge the benchmark driver's memory to the measured process.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


async def open_offline(db: Path) -> tuple[Any, Any]:
    """A service without a key on ``db`` and the store it was built on (the engine's parts,
    not its private attributes), for benchmarks that write or read rows directly."""
    from tui_chat.config import Config
    from tui_chat.engine.parts import EngineParts
    from tui_chat.engine.service import ChatService

    config = Config(db_path=db, api_key=None)
    parts = await EngineParts.open(config, db)
    return ChatService(config, parts), parts.store
