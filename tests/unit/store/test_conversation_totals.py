"""Per-conversation totals (message count, token sum, last message time) kept on write.

The conversation list reads them instead of counting every message; these tests compare them
with what counting the messages gives after every kind of write.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tui_chat.core.tokens import get_counter
from tui_chat.engine.transfer.transfer import import_conversation
from tui_chat.store.repository import Store


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def _counted(path: Path) -> dict[str, tuple[int, int, str | None]]:
    """Totals computed from the messages themselves, for every conversation."""
    con = sqlite3.connect(path)
    try:
        rows = con.execute(
            "SELECT c.id, count(m.id), IFNULL(sum(m.token_count), 0), max(m.created_at) "
            "FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id GROUP BY c.id"
        ).fetchall()
    finally:
        con.close()
    return {cid: (n, tokens, last) for cid, n, tokens, last in rows}


async def _listed(store: Store) -> dict[str, tuple[int, int]]:
    infos = await store.conversations.all(include_archived=True)
    return {i.conversation.id: (i.message_count, i.token_count) for i in infos}


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    s = await Store.open(tmp_path / "t.db")
    yield s  # type: ignore[misc]
    await s.close()


async def _check(store: Store, path: Path) -> None:
    counted = _counted(path)
    assert await _listed(store) == {cid: (n, t) for cid, (n, t, _) in counted.items()}
    con = sqlite3.connect(path)
    try:
        kept = dict(con.execute("SELECT conversation_id, last_message_at FROM conversation_totals"))
    finally:
        con.close()
    for cid, (n, _, last) in counted.items():
        assert kept.get(cid) == (last if n else None)


async def test_totals_follow_appends_completions_and_deletes(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    one = await store.conversations.create(title="one", model="m")
    two = await store.conversations.create(title="two", model="m")
    await _check(store, path)  # no messages: zero totals, no last time
    await store.messages.add(one.id, role="user", content=_text("hi"), text="hi", token_count=5)
    reply = await store.messages.add(
        one.id, role="assistant", content=_text(""), text="", token_count=0, status="streaming"
    )
    await _check(store, path)
    # A streaming reply completing changes its token count: the sum follows.
    await store.messages.update(
        reply.id, content=_text("a long answer"), text="a long answer", token_count=40
    )
    await _check(store, path)
    rows = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": _text(f"m{n}"), "text": f"m{n}"}
        for n in range(50)
    ]
    await store.messages.add_many(two.id, [{**r, "token_count": 3 + n} for n, r in enumerate(rows)])
    await _check(store, path)
    assert (await _listed(store))[two.id] == (50, sum(3 + n for n in range(50)))
    await store.conversations.delete(one.id)
    await _check(store, path)
    assert one.id not in await _listed(store)


async def test_list_pages_through_conversations(store: Store) -> None:
    ids = [(await store.conversations.create(title=f"c{n}", model="m")).id for n in range(5)]
    for n, cid in enumerate(ids):
        await store.messages.add(cid, role="user", content=_text("x"), text="x", token_count=n)
    everything = await store.conversations.all()
    pages = [await store.conversations.all(limit=2, offset=at) for at in (0, 2, 4)]
    assert [i.conversation.id for page in pages for i in page] == [
        i.conversation.id for i in everything
    ]
    assert [len(p) for p in pages] == [2, 2, 1]


async def test_import_leaves_totals_right_and_a_failed_one_leaves_none(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "t.db"
    good = tmp_path / "good.json"
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"}
        for n in range(30)
    ]
    good.write_text(json.dumps({"title": "imported", "messages": messages}))
    made = await import_conversation(store, good, default_model="m", counter=get_counter())
    await _check(store, path)
    assert (await _listed(store))[made.id][0] == 30
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"messages": [*messages, {"role": "robot", "content": "x"}]}))
    with pytest.raises(ValueError):
        await import_conversation(store, bad, default_model="m", counter=get_counter())
    await _check(store, path)
    assert list(await _listed(store)) == [made.id]


async def test_migration_fills_totals_of_existing_messages(tmp_path: Path) -> None:
    from tui_chat.store.migrations import MIGRATIONS

    path = tmp_path / "old.db"
    version = next(
        n for n, sql in enumerate(MIGRATIONS, 1) if "CREATE TABLE conversation_totals" in sql
    )
    con = sqlite3.connect(path)
    for sql in MIGRATIONS[: version - 1]:
        con.executescript(sql)
    con.execute(f"PRAGMA user_version = {version - 1}")
    con.execute(
        "INSERT INTO conversations (id, title, model, created_at, updated_at) "
        "VALUES ('c1', 't', 'm', '2025-01-01', '2025-01-01')"
    )
    con.executemany(
        "INSERT INTO messages (conversation_id, role, content, text, turn, token_count, status, "
        "created_at) VALUES ('c1', 'user', '[]', 'x', ?, ?, 'complete', ?)",
        [(n, 10 + n, f"2025-01-0{n + 1}") for n in range(3)],
    )
    con.commit()
    con.close()
    store = await Store.open(path)
    try:
        await _check(store, path)
        assert (await _listed(store))["c1"] == (3, 33)
    finally:
        await store.close()
