"""Branches within a conversation below the UI: families, divergences,
the visible branch, deleting a branch, and an older database's forks migrated."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.seam import engine_of
from tui_chat.core.family import Branch, Family, divergences
from tui_chat.core.models import Message
from tui_chat.engine.conversations import BranchError
from tui_chat.engine.service import ChatService
from tui_chat.store.database import _statements
from tui_chat.store.migrations import MIGRATIONS
from tui_chat.store.repository import Store

MakeService = Callable[..., Awaitable[ChatService]]


async def _add(service: ChatService, cid: str, text: str, role: str = "user") -> Message:
    return await engine_of(service).store.messages.add(
        cid,
        role="user" if role == "user" else "assistant",
        content=[{"type": "text", "text": text}],
        text=text,
        token_count=3,
    )


async def _chat(service: ChatService, turns: int) -> tuple[str, list[int]]:
    conversation = await service.conversations.new()
    ids = []
    for i in range(turns):
        for role in ("user", "assistant"):
            message = await _add(service, conversation.id, f"{role} {i}", role)
            ids.append(message.id)
    return conversation.id, ids


def _branch(bid: str, parent: str | None, shared: int, messages: int, n: int) -> Branch:
    return Branch(bid, bid, parent, shared, None, messages, f"t{n}", f"t{n}")


def test_divergences_of_a_tree() -> None:
    # root: 8 messages; a: edit of the 3rd (shares 2); b: edit of the 3rd too; c: a's 5th edited
    family = Family(
        "root",
        (
            _branch("root", None, 0, 8, 1),
            _branch("a", "root", 2, 6, 2),
            _branch("b", "root", 2, 3, 3),
            _branch("c", "a", 4, 5, 4),
        ),
    )
    assert divergences(family, "root")[0].label == "‹ 1/3 ›"
    assert [(d.position, d.label) for d in divergences(family, "c")] == [
        (3, "‹ 2/3 ›"),
        (5, "‹ 2/2 ›"),
    ]
    at_3 = divergences(family, "c")[0]
    assert at_3.targets == ("root", "c", "b") and at_3.step(1) == "b" and at_3.step(-1) == "root"
    assert divergences(family, "a")[1].targets == ("a", "c")
    # A fork at the end of a branch that then went on: the 1st message after the fork point.
    ended = Family("r", (_branch("r", None, 0, 4, 1), _branch("f", "r", 4, 6, 2)))
    assert [(d.position, d.label) for d in divergences(ended, "f")] == [(5, "‹ 2/2 ›")]
    assert [(d.position, d.label) for d in divergences(ended, "r")] == [(5, "‹ 1/2 ›")]
    # A fork with nothing new yet shows no other version.
    fresh = Family("r", (_branch("r", None, 0, 4, 1), _branch("f", "r", 4, 4, 2)))
    assert divergences(fresh, "r") == () and fresh.shown == "f"


async def test_an_edit_is_a_branch_of_the_same_family(make_service: MakeService) -> None:
    service = await make_service(api_key=None)
    root, ids = await _chat(service, 3)
    edit, _ = await service.branches.fork_for_edit(ids[2])
    await _add(service, edit.id, "edited")
    path = await service.branches.path(edit.id)
    assert path.family.id == root and [b.id for b in path.family.branches] == [root, edit.id]
    assert [(p.divergence.label, p.message_id) for p in path.points] == [
        ("‹ 2/2 ›", (await service.messages.history(edit.id))[2].id)
    ]
    assert "branch 2 of 2" in path.describe()
    back = await service.branches.path(root)
    assert [(p.divergence.label, p.message_id) for p in back.points] == [("‹ 1/2 ›", ids[2])]
    target, message_id, there = await service.branches.sibling(root, 1, ids[5])
    assert target == edit.id and there.label == "‹ 2/2 ›"
    assert message_id == path.points[0].message_id
    # A fork of the fork is in the same family; the visible branch is remembered.
    fork = await service.branches.fork(edit.id, None)
    assert (await service.branches.family(fork.id)).id == root
    await service.branches.viewed(edit.id)
    assert (await service.branches.family(root)).shown == edit.id
    assert (await service.branches.switch(root, "1")).id == root
    assert (await service.branches.family(fork.id)).visible_id == root
    with pytest.raises(BranchError):
        await service.branches.switch(root, "zzz")


async def test_deleting_a_branch_or_the_root_keeps_the_others_reachable(
    make_service: MakeService,
) -> None:
    service = await make_service(api_key=None)
    root, ids = await _chat(service, 4)
    a, _ = await service.branches.fork_for_edit(ids[4])  # shares 4
    await _add(service, a.id, "a's prompt")
    a_ids = [m.id for m in await service.messages.history(a.id)]
    b = await service.branches.fork(a.id, a_ids[4])  # shares 5: a's 5th is a's own
    c = await service.branches.fork(a.id, a_ids[1])  # shares 2
    for branch in (b.id, c.id):
        await _add(service, branch, "new")
    await engine_of(service).store.conversations.delete(a.id)
    family = await service.branches.family(root)
    assert {x.id for x in family.branches} == {root, b.id, c.id}
    heir = family.get(b.id)  # a's first child takes its place
    assert heir is not None and (heir.parent_id, heir.shared) == (root, 4)
    assert heir.parent_message_id == ids[3]
    other = family.get(c.id)
    assert other is not None and (other.parent_id, other.shared) == (b.id, 2)
    b_ids = [m.id for m in await service.messages.history(b.id)]
    assert other.parent_message_id == b_ids[1]
    # The root goes: the family stays one, under its first id.
    await engine_of(service).store.conversations.delete(root)
    family = await service.branches.family(c.id)
    assert family.id == root and family.root.id == b.id
    assert [p.divergence.label for p in (await service.branches.path(c.id)).points] == ["‹ 2/2 ›"]


def _old_database(path: Path) -> tuple[str, str, str]:
    """A database as schema 13 left it, with a fork of a fork (made with plain SQL)."""
    con = sqlite3.connect(path)
    for script in MIGRATIONS[:13]:
        for statement in _statements(script):
            con.execute(statement)
    con.execute("PRAGMA user_version = 13")
    t = "2026-01-01T00:00:00+00:00"
    for cid in ("root", "fork", "grand", "lone"):
        con.execute(
            "INSERT INTO conversations (id, title, model, created_at, updated_at) "
            "VALUES (?, ?, 'm', ?, ?)",
            (cid, cid.title(), t, t),
        )
    texts = {"root": 4, "fork": 3, "grand": 3, "lone": 1}
    for cid, count in texts.items():
        for i in range(count):
            con.execute(
                "INSERT INTO messages (conversation_id, role, content, text, token_count, "
                "created_at, turn, status) VALUES (?, ?, '[]', ?, 1, ?, ?, 'complete')",
                (cid, "user" if i % 2 == 0 else "assistant", f"{cid} {i}", t, i // 2),
            )
    ids = {
        cid: [
            r[0] for r in con.execute("SELECT id FROM messages WHERE conversation_id = ?", (cid,))
        ]
        for cid in texts
    }
    con.execute("INSERT INTO forks VALUES ('fork', 'root', ?, ?)", (ids["root"][1], t))  # shares 2
    con.execute("INSERT INTO forks VALUES ('grand', 'fork', ?, ?)", (ids["fork"][2], t))
    con.commit()
    con.close()
    return "root", "fork", "grand"


async def test_an_older_databases_forks_become_branches(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    root, _fork, grand = _old_database(path)
    store = await Store.open(path)
    try:
        family = await store.forks.family(grand)
        assert family.id == root
        assert sorted((b.id, b.parent_id, b.shared) for b in family.branches) == [
            ("fork", "root", 2),
            ("grand", "fork", 3),
            ("root", None, 0),
        ]
        members, _ = await store.forks.families()
        assert members == {"fork": root, "grand": root}
        assert (await store.forks.family("lone")).branches[0].id == "lone"
    finally:
        await store.close()


def _naive_owner(family: Family, branch_id: str, position: int) -> str | None:
    branch = family.get(branch_id)
    if branch is None or not 1 <= position <= branch.messages:
        return None
    while branch.parent_id is not None and position <= branch.shared:
        parent = family.get(branch.parent_id)
        if parent is None or position > parent.messages:
            break
        branch = parent
    return branch.id


def test_owner_matches_the_definition_on_random_trees() -> None:
    import random

    rng = random.Random(20)
    for _ in range(200):
        branches = [_branch("b0", None, 0, rng.randint(0, 12), 0)]
        for n in range(1, rng.randint(2, 12)):
            parent = rng.choice(branches)
            shared = rng.randint(0, parent.messages)
            branches.append(_branch(f"b{n}", parent.id, shared, shared + rng.randint(0, 6), n))
        family = Family("b0", tuple(branches))
        for branch in branches:
            for position in range(0, branch.messages + 2):
                expected = _naive_owner(family, branch.id, position)
                assert family.owner(branch.id, position) == expected, (branch, position)
        for branch in branches:  # every version shown is reachable and the branch is its own
            for divergence in divergences(family, branch.id):
                assert divergence.targets[divergence.index - 1] == branch.id
                assert len(set(divergence.targets)) == divergence.count


async def test_a_branch_number_wins_over_an_id_prefix_of_digits(make_service: MakeService) -> None:
    service = await make_service(api_key=None)
    root = await engine_of(service).store.conversations.create(
        title="t", model="m", conversation_id="200000000000"
    )
    fork = await service.branches.fork(root.id, None)
    assert (await service.branches.switch(root.id, "2")).id == fork.id  # not the id "2…"
    assert (await service.branches.switch(root.id, "20000")).id == root.id  # a prefix
    assert (await service.branches.switch(fork.id, fork.id[:5])).id == fork.id


async def test_a_message_shared_by_branches_is_one_search_hit(make_service: MakeService) -> None:
    service = await make_service(api_key=None)
    root, _ = await _chat(service, 2)
    last = await _add(service, root, "the quokka question")
    a = await service.branches.fork(root, last.id)  # every message, the quokka one too
    b = await service.branches.fork(root, last.id)
    await _add(service, b.id, "another quokka question")
    await service.branches.viewed(a.id)
    hits = await service.messages.search("quokka")
    assert sorted((h.conversation_id, h.snippet.count("question")) for h in hits) == sorted(
        [(a.id, 1), (b.id, 1)]
    )
    assert len(await service.messages.search("quokka", conversation_id=root)) == 1
    assert len(await engine_of(service).store.search.find("quokka")) == 4


async def test_viewing_is_written_only_for_a_conversation_with_branches(
    make_service: MakeService,
) -> None:
    service = await make_service(api_key=None)
    root, ids = await _chat(service, 2)
    await service.branches.viewed(root)
    assert await engine_of(service).store.forks.shown(root) is None  # no branches: no row
    fork = await service.branches.fork(root, ids[1])
    await service.branches.viewed(root)
    assert await engine_of(service).store.forks.shown(root) == root
    await service.branches.viewed(fork.id)
    assert await engine_of(service).store.forks.shown(root) == fork.id
