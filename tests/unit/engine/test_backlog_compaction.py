"""A long backlog is compacted in committed steps: bounded reads, and a killed run resumes.

The step is made small (40 messages) so that a few hundred messages are a backlog; the
offline summarizer folds them (no key), so nothing here needs the network.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from tests.seam import engine_of, open_service
from tui_chat.config import Config
from tui_chat.core.models import Summary
from tui_chat.engine.compaction import due, worker
from tui_chat.engine.conversations import versions
from tui_chat.engine.service import ChatService

STEP = 40
MESSAGES = 300


@pytest.fixture
async def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChatService:
    monkeypatch.setattr(worker, "BACKLOG_STEP_MESSAGES", STEP)
    monkeypatch.setattr(due, "BACKLOG_STEP_MESSAGES", STEP)
    s = await open_service(Config(api_key=None, db_path=tmp_path / "b.db"))
    yield s  # type: ignore[misc]
    await s.close()


async def _backlog(service: ChatService) -> str:
    conversation = await service.conversations.new("backlog")
    await service.conversations.set_setting(conversation.id, "preset", "window")
    rows = [
        {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": f"Message {n} about module_{n}.py."}],
            "text": f"Message {n} about module_{n}.py.",
            "token_count": 12,
        }
        for n in range(MESSAGES)
    ]
    await engine_of(service).store.messages.add_many(conversation.id, rows)
    return conversation.id


async def _versions(service: ChatService, cid: str) -> list[Summary]:
    """Every version of a conversation, oldest first."""
    return sorted(await service.summaries.versions(cid), key=lambda v: v.version)


def _spy_reads(service: ChatService) -> list[int]:
    """Record how many messages each history read returned."""
    sizes: list[int] = []
    history = engine_of(service).store.messages.history

    async def spied(*args: Any, **kwargs: Any) -> Any:
        found = await history(*args, **kwargs)
        sizes.append(len(found))
        return found

    engine_of(service).store.messages.history = spied  # type: ignore[method-assign]
    return sizes


async def _fold(
    service: ChatService, cid: str, progress: Callable[[int, int, Summary], None] | None = None
) -> Summary:
    compact: Callable[..., Awaitable[Summary]] = service.summaries.compact
    return await compact(cid, None, progress)


async def test_a_backlog_is_folded_in_steps_that_never_read_it_whole(
    service: ChatService,
) -> None:
    cid = await _backlog(service)
    reads = _spy_reads(service)
    steps: list[tuple[int, int]] = []
    last = await _fold(service, cid, lambda done, expected, _: steps.append((done, expected)))
    versions = await _versions(service, cid)
    assert len(versions) >= MESSAGES // STEP - 1
    # Each version continues the one before it, further along the history.
    for before, after in pairwise(versions):
        assert after.parent_id == before.id
        assert after.covers_to_message_id > before.covers_to_message_id
    assert last.id == versions[-1].id and last.covered_messages >= MESSAGES - STEP
    assert max(reads) <= STEP + 1
    assert [done for done, _ in steps] == list(range(1, len(versions) + 1))
    assert steps[0][1] >= MESSAGES // STEP - 1  # the first estimate already sees the backlog


async def test_a_killed_run_resumes_from_the_last_version_it_committed(
    service: ChatService, tmp_path: Path
) -> None:
    cid = await _backlog(service)
    uninterrupted = await open_service(Config(api_key=None, db_path=tmp_path / "u.db"))
    try:
        other = await _backlog(uninterrupted)
        whole = await _fold(uninterrupted, other)
    finally:
        await uninterrupted.close()

    class Killed(Exception):
        pass

    def kill_after_two(done: int, _expected: int, _summary: Summary) -> None:
        if done == 2:
            raise Killed

    with pytest.raises(Killed):
        await _fold(service, cid, kill_after_two)
    kept = await _versions(service, cid)
    assert len(kept) == 2  # both committed before the kill
    resumed = await _fold(service, cid)
    versions = await _versions(service, cid)
    assert versions[:2] == kept
    assert versions[2].parent_id == kept[1].id
    # The same place as a run that was never stopped.
    assert resumed.covered_messages == whole.covered_messages
    assert len(versions) == len(await uninterrupted_versions(tmp_path / "u.db", other))


async def uninterrupted_versions(path: Path, cid: str) -> list[Summary]:
    service = await open_service(Config(api_key=None, db_path=path))
    try:
        return await _versions(service, cid)
    finally:
        await service.close()


async def test_retention_of_the_last_version_reads_its_ledger_not_the_backlog(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = await _backlog(service)
    last = await _fold(service, cid)
    texts = engine_of(service).store.messages.texts
    read: list[int] = []

    async def spied(*args: Any, **kwargs: Any) -> Any:
        found = await texts(*args, **kwargs)
        read.append(len(found))
        return found

    monkeypatch.setattr(engine_of(service).store.messages, "texts", spied)
    service.summaries.kept.clear()
    fast = await service.summaries.retention(cid, last)
    assert read == []  # the chain's ledgers are complete: no message text is read
    assert fast.total["path"] == last.covered_messages  # one module_N.py per message
    monkeypatch.setattr(versions, "_ledger_complete", _never)
    service.summaries.kept.clear()  # figures are kept per version and settings
    assert await service.summaries.retention(cid, last) == fast  # reading every covered text agrees
    assert read == [last.covered_messages]


async def test_a_version_without_a_ledger_in_the_chain_makes_retention_read_the_texts(
    service: ChatService,
) -> None:
    cid = await _backlog(service)
    last = await _fold(service, cid)
    assert versions._ledger_complete(last, await _versions(service, cid))
    first = (await _versions(service, cid))[0]
    # A version made before ledgers existed (schema 8) reads back with an empty one.
    await engine_of(service).store.connection.execute(
        "UPDATE summaries SET ledger = '[]' WHERE id = ?", (first.id,)
    )
    assert not versions._ledger_complete(last, await _versions(service, cid))


def _never(*_args: Any) -> bool:
    return False
