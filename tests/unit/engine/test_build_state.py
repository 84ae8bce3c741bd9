"""One build state per conversation, kept by one rule: the conversation's revision in the store.

Every write that can change a conversation's next request counts its revision up (SQLite
triggers, so another process's writes count too); the engine keeps the request it built while
the revision, the calibration and the model's figures are the same. Nothing else invalidates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.seam import engine_of
from tui_chat.core.models import ContentBlock
from tui_chat.engine.service import ChatService
from tui_chat.store.repository import Store
from tui_chat.store.summaries import SummaryResult, SummaryStart


async def _say(store: Store, cid: str, role: str, text: str) -> int:
    content: list[ContentBlock] = [{"type": "text", "text": text}]
    message = await store.messages.add(
        cid, role="user" if role == "user" else "assistant", content=content, text=text,
        token_count=len(text.split()) + 4,
    )  # fmt: skip
    return message.id


async def test_every_write_that_changes_a_request_counts_the_revision_up(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "r.db")
    try:
        cid = (await store.conversations.create(title="t", model="m", system_prompt="")).id
        seen = [await store.conversations.revision(cid)]

        async def changed(why: str) -> None:
            now = await store.conversations.revision(cid)
            assert now > seen[-1], f"{why} left the revision at {now}"
            seen.append(now)

        async def unchanged(why: str) -> None:
            assert await store.conversations.revision(cid) == seen[-1], f"{why} counted"

        first = await _say(store, cid, "user", "hello there")
        await changed("a message added")
        await store.messages.update(first, text="hello again")
        await changed("a message rewritten")
        await store.anchors.pin(first, "note")
        await changed("a pin")
        await store.anchors.unpin(first)
        await changed("an unpin")
        await store.conversations.update(cid, settings={"preset": "window"})
        await changed("the settings")
        await store.conversations.update(cid, system_prompt="Be brief.")
        await changed("the system prompt")
        await store.conversations.update(cid, model="other")
        await changed("the model")
        await store.conversations.update(cid, title="renamed")
        await unchanged("a new title")
        await store.drafts.set(cid, "typing…")
        await unchanged("a draft")
        assert await store.conversations.revision("nope") == -1
    finally:
        await store.close()


async def test_a_compaction_lease_renewed_or_taken_over_leaves_the_revision(
    tmp_path: Path,
) -> None:
    """An in-progress version is never sent: its worker renewing the lease (every few
    seconds while a summary call runs) or another taking it over leaves every kept build
    valid; the version's start, completion and failure count. Before, each renewal counted,
    and the gauge built the whole request again while a compaction ran."""
    store = await Store.open(tmp_path / "r.db")
    try:
        cid = (await store.conversations.create(title="t", model="m", system_prompt="")).id
        first = await _say(store, cid, "user", "hello there")
        await _say(store, cid, "assistant", "hi")

        def start(owner: str) -> SummaryStart:
            return SummaryStart(cid, None, "running", first, "auto", owner, lease_seconds=0.0)

        async def revision() -> int:
            return await store.conversations.revision(cid)

        version = await store.summaries.begin(start("one"))
        begun = await revision()
        assert await store.summaries.renew_lease(version.id, owner="one", lease_seconds=0.0)
        assert await revision() == begun, "a lease renewal counted"
        taken = await store.summaries.take_over_expired(cid, owner="two", lease_seconds=60.0)
        assert taken is not None and taken.lease_owner == "two"
        assert await store.summaries.renew_lease(version.id, owner="two", lease_seconds=60.0)
        assert await revision() == begun, "a take-over counted"
        await store.summaries.fail(version.id, owner="two", error="the call failed")
        failed = await revision()
        assert failed > begun, "a failure left the revision"
        again = await store.summaries.begin(start("three"))
        await store.summaries.complete(again.id, _result(), owner="three")
        assert await revision() > failed, "a completion left the revision"
    finally:
        await store.close()


def _result() -> SummaryResult:
    return SummaryResult(
        text="They said hello.", segments=[], fields={}, covered_messages=1, source_tokens=4,
        summary_tokens=4, summarizer="extractive", identifiers_kept=0, identifiers_total=0,
    )  # fmt: skip


async def _gauge_tokens(service: ChatService, cid: str) -> int:
    return (await service.requests.gauge(cid)).input_tokens


async def test_a_write_of_another_process_shows_in_the_gauge(
    make_service: Callable[..., Awaitable[ChatService]], tmp_path: Path
) -> None:
    """The gauge's kept request follows writes it was never told of (another process pins a
    message, sets a system prompt, adds a turn): before the revision, a pin made by
    ``tui-chat pin`` in a shell left the open TUI's gauge without it until the next send."""
    service = await make_service(api_key=None)
    cid = (await service.conversations.new("t")).id
    await _say(engine_of(service).store, cid, "user", "first question " * 20)
    await _say(engine_of(service).store, cid, "assistant", "first answer " * 20)
    before = await _gauge_tokens(service, cid)
    assert await _gauge_tokens(service, cid) == before  # kept: same revision

    other = await Store.open(service.db_path)  # another process's connection
    try:
        await other.conversations.update(cid, system_prompt="Answer in French. " * 10)
        with_system = await _gauge_tokens(service, cid)
        assert with_system > before
        await _say(other, cid, "user", "second question " * 20)
        await _say(other, cid, "assistant", "second answer " * 20)
        assert await _gauge_tokens(service, cid) > with_system
    finally:
        await other.close()


async def test_the_kept_request_is_the_one_built_anew(
    make_service: Callable[..., Awaitable[ChatService]],
) -> None:
    """What the gauge keeps is what a fresh build gives after each kind of change."""
    service = await make_service(api_key=None)
    cid = (await service.conversations.new("t")).id
    ids = [await _say(engine_of(service).store, cid, role, f"{role} words {n} " * 15)
           for n in range(6) for role in ("user", "assistant")]  # fmt: skip

    async def same() -> None:
        conversation = await service.conversations.get(cid)
        kept = await service.requests.base(conversation)
        fresh = await service.requests.build(conversation)
        assert kept.request == fresh.request
        assert kept.breakdown == fresh.breakdown

    await same()
    await service.messages.pin(ids[2])
    await same()
    await service.conversations.set_setting(cid, "preset", "threshold")
    await same()
    await service.messages.unpin(ids[2])
    await same()
    await service.summaries.compact(cid)
    await same()
    await service.summaries.activate(cid, 0)
    await same()
