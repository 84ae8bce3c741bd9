"""The SQLite store: migrations, refusal of foreign files, FTS, leases, CAS activation."""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tui_chat.files import TargetExistsError
from tui_chat.store.errors import Conflict, NotFound, StoreError
from tui_chat.store.migrations import LATEST_VERSION
from tui_chat.store.repository import Store
from tui_chat.store.summaries import SummaryResult, SummaryStart


def text_block(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


async def add(store: Store, cid: str, role: str, text: str) -> int:
    message = await store.messages.add(
        cid, role=role, content=text_block(text), text=text, token_count=len(text) // 4 + 1
    )  # type: ignore[arg-type]
    return message.id


def result(**changes: Any) -> SummaryResult:
    """A finished summary's figures (one token, one message, nothing kept) with ``changes``."""
    base = SummaryResult(
        text="s",
        segments=[],
        fields={},
        covered_messages=1,
        source_tokens=1,
        summary_tokens=1,
        summarizer="extractive",
        identifiers_kept=0,
        identifiers_total=0,
    )
    return replace(base, **changes)


def start(cid: str, covers_to: int, **changes: Any) -> SummaryStart:
    """An automatic running summary up to ``covers_to`` begun by owner A for a minute, with
    ``changes``."""
    base = SummaryStart(
        cid,
        parent_id=None,
        strategy="running",
        covers_to_message_id=covers_to,
        trigger="auto",
        owner="A",
        lease_seconds=60,
    )
    return replace(base, **changes)


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    s = await Store.open(tmp_path / "t.db")
    yield s  # type: ignore[misc]
    await s.close()


async def test_fresh_database_is_migrated_with_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "a.db"
    store = await Store.open(path)
    try:
        db = store.connection
        async with db.execute("PRAGMA user_version") as c:
            assert (await c.fetchone())[0] == LATEST_VERSION  # type: ignore[index]
        async with db.execute("PRAGMA journal_mode") as c:
            assert (await c.fetchone())[0] == "wal"  # type: ignore[index]
        async with db.execute("PRAGMA foreign_keys") as c:
            assert (await c.fetchone())[0] == 1  # type: ignore[index]
        async with db.execute("PRAGMA busy_timeout") as c:
            assert (await c.fetchone())[0] >= 5000  # type: ignore[index]
    finally:
        await store.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


async def test_newer_schema_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE x (y)")
    con.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer tui-chat"):
        await Store.open(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


async def test_garbage_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a usable tui-chat database"):
        await Store.open(path)
    assert path.read_bytes() == before


async def test_reopen_keeps_rows(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    store = await Store.open(path)
    conv = await store.conversations.create(title="t", model="m")
    await add(store, conv.id, "user", "hello")
    await store.close()
    store = await Store.open(path)
    try:
        assert [m.text for m in await store.messages.history(conv.id)] == ["hello"]
    finally:
        await store.close()


async def test_turn_numbers_follow_the_turn_definition(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    await add(store, conv.id, "user", "q1")
    await store.messages.add(
        conv.id,
        role="assistant",
        content=[{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        text="",
        token_count=3,
    )
    await store.messages.add(
        conv.id,
        role="user",
        content=[{"type": "tool_result", "tool_use_id": "t1", "content": "r"}],
        text="r",
        token_count=3,
    )
    await add(store, conv.id, "assistant", "a1")
    await add(store, conv.id, "user", "q2")
    turns = [m.turn for m in await store.messages.history(conv.id)]
    assert turns == [1, 1, 1, 1, 2]


async def test_resolve_by_prefix_last_and_ambiguity(store: Store) -> None:
    a = await store.conversations.create(title="a", model="m", conversation_id="abc111")
    await store.conversations.create(title="b", model="m", conversation_id="abc222")
    assert (await store.conversations.resolve("abc1")).id == a.id
    with pytest.raises(NotFound, match="several"):
        await store.conversations.resolve("abc")
    with pytest.raises(NotFound):
        await store.conversations.resolve("zzz")
    await add(store, a.id, "user", "bump")
    assert (await store.conversations.resolve("last")).id == a.id


async def test_fts_search_is_safe_for_any_query(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    await add(store, conv.id, "user", "We store rows in PostgreSQL 15 with pgvector")
    await add(store, conv.id, "assistant", "한국어 문장도 검색된다")
    hits = await store.search.find("postgres")
    assert [h.message_id for h in hits] and "PostgreSQL" in hits[0].snippet
    assert await store.search.find("한국어")
    for query in ['"', "*", "NEAR(", "-", "a AND", "OR", '"unbalanced', "col:x", "\x00", ""]:
        await store.search.find(query)  # never raises


async def test_search_follows_update_of_text(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    mid = await add(store, conv.id, "assistant", "")
    await store.messages.update(mid, text="streamed zebra", content=text_block("streamed zebra"))
    assert [h.message_id for h in await store.search.find("zebra")] == [mid]


async def test_paging_newest_first(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    ids = [
        await add(store, conv.id, "user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(10)
    ]
    page = await store.messages.history(conv.id, limit=3, newest=True)
    assert [m.id for m in page] == ids[-3:]
    older = await store.messages.history(conv.id, before_id=page[0].id, limit=3, newest=True)
    assert [m.id for m in older] == ids[-6:-3]


async def test_lease_cas_and_one_auto_version_per_boundary(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    ids = [
        await add(store, conv.id, "user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(6)
    ]
    row = await store.summaries.begin(start(conv.id, ids[3]))
    with pytest.raises(Conflict):
        await store.summaries.begin(start(conv.id, ids[3], owner="B"))
    finished = result(
        text="sum",
        covered_messages=4,
        source_tokens=40,
        summary_tokens=4,
        identifiers_kept=1,
        identifiers_total=2,
    )
    done, activated = await store.summaries.complete(row.id, finished, owner="A")
    assert activated and done.status == "completed"
    assert (await store.summaries.active(conv.id)).id == done.id  # type: ignore[union-attr]
    # Same boundary, same parent, automatic again: refused by the unique index.
    with pytest.raises(Conflict):
        await store.summaries.begin(start(conv.id, ids[3], owner="B"))
    # CAS: a version whose parent is no longer active completes but is not activated.
    second = await store.summaries.begin(
        start(conv.id, ids[5], parent_id=done.id, trigger="manual")
    )
    await store.summaries.activate(conv.id, None)  # the user rolled back meanwhile
    finished = result(text="s2", covered_messages=6, source_tokens=60, summary_tokens=5)
    _, activated = await store.summaries.complete(second.id, finished, owner="A")
    assert not activated
    assert await store.summaries.active(conv.id) is None


async def test_expired_lease_is_taken_over(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    mid = await add(store, conv.id, "user", "x")
    row = await store.summaries.begin(start(conv.id, mid, owner="dead", lease_seconds=-1))
    assert (
        await store.summaries.take_over_expired(conv.id, owner="live", lease_seconds=60) is not None
    )
    assert (await store.summaries.get(row.id)).lease_owner == "live"
    with pytest.raises(Conflict):
        late = result(text="late", covered_messages=1, summarizer="x")
        await store.summaries.complete(row.id, late, owner="dead")
    failed = await store.summaries.fail(row.id, owner="live", error="boom")
    assert failed.status == "failed" and failed.text == "" and failed.error == "boom"
    assert await store.summaries.consecutive_failures(conv.id) == 1


async def test_hostile_text_is_stored(store: Store) -> None:
    conv = await store.conversations.create(title="t\x00\ud800", model="m")
    assert "\x00" not in conv.title
    mid = await add(store, conv.id, "user", "a\x00b\udfffc\x1b[31m")
    message = await store.messages.get(mid)
    assert message.text == "ab\ufffdc\x1b[31m" or message.text == "ab?c\x1b[31m"


async def test_delete_removes_everything(store: Store) -> None:
    conv = await store.conversations.create(title="t", model="m")
    mid = await add(store, conv.id, "user", "findme")
    await store.anchors.pin(mid, "note")
    await store.conversations.delete(conv.id)
    assert await store.search.find("findme") == []
    with pytest.raises(NotFound):
        await store.conversations.get(conv.id)
    assert await store.integrity_check() == "ok"


async def test_backup(store: Store, tmp_path: Path) -> None:
    conv = await store.conversations.create(title="t", model="m")
    await add(store, conv.id, "user", "saved")
    target = tmp_path / "backup.db"
    await store.backup(target)
    copy = await Store.open(target)
    try:
        assert [m.text for m in await copy.messages.history(conv.id)] == ["saved"]
    finally:
        await copy.close()
    with pytest.raises(TargetExistsError, match="exists"):
        await store.backup(target)
    await store.backup(target, force=True)  # the rule of tui_chat.files: --force replaces
