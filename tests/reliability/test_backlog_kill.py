"""``kill -9`` of a real ``tui-chat compact`` folding a backlog, then a rerun.

A conversation of 1,400 messages is made with ``tui-chat import`` (in the test's process);
its backlog is folded by ``tui-chat compact`` in committed versions of :data:`STEP` messages each
(the offline summarizer: no API key). The process is a real one, started with the command line's
own ``main``; the only thing it does besides is set the step size (5,000 messages in the app, so
the test would otherwise need 15,000 messages for three versions). Once the database shows the
first committed version the process is killed with SIGKILL; ``compact`` is run again to the end,
and the database must then be intact, its chain of versions continuous (each one covers exactly the
messages after its parent's coverage up to its own), and its final state the one an uninterrupted
run on a copy of the same database reaches.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability.helpers import ROOT, cli_env, integrity, rows, run_here

pytestmark = pytest.mark.slow  # real processes

MESSAGES = 1_400
STEP = 200
"""Messages one version may fold (the app's ``BACKLOG_STEP_MESSAGES``): 7 versions or so."""

DEADLINE = 600.0
"""Seconds the test waits for a process before it fails (a hang, never a timing figure: an
uninterrupted ``compact`` took over 120 s at a load of 25-40 on two cores)."""

ATTEMPTS = 3
"""Runs to kill: one that finished before the kill reached it does not count."""

_COMPACT = (
    "import sys\n"
    "from tui_chat.engine.compaction import due, worker\n"
    "worker.BACKLOG_STEP_MESSAGES = due.BACKLOG_STEP_MESSAGES = int(sys.argv[1])\n"
    "from tui_chat.cli import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)
"""``tui-chat ARGS`` with the step size set first (``python -c _COMPACT STEP ARGS``)."""


def _compact_argv(db: Path, cid: str) -> list[str]:
    return [sys.executable, "-c", _COMPACT, str(STEP), "--db", str(db), "compact", cid]


def _import_backlog(home: Path, tmp_path: Path) -> tuple[Path, str]:
    """A database holding one conversation of :data:`MESSAGES` messages, made by ``import``."""
    items = [
        {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": (
                f"Step {n}: we edit src/module_{n % 97}.py and keep LIMIT_{n % 13} = {n * 7} ms."
                if n % 2 == 0
                else f"Done with module_{n % 97}.py at commit {n:07x}a; the check took {n} ms."
            ),
        }
        for n in range(MESSAGES)
    ]
    source = tmp_path / "backlog.json"
    source.write_text(json.dumps({"title": "backlog", "messages": items}), encoding="utf-8")
    db = tmp_path / "backlog.db"
    done = run_here(home, "--db", str(db), "import", str(source), key=None)
    assert done.returncode == 0, done.stderr
    (cid,) = rows(db, "SELECT id FROM conversations")[0]
    return db, str(cid)


def _completed(db: Path) -> int:
    con_rows = rows(db, "SELECT count(*) AS n FROM summaries WHERE status = 'completed'")
    return int(con_rows[0]["n"])


def _kill_after_first_version(db: Path, home: Path, cid: str) -> bool:
    """Start ``compact``, SIGKILL it once a version is committed; False if it ended first."""
    process = subprocess.Popen(
        _compact_argv(db, cid),
        env=cli_env(home, key=None),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while _completed(db) == 0 and process.poll() is None:
            assert time.monotonic() < deadline, "no version was committed"
            time.sleep(0.005)  # polling the database, not a timing assumption
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        _, err = process.communicate(timeout=DEADLINE)
    if process.returncode == 0:
        return False  # it had already folded everything: no kill happened
    assert process.returncode == -signal.SIGKILL, err.decode()[-500:]
    return True


def _run_compact(db: Path, home: Path, cid: str) -> None:
    done = subprocess.run(
        _compact_argv(db, cid),
        env=cli_env(home, key=None),
        cwd=ROOT,
        capture_output=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr.decode()[-500:]


def _chain(db: Path, cid: str) -> list[tuple[int, int, str]]:
    """The completed versions as ``(version, covers_to_message_id, text)``, after checking
    that they form one continuous chain ending in the version in force."""
    versions = rows(
        db,
        "SELECT id, version, parent_id, status, covers_to_message_id AS upto, "
        "covered_messages FROM summaries WHERE conversation_id = ? ORDER BY version",
        (cid,),
    )
    assert [v["status"] for v in versions] == ["completed"] * len(versions)
    parent_id, upto, covered = None, 0, 0
    for v in versions:
        # Its parent is the version before; it covers what follows the parent's coverage.
        assert v["parent_id"] == parent_id, dict(v)
        assert v["upto"] > upto, dict(v)
        span = rows(
            db,
            "SELECT count(*) AS n FROM messages WHERE conversation_id = ? AND id > ? AND id <= ?",
            (cid, upto, v["upto"]),
        )[0]["n"]
        assert v["covered_messages"] == covered + span, dict(v)
        parent_id, upto, covered = v["id"], v["upto"], v["covered_messages"]
    (active,) = rows(db, "SELECT active_summary_id FROM conversations WHERE id = ?", (cid,))[0]
    assert active == parent_id
    texts = {
        r["version"]: r["text"]
        for r in rows(db, "SELECT version, text FROM summaries WHERE conversation_id = ?", (cid,))
    }
    return [(v["version"], v["upto"], texts[v["version"]]) for v in versions]


def test_kill_9_during_backlog_compaction_then_rerun(isolated_env: Path, tmp_path: Path) -> None:
    home = isolated_env
    imported, cid = _import_backlog(home, tmp_path)
    reference = tmp_path / "uninterrupted.db"
    shutil.copyfile(imported, reference)
    _run_compact(reference, home, cid)
    expected = _chain(reference, cid)
    assert len(expected) >= 3

    db = tmp_path / "killed.db"
    for _ in range(ATTEMPTS):
        shutil.copyfile(imported, db)
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        if _kill_after_first_version(db, home, cid):
            break
    else:
        raise AssertionError(f"compact finished before the kill in {ATTEMPTS} attempts")

    assert integrity(db) == "ok"
    committed = _chain_prefix(db, cid)
    assert 1 <= len(committed) < len(expected)
    assert committed == expected[: len(committed)]  # what was committed is what stays
    # The killed step's lease is left, still live by its clock; its owner process is gone,
    # so the rerun takes it over at once instead of waiting out the 90 s.
    orphans = rows(db, "SELECT lease_expires_at FROM summaries WHERE status = 'in_progress'")
    assert len(orphans) <= 1
    assert all(row["lease_expires_at"] > time.time() for row in orphans)

    _run_compact(db, home, cid)
    assert integrity(db) == "ok"
    assert _chain(db, cid) == expected


def _chain_prefix(db: Path, cid: str) -> list[tuple[int, int, str]]:
    """The completed versions of a killed run (an in-progress row may follow them)."""
    done = rows(
        db,
        "SELECT version, covers_to_message_id AS upto, text, status FROM summaries "
        "WHERE conversation_id = ? ORDER BY version",
        (cid,),
    )
    statuses = [r["status"] for r in done]
    assert statuses in (
        ["completed"] * len(done),
        ["completed"] * (len(done) - 1) + ["in_progress"],
    ), statuses
    return [(r["version"], r["upto"], r["text"]) for r in done if r["status"] == "completed"]
