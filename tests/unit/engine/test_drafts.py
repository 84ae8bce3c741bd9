"""Drafts (migration 4): one unsent draft per conversation, kept across a restart."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tests.seam import engine_of
from tui_chat.engine.service import ChatService

MakeService = Callable[..., Awaitable[ChatService]]


async def test_a_draft_is_kept_per_conversation_and_across_a_restart(
    make_service: MakeService,
) -> None:
    service = await make_service()
    first = await service.conversations.new("first")
    second = await service.conversations.new("second")
    assert await service.drafts.get(first.id) == ""
    await service.drafts.set(first.id, "half a\nthought")
    await service.drafts.set(second.id, "other")
    await service.drafts.set(second.id, "other, edited")
    await service.close()
    reopened = await make_service()
    assert await reopened.drafts.get(first.id) == "half a\nthought"
    assert await reopened.drafts.get(second.id) == "other, edited"


async def test_a_blank_draft_and_a_deleted_conversation_leave_no_row(
    make_service: MakeService,
) -> None:
    service = await make_service()
    conversation = await service.conversations.new("c")
    await service.drafts.set(conversation.id, "text\x00with a NUL")
    assert await service.drafts.get(conversation.id) == "textwith a NUL"
    await service.drafts.set(conversation.id, "   \n")
    assert await service.drafts.get(conversation.id) == ""
    await service.drafts.set(conversation.id, "again")
    await service.conversations.delete(conversation.id)
    async with engine_of(service).store.connection.execute("SELECT count(*) FROM drafts") as cursor:
        row = await cursor.fetchone()
    assert row is not None and row[0] == 0
    await service.drafts.set("no-such-conversation", "lost?")  # nothing to attach it to
    assert await service.drafts.get("no-such-conversation") == ""
