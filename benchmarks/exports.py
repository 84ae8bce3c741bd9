"""Exports and ``show``: peak memory at each conversation length (every format streams).

Each command runs as ``tui-chat`` does, in a fresh interpreter of its own, its output to
``/dev/null`` (to standard output) or to a file (``--output``), against a database holding one
conversation of N messages; the process's peak resident set (``VmHWM``, read by the process
itself as the command returns) is the figure. A command that holds the whole history grows
with N (the Markdown export held 166 MB at 100,000 messages); one that streams stays flat.

The databases are made in the app's schema by bulk SQL (one conversation, messages of a few
hundred characters with Markdown in them) and cached in ``--data``; the full-text index is
left empty (no command here reads it). Run alone::

    python -m benchmarks.exports [--sizes 1000,100000,1000000] [--formats md,json,show]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, Options, Row, row

GROUP = "exports"
LIMIT_MB = 60.0
"""What a streaming command may hold, at any length."""
FULL_SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
COMMANDS: dict[str, list[str]] = {
    "md": ["export", "--format", "md"],
    "json": ["export", "--format", "json"],
    "html": ["export", "--format", "html"],
    "md file": ["export", "--format", "md", "--output", "{out}.md"],
    "json file": ["export", "--format", "json", "--output", "{out}.json"],
    "html file": ["export", "--format", "html", "--output", "{out}.html"],
    "show": ["show"],
    "show --json": ["show", "--json"],
}
"""Each command measured (the conversation's id is added after the subcommand)."""
HTML_UP_TO = 100_000
"""The HTML export renders every message's Markdown (about 1 ms each): longer ones are left
out unless asked for by ``--formats``."""
CONVERSATION = "bench-exports"
_WORDS = [
    "context",
    "token",
    "window",
    "summary",
    "anchor",
    "recall",
    "cache",
    "budget",
    "stream",
    "reply",
]


def _text(rng: random.Random, n: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(40 + n % 30))
    if n % 5 == 0:
        return f"{words}\n\n- **one** point\n- `two`\n\n```python\nprint({n})\n```\n"
    return words


def database(data_dir: Path, messages: int) -> Path:
    """The cached database of one conversation of ``messages`` messages (made if missing)."""
    from tui_chat.store.migrations import MIGRATIONS
    from tui_chat.store.repository import Store

    path = data_dir / f"exports-{messages}-v{len(MIGRATIONS)}.db"
    if path.exists():
        return path
    data_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)

    async def schema() -> None:
        await (await Store.open(partial)).close()

    asyncio.run(schema())
    db = sqlite3.connect(partial, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    triggers = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' "
        "AND sql LIKE '%messages_fts%'"
    ).fetchall()
    for name, _sql in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    db.execute(
        "INSERT INTO conversations (id, title, model, system_prompt, settings, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            CONVERSATION,
            "exports",
            "claude-sonnet-4-5",
            "",
            "{}",
            "2025-01-01T00:00:00+00:00",
            "2025-01-02T00:00:00+00:00",
        ),
    )
    rng = random.Random(37)
    batch: list[tuple[object, ...]] = []
    for n in range(messages):
        role = "user" if n % 2 == 0 else "assistant"
        text = _text(rng, n)
        content = json.dumps([{"type": "text", "text": text}])
        created = f"2025-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00"
        batch.append(
            (CONVERSATION, role, content, text, n // 2 + 1, len(text) // 4, "complete", created)
        )
        if len(batch) == 10_000 or n == messages - 1:
            db.executemany(
                "INSERT INTO messages (conversation_id, role, content, text, turn, token_count,"
                " status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                batch,
            )
            batch = []
    for _name, sql in triggers:
        db.execute(sql)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    partial.rename(path)
    return path


def measure(db: Path, command: list[str], work: Path) -> tuple[float, float]:
    """``(peak RSS MB, wall s)`` of ``tui-chat --db DB COMMAND`` in a fresh interpreter."""
    report = work / "rss.json"
    report.unlink(missing_ok=True)
    args = [part.format(out=work / "out") for part in command]
    args.insert(1, CONVERSATION)
    if "--output" in args:
        args.append("--force")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TUI_CHAT_HOME"] = str(work / "home")
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "benchmarks.exports", "child", str(report), "--db", str(db), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # "exported … to …"
        check=True,
        cwd=ROOT,
        env=env,
    )
    wall = time.perf_counter() - started
    return float(json.loads(report.read_text())["rss_mb"]), wall


def _child(report: Path, args: list[str]) -> int:
    from benchmarks.common import peak_rss_mb
    from tui_chat.cli import main

    try:
        code = main(args)
    finally:
        sys.stdout.flush()
        report.write_text(json.dumps({"rss_mb": peak_rss_mb()}))
    return code


def figures(
    data_dir: Path, sizes: tuple[int, ...], names: list[str] | None = None
) -> list[tuple[str, int, float, float]]:
    """``(command, messages, peak RSS MB, wall s)`` for each command at each size."""
    results = []
    data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-exports-", dir=data_dir) as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        for size in sizes:
            db = database(data_dir, size)
            for name, command in COMMANDS.items():
                chosen = (
                    name.split()[0] in names
                    if names
                    else (not name.startswith("html") or size <= HTML_UP_TO)
                )
                if chosen:
                    rss, wall = measure(db, command, work)
                    results.append((name, size, rss, wall))
                    print(
                        f"{name:<12} {size:>9,} messages  {rss:6.1f} MB  {wall:6.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    return results


def run(options: Options) -> list[Row]:
    """Peak RSS of every export and ``show`` format at each length."""
    sizes = QUICK_SIZES if options.quick else FULL_SIZES
    rows = []
    for name, size, rss, wall in figures(options.data_dir, sizes):
        rows.append(
            row(
                GROUP,
                f"peak RSS, {name}, {size:,} messages",
                rss,
                "MB",
                le=LIMIT_MB,
                note=f"wall {wall:.1f} s",
            )
        )
    return rows


def main() -> None:
    """Print the figures (the command line of this module)."""
    if len(sys.argv) > 2 and sys.argv[1] == "child":
        raise SystemExit(_child(Path(sys.argv[2]), sys.argv[3:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, FULL_SIZES)))
    parser.add_argument("--formats", help="md,json,html,show (default: all; html to 100k)")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tui-chat-bench")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    names = args.formats.split(",") if args.formats else None
    load = os.getloadavg()[0]
    print(f"load {load:.1f} on {os.cpu_count()} CPUs (memory does not depend on it)")
    for name, size, rss, wall in figures(args.data, sizes, names):
        mark = "ok" if rss <= LIMIT_MB else "OVER"
        print(f"{name:<12} {size:>9,} messages  peak RSS {rss:6.1f} MB  ({mark})  {wall:6.1f} s")


if __name__ == "__main__":
    main()
