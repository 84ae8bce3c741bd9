"""Send leases, orphaned streams, the search index, read-only access."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui_chat.core.settings_check import settings_problems, usable_settings
from tui_chat.store import search_index
from tui_chat.store.access import explain, probe
from tui_chat.store.errors import StoreError
from tui_chat.store.repository import Store
from tui_chat.store.search_index import SearchIndexError
from tui_chat.store.send_leases import ORPHAN_ERROR, new_owner, owner_is_dead


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "t.db")
    yield opened
    await opened.close()


async def _message(store: Store, cid: str, role: str, text: str, status: str = "complete") -> int:
    message = await store.messages.add(
        cid,
        role=role,  # type: ignore[arg-type]
        content=[{"type": "text", "text": text}] if text else [],
        text=text,
        token_count=1,
        status=status,  # type: ignore[arg-type]
    )
    return message.id


def _dead_owner() -> str:
    """The owner string of a process of this host that has exited."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    host, _, rest = new_owner().partition(":")
    return f"{host}:{done.stdout.strip()}:{rest.partition(':')[2]}"


# -- send leases ----------------------------------------------------------------------------


async def test_one_sender_holds_a_conversation_at_a_time(store: Store) -> None:
    cid = (await store.conversations.create(title="t", model="m")).id
    first, second = new_owner(), new_owner()
    assert await store.send_leases.acquire(cid, first, 30)
    assert not await store.send_leases.acquire(cid, second, 30)
    assert await store.send_leases.acquire(cid, first, 30)  # the holder may take it again
    assert await store.send_leases.renew(cid, first, 30)
    assert not await store.send_leases.renew(cid, second, 30)
    await store.send_leases.release(cid, second)  # not the holder: nothing happens
    assert not await store.send_leases.acquire(cid, second, 30)
    await store.send_leases.release(cid, first)
    assert await store.send_leases.acquire(cid, second, 30)


@pytest.mark.slow  # a real process
async def test_an_expired_or_dead_holder_loses_the_lease(store: Store) -> None:
    cid = (await store.conversations.create(title="t", model="m")).id
    assert await store.send_leases.acquire(cid, new_owner(), 0.01)
    time.sleep(0.05)
    assert await store.send_leases.acquire(cid, new_owner(), 30)  # expired
    other = (await store.conversations.create(title="u", model="m")).id
    dead = _dead_owner()
    assert owner_is_dead(dead) and not owner_is_dead(new_owner())
    assert not owner_is_dead("another-host:1:abc")
    assert await store.send_leases.acquire(other, dead, 30)
    assert await store.send_leases.acquire(other, new_owner(), 30)  # its process is gone


@pytest.mark.slow  # a real process
async def test_orphaned_streams_end_incomplete_and_live_ones_are_left(store: Store) -> None:
    orphan = (await store.conversations.create(title="orphan", model="m")).id
    live = (await store.conversations.create(title="live", model="m")).id
    await _message(store, orphan, "user", "q")
    cut = await _message(store, orphan, "assistant", "half a rep", status="streaming")
    await _message(store, live, "user", "q")
    streaming = await _message(store, live, "assistant", "still going", status="streaming")
    assert await store.send_leases.acquire(orphan, _dead_owner(), 30)
    assert await store.send_leases.acquire(live, new_owner(), 30)
    empty_conv = (await store.conversations.create(title="empty", model="m")).id
    empty = await _message(store, empty_conv, "assistant", "", status="streaming")
    assert await store.send_leases.acquire(empty_conv, _dead_owner(), 30)
    # A streaming row under no lease (left by a tui-chat from before the leases) ends too.
    legacy_conv = (await store.conversations.create(title="legacy", model="m")).id
    legacy = await _message(store, legacy_conv, "assistant", "old", status="streaming")
    assert await store.send_leases.settle_orphans() == 3
    assert (await store.messages.get(legacy)).status == "incomplete"
    settled = await store.messages.get(cut)
    assert (settled.status, settled.text, settled.error) == (
        "incomplete",
        "half a rep",
        ORPHAN_ERROR,
    )
    assert (await store.messages.get(empty)).status == "error"
    assert (await store.messages.get(streaming)).status == "streaming"
    assert await store.send_leases.settle_orphans() == 0


@pytest.mark.slow  # a real process
async def test_opening_the_store_settles_orphans(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    first = await Store.open(path)
    cid = (await first.conversations.create(title="t", model="m")).id
    assert await first.send_leases.acquire(cid, _dead_owner(), 30)  # what kill -9 leaves
    reply = await _message(first, cid, "assistant", "partial", status="streaming")
    await first.close()
    again = await Store.open(path)
    try:
        assert (await again.messages.get(reply)).status == "incomplete"
    finally:
        await again.close()


# -- the search index -----------------------------------------------------------------------


async def test_a_dropped_index_is_bypassed_then_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = await Store.open(path)
    cid = (await store.conversations.create(title="t", model="m")).id
    await _message(store, cid, "user", "the zebra config")
    await store.close()
    con = sqlite3.connect(path)
    con.execute("DROP TABLE messages_fts")
    con.commit()
    con.close()
    store = await Store.open(path)
    try:
        await _message(store, cid, "assistant", "zebra.toml it is")  # writes still work
        assert (await store.search_index()).startswith("missing")
        with pytest.raises(SearchIndexError, match="doctor --repair"):
            await store.search.find("zebra")
        before = [(m.id, m.text) for m in await store.messages.history(cid)]
        assert await store.rebuild_search_index() == 2
        assert [(m.id, m.text) for m in await store.messages.history(cid)] == before
        assert await store.search_index() == "ok"
        assert len(await store.search.find("zebra")) == 2
        await _message(store, cid, "user", "quokka")
        assert len(await store.search.find("quokka")) == 1
    finally:
        await store.close()


async def test_a_damaged_index_is_found_and_rebuilt(store: Store) -> None:
    cid = (await store.conversations.create(title="t", model="m")).id
    for n in range(30):
        await _message(store, cid, "user", f"message {n} about zebras")
    async with store.transaction() as db:
        await db.execute("UPDATE messages_fts_data SET block = x'0102030405' WHERE id > 10")
    assert (await store.search_index()).startswith("damaged")
    with pytest.raises(SearchIndexError):
        await store.search.find("zebras")
    await store.rebuild_search_index()
    assert await store.search_index() == "ok"
    assert len(await store.search.find("zebras")) == 30


async def test_an_index_without_triggers_is_reported(store: Store) -> None:
    async with store.transaction() as db:
        await db.execute("DROP TRIGGER messages_fts_insert")
    assert "not kept up to date" in await store.search_index()
    assert not search_index.is_index_error(sqlite3.OperationalError("no such table: other"))


# -- access ---------------------------------------------------------------------------------


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        probe(tmp_path)


def test_a_full_database_is_explained_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "full.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.DatabaseError) as raised:
        con.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
    con.close()
    line = explain(raised.value, path)
    assert line is not None and str(path) in line and "disk is full" in line
    readonly = sqlite3.OperationalError("attempt to write a readonly database")
    line = explain(readonly, path)
    assert line is not None and "read-only" in line and str(path) in line
    assert explain(ValueError("other"), path) is None


# -- settings -------------------------------------------------------------------------------


def test_settings_problems_and_the_usable_part() -> None:
    bad = {"preset": "nope", "context_window": -1, "recall": True, "frobnicate": 1}
    problems = settings_problems(bad)
    assert len(problems) == 3
    assert any("preset" in p for p in problems) and any("frobnicate" in p for p in problems)
    assert usable_settings(bad) == {"recall": True}
    assert settings_problems({"preset": "window", "recall": "on"}) == []
    assert settings_problems([1]) == ["settings must be an object, not list"]


class HeldWriteLock:
    """A store whose database another connection holds the write lock of (another process),
    and a write into it that waits for that lock on the connection's thread."""

    def __init__(self, store: Store, other: sqlite3.Connection) -> None:
        self.store = store
        self.other = other

    async def write(self) -> None:
        async with self.store.transaction() as db:
            await db.execute("INSERT INTO calibration VALUES ('m', 1.0, 1)")

    def release(self) -> None:
        """The other process commits: a BEGIN queued meanwhile now succeeds."""
        self.other.execute("COMMIT")


@pytest.fixture
async def held(tmp_path: Path) -> AsyncIterator[HeldWriteLock]:
    store = await Store.open(tmp_path / "t.db")
    other = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield HeldWriteLock(store, other)
    finally:
        other.close()
        await store.close()


async def _steps(count: int = 3) -> None:
    """Let the tasks run up to their next wait (a call queued on the connection's thread)."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_transaction_cancelled_while_waiting_to_begin_leaves_none_open(
    held: HeldWriteLock,
) -> None:
    task = asyncio.create_task(held.write())
    await _steps()  # its BEGIN waits on the connection's thread
    task.cancel()
    await _steps()
    held.release()  # the queued BEGIN now succeeds, after the cancellation
    with contextlib.suppress(asyncio.CancelledError):
        await task
    # The connection is not left inside that transaction: the next one works.
    await held.store.set_calibration("m", 1.5, 2)
    assert await held.store.calibration("m") == (1.5, 2)


async def test_a_transaction_cancelled_twice_while_waiting_to_begin_leaves_none_open(
    held: HeldWriteLock,
) -> None:
    # At shutdown a task can be cancelled again while its BEGIN is being undone: the lock must
    # stay held until the ROLLBACK is queued, or the next BEGIN runs inside that transaction.
    task = asyncio.create_task(held.write())
    await _steps()  # the task queues its BEGIN on the connection's thread
    task.cancel()
    await _steps(1)  # it starts undoing the BEGIN
    task.cancel()
    await _steps(1)
    second = asyncio.create_task(held.store.set_calibration("m", 1.5, 2))
    await _steps()  # its BEGIN is queued too
    held.release()  # the first BEGIN now succeeds, after both cancellations
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await second
    assert await held.store.calibration("m") == (1.5, 2)
