"""Run the tui-chat benchmarks and print one table of figures against their targets.

Usage::

    python benchmarks/run.py [--quick] [--json FILE] [--only GROUP[,GROUP…]] [--data DIR]
                             [--jobs N]

Every group runs in a process of its own (one interpreter per group: imports, caches and peak
memory never leak from one group into another), one group at a time. Inside a group, work
whose figures do not depend on time (the cost replays, the quality evaluations) is spread
over ``--jobs`` worker processes (default: one per CPU, at most four); timed work always
runs alone. The run's own wall time is a row too (quick <= 90 s, full <= 10 min), with each
group's wall and CPU time in its note. Data is generated deterministically, with no
network; the scale database is generated once (bulk SQL in the app's schema) and cached in
``--data`` (default ``$TMPDIR/tui-chat-bench``) under a name holding the generator and schema
versions, so a changed generator or schema builds a new one. Targets are reported, never
enforced: the exit code is 0 unless a group could not run at all.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import ROOT, Options, Row, default_jobs, row

GROUPS: tuple[str, ...] = (
    "tokens",
    "scale",
    "backlog",
    "quality",
    "cost",
    "sessions",
    "exports",
    "past_budget",
    "tui",
    "feel",
)
"""Group modules (``benchmarks/<name>.py``), in the order they run."""

GROUP_TIMEOUT = {"quick": 600, "full": 3600}
RUN_TARGET_S = {"quick": 90.0, "full": 600.0}
"""What a whole run (every group) may take, wall time."""
DATA_DIR = Path(tempfile.gettempdir()) / "tui-chat-bench"
"""Where generated data is cached between runs."""


def run_group(name: str, options: Options) -> list[Row]:
    """Run one group in this process (the child side of :func:`spawn`)."""
    import importlib

    module = importlib.import_module(f"benchmarks.{name}")
    rows: list[Row] = module.run(options)
    return rows


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far (NaN off Unix)."""
    try:
        import resource
    except ImportError:  # Windows
        return math.nan
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spawn(name: str, options: Options) -> tuple[list[Row], float, float]:
    """Run one group in a fresh interpreter; returns its rows, wall time and CPU time (the
    group's process and every process it started)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as out:
        out_path = Path(out.name)
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "run.py"),
        "--group",
        name,
        "--rows-out",
        str(out_path),
        "--data",
        str(options.data_dir),
        "--jobs",
        str(options.jobs),
    ]
    if options.quick:
        command.append("--quick")
    started = time.perf_counter()
    cpu_before = _children_cpu()
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            timeout=GROUP_TIMEOUT["quick" if options.quick else "full"],
            capture_output=True,
            text=True,
        )
        failure = None if done.returncode == 0 else (done.stderr.strip() or "no output")
        if failure is None:
            rows = [Row(**item) for item in json.loads(out_path.read_text())]
    except subprocess.TimeoutExpired:
        failure = "timed out"
    finally:
        out_path.unlink(missing_ok=True)
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if failure is not None:
        print(f"[{name}] failed:\n{failure[-3000:]}", file=sys.stderr)
        note = failure.splitlines()[-1]
        return [Row(name, "group failed to run", None, "", note=note)], elapsed, cpu
    return rows, elapsed, cpu


def _value(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 0.1 else f"{value:.3f}"


def table(rows: list[Row], markdown: bool = False) -> str:
    """The rows as an aligned text table (or a Markdown table)."""
    header = ["group", "figure", "value", "unit", "target", "met", "vs baseline", "/ ref", "note"]
    body = [
        [
            r.group,
            r.figure,
            _value(r.value),
            r.unit,
            r.target or "",
            "" if r.met is None else ("yes" if r.met else "NO"),
            "" if r.ratio is None else f"{r.ratio:.2f}x",
            "" if r.per_ref is None else f"{r.per_ref:.2f}",
            r.note,
        ]
        for r in rows
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in body]
        return "\n".join(lines)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header) - 1)]
    out = []
    for line in [header, *body]:
        cells = [line[i].ljust(widths[i]) for i in range(len(widths))]
        out.append("  ".join(cells) + "  " + line[-1])
    return "\n".join(out)


def run_row(mode: str, seconds: float, times: list[str], jobs: int) -> Row:
    """The run's own wall time against its target, each group's time in the note."""
    return row(
        "run",
        f"{mode} run, every group, wall time",
        seconds,
        "s",
        le=RUN_TARGET_S[mode],
        note=f"{'; '.join(times)}; {jobs} jobs on {os.cpu_count()} CPUs",
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, under 90 seconds")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown")
    parser.add_argument("--only", help="comma-separated groups to run: " + ", ".join(GROUPS))
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    parser.add_argument(
        "--jobs",
        type=int,
        default=default_jobs(),
        help="worker processes for untimed work (default: one per CPU, at most 4)",
    )
    parser.add_argument("--group", help=argparse.SUPPRESS)
    parser.add_argument("--rows-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    options = Options(quick=args.quick, data_dir=args.data.resolve(), jobs=max(1, args.jobs))

    if args.group:  # child process: one group
        rows = run_group(args.group, options)
        args.rows_out.write_text(json.dumps([r.__dict__ for r in rows]))
        return 0

    groups = list(GROUPS)
    if args.only:
        wanted = [g.strip() for g in args.only.split(",") if g.strip()]
        unknown = [g for g in wanted if g not in GROUPS]
        if unknown:
            parser.error(f"unknown group(s): {', '.join(unknown)}")
        groups = [g for g in GROUPS if g in wanted]
    started = time.perf_counter()
    all_rows: list[Row] = []
    times: list[str] = []
    failed = 0
    for name in groups:
        print(f"running {name} …", file=sys.stderr, flush=True)
        rows, elapsed, cpu = spawn(name, options)
        failed += any(r.figure == "group failed to run" for r in rows)
        times.append(f"{name} {elapsed:.0f} s (CPU {cpu:.0f} s)")
        print(f"  {name}: {elapsed:.1f} s, CPU {cpu:.1f} s", file=sys.stderr, flush=True)
        all_rows += rows
    total = time.perf_counter() - started
    mode = "quick" if options.quick else "full"
    if groups == list(GROUPS):
        all_rows.append(run_row(mode, total, times, options.jobs))
    print(table(all_rows))
    met = sum(1 for r in all_rows if r.met is True)
    judged = sum(1 for r in all_rows if r.met is not None)
    print(f"\n{mode} run: {met}/{judged} targets met, {total:.0f} s in all: {', '.join(times)}")
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in all_rows], indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(table(all_rows, markdown=True) + "\n")
    return 1 if failed == len(groups) else 0


if __name__ == "__main__":
    raise SystemExit(main())
