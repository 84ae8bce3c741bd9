"""Two tui-chat processes on one database, sending and compacting at the same time.

Two workers each run real ``tui-chat`` processes back to back against one database and one
conversation — sends (whose replies trigger automatic compactions), manual compactions, and
reads — a fixed number of processes each (``TUI_CHAT_SOAK_PROCESSES``, default 8; the full run
in ``RESULTS.md`` uses 84), in an order drawn from the seed, so a loaded machine makes the run
longer, never smaller. Afterwards: no ``database is locked`` (or any traceback) reached the
user, every message a process acknowledged is stored, no two versions cover one boundary from
one parent, nothing is left in progress, and the file passes ``PRAGMA integrity_check``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import (
    cli_argv,
    cli_env,
    integrity,
    report,
    rows,
    run_cli,
    write_config,
)
from tui_chat.store.migrations import LATEST_VERSION

pytestmark = pytest.mark.slow  # real processes

SOAK_PROCESSES = int(os.environ.get("TUI_CHAT_SOAK_PROCESSES", "8"))
"""Processes each of the two workers runs (the soak counts what it checks, not a time)."""
SEED = int(os.environ.get("TUI_CHAT_CRASH_SEED", str(random.randrange(2**32))))

EXPECTED_COMPACT_REFUSALS = (
    "compaction already running",
    "nothing to compact yet",
    "already summarised this boundary",
)
"""What ``compact`` may answer (exit 1) when the other process got there first."""


@dataclass
class Op:
    """One finished tui-chat process."""

    worker: int
    args: tuple[str, ...]
    code: int
    out: str
    err: str


def _schedule(rng: random.Random, count: int) -> list[str]:
    """``count`` operations in a random order: 60 % sends, 25 % compactions, the rest reads
    (at least two sends and one compaction)."""
    sends = max(2, round(count * 0.6))
    compactions = max(1, round(count * 0.25))
    plan = ["send"] * sends + ["compact"] * compactions
    plan += ["read"] * max(0, count - len(plan))
    rng.shuffle(plan)
    return plan


def _run(home: Path, base_url: str, args: tuple[str, ...], worker: int) -> Op:
    done = run_cli(home, *args, base_url=base_url)  # each thread's command its own process
    return Op(worker, args, done.returncode, done.stdout, done.stderr)


def test_processes_opening_a_new_database_at_once(home: Path) -> None:
    # Six processes create, migrate and write one new database at the same moment.
    processes = [
        subprocess.Popen(
            cli_argv("send", "--new", f"hello {i}"),
            env=cli_env(home, key=None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    results = [p.communicate(timeout=60) for p in processes]
    for process, (_out, err) in zip(processes, results, strict=True):
        # No key: the send fails with exit 1 after the message is stored, nothing else.
        assert process.returncode == 1 and "no Anthropic API key" in err, err
        assert "locked" not in err.lower()
    db = home / "data" / "tui-chat.db"
    texts = sorted(r["text"] for r in rows(db, "SELECT text FROM messages WHERE role = 'user'"))
    assert texts == [f"hello {i}" for i in range(6)]
    assert rows(db, "PRAGMA user_version")[0][0] == LATEST_VERSION
    assert integrity(db) == "ok"


def test_two_processes_send_and_compact_at_once(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    home = isolated_env
    write_config(
        home,
        '[api]\nmax_retries = 0\ntimeout = 30\n[compaction]\npreset = "turns"\n'
        'every_turns = 2\nsummarizer = "claude-haiku-4-5"\n',
    )
    fake_anthropic.chunk_delay = 0.01  # replies and summaries take a moment: they overlap
    first = run_cli(home, "send", "--new", "--json", "start", base_url=fake_anthropic.base_url)
    assert first.returncode == 0, first.stderr
    cid = json.loads(first.stdout)["conversation_id"]
    ops: list[Op] = []
    lock = threading.Lock()

    def worker(number: int) -> None:
        rng = random.Random(SEED + number)
        for count, kind in enumerate(_schedule(rng, SOAK_PROCESSES)):
            if kind == "send":
                args: tuple[str, ...] = ("send", "-c", cid, "--json", f"w{number} m{count}")
            elif kind == "compact":
                args = ("compact", cid)
            else:
                args = rng.choice(
                    [("search", "m1", "--json"), ("show", cid, "--json"), ("summaries", cid)]
                )
            op = _run(home, fake_anthropic.base_url, args, number)
            with lock:
                ops.append(op)

    threads = [threading.Thread(target=worker, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    db = home / "data" / "tui-chat.db"
    outcomes: Counter[str] = Counter()
    acknowledged: list[tuple[int, str, int]] = []
    for op in ops:
        seen = op.out + op.err
        assert "locked" not in seen.lower() and "busy" not in seen.lower(), op
        assert "Traceback" not in seen, op
        if op.args[0] == "send":
            assert op.code == 0, op
            data = json.loads(op.out)
            assert data["reply"]["status"] == "complete", op
            acknowledged.append((data["user"]["id"], op.args[-1], data["reply"]["id"]))
            outcomes["send ok"] += 1
        elif op.args[0] == "compact":
            if op.code == 0:
                outcomes["compact ok"] += 1
            else:
                assert any(r in op.err for r in EXPECTED_COMPACT_REFUSALS), op
                assert len(op.err.strip().splitlines()) == 1, op
                outcomes["compact refused (other process first)"] += 1
        else:
            assert op.code == 0, op
            outcomes["read ok"] += 1

    stored = {r["id"]: r for r in rows(db, "SELECT id, role, text, status FROM messages")}
    for user_id, text, reply_id in acknowledged:
        assert stored[user_id]["text"] == text and stored[user_id]["role"] == "user"
        assert stored[reply_id]["status"] == "complete"
    assert len(stored) == 2 * (len(acknowledged) + 1)

    summaries = rows(
        db,
        "SELECT id, version, parent_id, covers_to_message_id, status, trigger FROM summaries",
    )
    completed = [s for s in summaries if s["status"] == "completed"]
    spans = Counter((s["parent_id"], s["covers_to_message_id"]) for s in completed)
    duplicates = {span: n for span, n in spans.items() if n > 1}
    assert not duplicates, f"two versions for one boundary: {duplicates}"
    assert not [s for s in summaries if s["status"] == "in_progress"]
    assert len({s["version"] for s in summaries}) == len(summaries)
    active = rows(
        db,
        "SELECT s.status FROM conversations c JOIN summaries s ON s.id = c.active_summary_id",
    )
    assert [r["status"] for r in active] == ["completed"]
    assert integrity(db) == "ok"
    planned = [_schedule(random.Random(SEED + n), SOAK_PROCESSES) for n in (1, 2)]
    assert len(ops) == 2 * SOAK_PROCESSES  # every planned process ran and was checked
    assert outcomes["send ok"] == sum(plan.count("send") for plan in planned)
    assert outcomes["compact ok"] + len(completed) >= 1
    report(
        "two processes on one database",
        seed=SEED,
        processes_per_worker=SOAK_PROCESSES,
        processes_run=len(ops),
        outcomes=dict(outcomes),
        versions=dict(Counter(s["status"] for s in summaries)),
        messages=len(stored),
        locked_errors=0,
        duplicate_versions=0,
        lost=0,
    )
