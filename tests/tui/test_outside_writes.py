"""Pilot test: what another process writes shows up in a running TUI — a new
conversation and its count in the list, new messages in the open conversation — and nothing it
does reaches the user as an error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tests.seam import open_service
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, ready, until
from tui_chat.config import Config
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.conversation_list import ConversationList


@pytest.mark.slow  # real tui-chat processes
async def test_the_list_and_the_open_conversation_show_another_process_writes(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    conversation = await keyed_service.conversations.new("open here")
    app = make_app(keyed_service, conversation.id)
    db = str(keyed_service.db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+b")  # the conversation list
        listed = app.query_one(ConversationList)

        def titles() -> dict[str, int]:
            return {i.conversation.title: i.message_count for i in listed.conversations}

        await until(pilot, lambda: "open here" in titles())
        # Another process sends to the open conversation and starts a new one.
        for args in (
            ("send", "-c", conversation.id, "hello from a script"),
            ("send", "--new", "a conversation from elsewhere"),
        ):
            done = await asyncio.to_thread(
                run, isolated_env, "--db", db, *args, fake=fake_anthropic
            )
            assert done.returncode == 0, done.stderr
        await until(pilot, lambda: "a conversation from elsewhere" in titles())
        await until(pilot, lambda: titles()["open here"] == 2)
        await until(pilot, lambda: len(screen.chat.views) == 2)
        texts = [v.message.text for v in screen.chat.views]
        assert texts == ["hello from a script", "Reply to: hello from a script"]
        assert not any("locked" in n or "failed" in n for n in notifications(app))


async def test_the_open_conversation_deleted_by_another_process_gives_way(
    keyed_service: ChatService, key_config: Config
) -> None:
    kept = await keyed_service.conversations.new("kept")
    doomed = await keyed_service.conversations.new("doomed")
    app = make_app(keyed_service, doomed.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        other = await open_service(key_config)  # another process's connection
        try:
            await other.conversations.delete(doomed.id)
        finally:
            await other.close()
        await until(pilot, lambda: screen.conversation_id == kept.id)
        assert any("deleted this conversation" in n for n in notifications(app))
        assert not any("failed" in n for n in notifications(app))


async def test_panels_refreshed_after_another_process_deleted_the_conversation(
    keyed_service: ChatService, key_config: Config
) -> None:
    """A refresh of the panels queued before another process deleted the open conversation
    (the first frame's, a finished reply's) runs after it: it leaves the conversation to the
    watch of outside writes instead of stopping the app with NotFound (it did, now and then,
    in the test above)."""
    kept = await keyed_service.conversations.new("kept")
    doomed = await keyed_service.conversations.new("doomed")
    app = make_app(keyed_service, doomed.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        other = await open_service(key_config)
        try:
            await other.conversations.delete(doomed.id)
        finally:
            await other.close()
        await screen.refresh_panels()  # before the watch has seen the delete
        await until(pilot, lambda: screen.conversation_id == kept.id)
        assert any("deleted this conversation" in n for n in notifications(app))
