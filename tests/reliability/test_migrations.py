"""A database written by every earlier schema version opens with every row intact.

Data-driven: each ``fixtures/schema_vN.db`` (made by ``fixtures/make_schema_fixture.py N``
with the real migration code of version N, then committed) is copied, opened with today's
code — which migrates it — and compared row by row with the untouched fixture, then read and
used through the repository and the engine. Adding migration N+1 means committing
``schema_vN.db`` before it ships; ``test_every_earlier_version_has_a_fixture`` insists.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.seam import engine_of, open_service
from tui_chat.config import Config
from tui_chat.store import database
from tui_chat.store.migrations import LATEST_VERSION, MIGRATIONS
from tui_chat.store.repository import Store
from tui_chat.store.send_leases import ORPHAN_ERROR

FIXTURES = Path(__file__).parent / "fixtures"
SCRIPT = FIXTURES / "make_schema_fixture.py"
FIXTURE_FILES = sorted(
    FIXTURES.glob("schema_v*.db"), key=lambda p: int(p.stem.removeprefix("schema_v"))
)
"""Oldest first by version number (schema_v10 after schema_v9)."""

RENAMED: dict[int, dict[tuple[str, str], str]] = {}
"""Per fixture version, ``(table, old column) -> new column`` for columns a later migration
renamed (none so far). A dropped column maps to ``""`` and is not compared."""


def _version(path: Path) -> int:
    match = re.fullmatch(r"schema_v(\d+)\.db", path.name)
    assert match, path
    return int(match.group(1))


def _tables(con: sqlite3.Connection) -> list[str]:
    # Real tables only: not SQLite's, not the FTS index's shadow tables (rebuilt by triggers).
    return [
        r[0]
        for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE 'messages_fts%' ORDER BY name"
        )
    ]


def _dump(path: Path) -> dict[str, list[dict[str, Any]]]:
    # A committed fixture is read as immutable: a WAL file opened even read-only would get
    # -shm/-wal files next to it.
    mode = "immutable=1" if path.parent == FIXTURES else "mode=ro"
    con = sqlite3.connect(f"file:{path}?{mode}", uri=True)
    con.row_factory = sqlite3.Row
    try:
        return {
            table: [dict(r) for r in con.execute(f"SELECT * FROM {table} ORDER BY rowid")]
            for table in _tables(con)
        }
    finally:
        con.close()


def _copy(fixture: Path, tmp_path: Path) -> Path:
    target = tmp_path / fixture.name
    shutil.copyfile(fixture, target)
    return target


def test_every_earlier_version_has_a_fixture() -> None:
    versions = {_version(p) for p in FIXTURE_FILES}
    missing = set(range(1, LATEST_VERSION)) - versions
    assert not missing, f"commit fixtures for schema versions {sorted(missing)}"
    assert max(versions) <= LATEST_VERSION


@pytest.mark.slow  # a real process
@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_fixture_is_what_its_script_makes(fixture: Path, tmp_path: Path) -> None:
    # The committed file really is schema N made by the real migration code.
    remade = tmp_path / "remade.db"
    subprocess.run(
        [sys.executable, str(SCRIPT), str(_version(fixture)), str(remade)],
        check=True,
        capture_output=True,
    )
    assert _dump(remade) == _dump(fixture)
    con = sqlite3.connect(f"file:{fixture}?immutable=1", uri=True)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == _version(fixture)
    finally:
        con.close()


def _settled(row: dict[str, Any]) -> dict[str, Any]:
    """A message row as opening the database leaves it: a reply a dead process left
    ``streaming`` ends ``incomplete``, saying why; the rest is unchanged."""
    if row.get("status") != "streaming":
        return row
    return {**row, "status": "incomplete", "error": ORPHAN_ERROR}


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
async def test_every_row_survives_opening_with_todays_code(fixture: Path, tmp_path: Path) -> None:
    version = _version(fixture)
    before = _dump(fixture)
    assert sum(len(rows) for rows in before.values()) > 20, "the fixture holds too little"
    path = _copy(fixture, tmp_path)

    store = await Store.open(path)
    try:
        async with store.connection.execute("PRAGMA user_version") as cursor:
            assert (await cursor.fetchone())[0] == LATEST_VERSION  # type: ignore[index]
        assert await store.integrity_check() == "ok"
        async with store.connection.execute("PRAGMA foreign_key_check") as cursor:
            assert await cursor.fetchall() == []
    finally:
        await store.close()

    after = _dump(path)
    renamed = RENAMED.get(version, {})
    for table, rows in before.items():
        assert table in after, f"table {table} is gone"
        assert len(after[table]) == len(rows), table
        for old, new in zip(rows, after[table], strict=True):
            if table == "messages":
                old = _settled(old)
            if table == "conversations":  # settling a reply above is a write: counted up
                assert new.get("revision", 0) >= old.pop("revision", 0)
            for column, value in old.items():
                target = renamed.get((table, column), column)
                if target:
                    assert new[target] == value, (table, column, old)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
async def test_migrated_rows_read_search_and_work(fixture: Path, tmp_path: Path) -> None:
    before = _dump(fixture)
    path = _copy(fixture, tmp_path)
    service = await open_service(Config(api_key=None, db_path=path))
    try:
        store = engine_of(service).store
        infos = await store.conversations.all(include_archived=True)
        assert {i.conversation.id for i in infos} == {r["id"] for r in before["conversations"]}
        for info in infos:
            messages = await store.messages.history(info.conversation.id)
            expected = [
                r for r in before["messages"] if r["conversation_id"] == info.conversation.id
            ]
            assert [m.text for m in messages] == [r["text"] for r in expected]
            assert [m.status for m in messages] == [_settled(r)["status"] for r in expected]
            assert info.message_count == len(expected)
            assert info.token_count == sum(r["token_count"] for r in expected)
            summaries = await store.summaries.versions(info.conversation.id)
            rows = [r for r in before["summaries"] if r["conversation_id"] == info.conversation.id]
            assert sorted(s.version for s in summaries) == sorted(r["version"] for r in rows)
            pinned = await store.anchors.pinned_ids(info.conversation.id)
            assert pinned == {
                r["message_id"]
                for r in before["anchors"]
                if r["conversation_id"] == info.conversation.id
            }
        # The full-text index came along.
        for message in before["messages"]:
            word = next((w for w in re.findall(r"[A-Za-z]{5,}", message["text"])), None)
            if word:
                hits = await store.search.find(word, conversation_id=message["conversation_id"])
                assert message["id"] in [h.message_id for h in hits], word
        # And the conversations are usable: the next request builds, compaction works offline
        # (it first takes over the version a dead worker left in progress), a message is added.
        for info in infos:
            built = await service.requests.context(info.conversation.id, "and now?")
            assert built.request["messages"][-1]["role"] == "user"
        busy = next(i.conversation.id for i in infos if i.message_count > 5)
        summary = await service.summaries.compact(busy)
        assert summary.status == "completed"
        assert await store.summaries.in_progress(busy) is None
        outcome = await service.send(busy, "after the migration")
        assert outcome.user is not None and outcome.user.text == "after the migration"
    finally:
        await service.close()


async def test_a_failing_migration_leaves_the_database_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = FIXTURE_FILES[-1]
    before = _dump(fixture)
    path = _copy(fixture, tmp_path)
    store = await Store.open(path)  # up to today's schema first
    await store.close()
    migrated = _dump(path)
    broken = (
        *MIGRATIONS,
        "ALTER TABLE messages ADD COLUMN later TEXT;\nINSERT INTO nowhere VALUES (1);",
    )
    monkeypatch.setattr(database, "MIGRATIONS", broken)
    monkeypatch.setattr(database, "LATEST_VERSION", len(broken))
    with pytest.raises(sqlite3.OperationalError):
        await Store.open(path)
    assert _dump(path) == migrated  # the half-applied migration was rolled back
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == LATEST_VERSION
        assert "later" not in [r[1] for r in con.execute("PRAGMA table_info(messages)")]
    finally:
        con.close()
    assert len(migrated["messages"]) == len(before["messages"])
