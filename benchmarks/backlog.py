"""Backlog: importing a long history and compacting it, in time and peak memory.

Each step is the real command line (``tui-chat --db DB import FILE``, ``tui-chat --db DB
context CONV`` on the imported conversation before any compaction, then ``tui-chat --db DB
compact CONV`` with no API key, so the offline extractive summarizer folds everything due)
in a fresh interpreter of its own, whose peak resident set (``VmHWM``) is
read at its end. The file is a plain Anthropic Messages list of English-like text
(``datagen.TextMaker``), 100,000 messages in a full run (``--quick``: 10,000); a 1,000-message
one is the baseline measured in the same run, so the ratio shows how the step grows with
history. The files are written once per generator version into the data directory (as the
scale database is). A step that runs out of its time is reported as missing, never
estimated.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import ROOT, Options, Row, missing, peak_rss_mb, row
from benchmarks.datagen import GENERATOR_VERSION, TextMaker

GROUP = "backlog"
BASELINE = 1_000
FULL_SIZES = (BASELINE, 100_000)
QUICK_SIZES = (BASELINE, 10_000)
FILE_VERSION = 1
"""Bump when :func:`write_import_file` writes something else, so cached files are remade."""
STEP_TIMEOUT = {"quick": 60.0, "full": 240.0}
"""Seconds one import or compaction may take before it is reported as timed out."""


@dataclass(frozen=True)
class Step:
    """One command's outcome in its own process."""

    seconds: float
    """Wall time of the command inside the process (imports of tui-chat included)."""
    peak_rss_mb: float


def write_import_file(path: Path, messages: int, seed: int = 17) -> None:
    """An Anthropic Messages list of ``messages`` alternating user/assistant messages."""
    maker = TextMaker(random.Random(seed))
    items = [
        {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": maker.user_text() if n % 2 == 0 else maker.assistant_text(),
        }
        for n in range(messages)
    ]
    path.write_text(json.dumps({"title": f"backlog of {messages}", "messages": items}))


def import_file(data_dir: Path, messages: int) -> Path:
    """The ``messages``-message import file in ``data_dir``, written on first use."""
    path = data_dir / f"backlog-v{GENERATOR_VERSION}.{FILE_VERSION}-{messages}.json"
    if not path.exists():
        part = path.with_suffix(".part")
        write_import_file(part, messages)
        part.replace(path)
    return path


def run_step(db: Path, home: Path, args: list[str], timeout: float) -> Step:
    """Run ``tui-chat --db DB ARGS…`` in a fresh interpreter; its time and peak memory.

    Raises:
        RuntimeError: the command failed (its last line of stderr says why).
        subprocess.TimeoutExpired: it ran longer than ``timeout``.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TUI_CHAT_HOME"] = str(home)
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as out:
        result = Path(out.name)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.backlog", str(result), "--db", str(db), *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["no output"]
            raise RuntimeError(lines[-1][-200:])
        data = json.loads(result.read_text())
    finally:
        result.unlink(missing_ok=True)
    return Step(data["seconds"], data["peak_rss_mb"])


def _child(result: Path, argv: list[str]) -> int:
    """The measured process: run the command line, then write its time and peak memory."""
    from tui_chat.cli import main

    started = time.perf_counter()
    code = main(argv)
    elapsed = time.perf_counter() - started
    result.write_text(json.dumps({"seconds": elapsed, "peak_rss_mb": peak_rss_mb()}))
    return code


def _folded(db: Path) -> tuple[str, int]:
    """The imported conversation's id and how many messages its summary in force covers."""
    con = sqlite3.connect(db)
    try:
        cid, covered = con.execute(
            "SELECT c.id, IFNULL(s.covered_messages, 0) FROM conversations c "
            "LEFT JOIN summaries s ON s.id = c.active_summary_id"
        ).fetchone()
    finally:
        con.close()
    return str(cid), int(covered)


def _size_rows(
    size: int, source: Path, work: Path, timeout: float, base: dict[str, Step]
) -> tuple[list[Row], dict[str, Step]]:
    """Import then compact one ``size``-message file; rows for both steps."""
    db = work / f"backlog-{size}.db"
    home = work / "home"
    home.mkdir(exist_ok=True)
    steps: dict[str, Step] = {}
    rows: list[Row] = []
    is_base = size == BASELINE
    suffix = " (baseline)" if is_base else ""
    targets: dict[str, tuple[float | None, float | None]] = {
        "import": (30.0, 150.0),
        "context": (None, None),
        "compact": (60.0, 200.0),
    }
    for kind in ("import", "context", "compact"):
        figure = f"{kind} {size:,} messages{suffix}"
        le_s, le_mb = targets[kind] if size == max(FULL_SIZES) else (None, None)
        try:
            args = ["import", str(source)] if kind == "import" else [kind, _folded(db)[0]]
            step = run_step(db, home, args, timeout)
        except subprocess.TimeoutExpired:
            rows.append(missing(GROUP, figure, "s", f"timed out after {timeout:.0f} s", le=le_s))
            break
        except RuntimeError as exc:
            rows.append(missing(GROUP, figure, "s", f"failed: {exc}", le=le_s))
            break
        steps[kind] = step
        note = f"{size / step.seconds:,.0f} messages/s"
        if kind == "context":
            note = "tui-chat context in a fresh process, before any compaction"
        if kind == "compact":
            note += f"; summary in force covers {_folded(db)[1]:,} messages"
        before = base.get(kind)
        rows.append(
            row(
                GROUP,
                figure,
                step.seconds,
                "s",
                le=le_s,
                ratio=None if before is None or is_base else step.seconds / before.seconds,
                note=note,
            )
        )
        rows.append(
            row(
                GROUP,
                f"{kind} {size:,} messages, peak RSS{suffix}",
                step.peak_rss_mb,
                "MB",
                le=le_mb,
                ratio=None if before is None or is_base else step.peak_rss_mb / before.peak_rss_mb,
            )
        )
    return rows, steps


def run(options: Options) -> list[Row]:
    """Every backlog figure."""
    sizes = QUICK_SIZES if options.quick else FULL_SIZES
    timeout = STEP_TIMEOUT["quick" if options.quick else "full"]
    rows: list[Row] = []
    base: dict[str, Step] = {}
    with tempfile.TemporaryDirectory(prefix="backlog-", dir=options.data_dir) as tmp:
        for size in sizes:
            source = import_file(options.data_dir, size)
            size_rows, steps = _size_rows(size, source, Path(tmp), timeout, base)
            rows += size_rows
            if size == BASELINE:
                base = steps
    return rows


if __name__ == "__main__":
    raise SystemExit(_child(Path(sys.argv[1]), sys.argv[2:]))
