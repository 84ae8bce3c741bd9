"""Message actions live in the chat pane: it pins through its own source and tells the screen
with a typed message (PinsChanged), which recounts the gauge; it asks the screen to edit, fork
or compact up to a message with typed messages too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.message import Message

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, ready, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane, PinsChanged
from tui_chat.tui.widgets.message_actions import (
    CompactUptoRequested,
    EditRequested,
    ForkRequested,
)


def _conversation_file(folder: Path) -> Path:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} " * 20}
        for i in range(4)
    ]
    path = folder / "four.json"
    path.write_text(json.dumps({"title": "Four", "messages": messages}))
    return path


async def test_the_chat_pane_pins_its_selected_message(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = await service.transfer.import_file(_conversation_file(tmp_path))
    stored = await service.messages.page(conversation.id)
    app = make_app(service, conversation.id)
    heard: list[PinsChanged] = []
    async with app.run_test(size=SIZE, message_hook=_keep(heard)) as pilot:
        screen = await ready(pilot)
        pane = app.query_one(ChatPane)
        await until(pilot, lambda: screen.breakdown is not None)
        recounts: list[bool] = []
        recount = screen.refresh_gauge

        async def counted(*, full: bool = False) -> None:
            recounts.append(full)
            await recount(full=full)

        monkeypatch.setattr(screen, "refresh_gauge", counted)
        pane.focus()
        pane.selected = stored[1].id
        await pane.pins.action_toggle()  # the pane's own action, no screen in between
        assert await service.messages.pinned_ids(conversation.id) == {stored[1].id}
        view = pane.view_for(stored[1].id)
        assert view is not None and view.pinned
        await until(pilot, lambda: bool(heard) and bool(recounts))  # the screen recounted
        await pane.pins.action_toggle()
        assert await service.messages.pinned_ids(conversation.id) == set()
        assert not view.pinned
        pane.selected = None
        await pane.pins.action_toggle()  # nothing selected: said, nothing pinned
        await until(pilot, lambda: any("Select a message first" in n for n in notifications(app)))
        assert await service.messages.pinned_ids(conversation.id) == set()


def _keep(heard: list[PinsChanged]) -> Callable[[Message], None]:
    def hook(message: Message) -> None:
        if isinstance(message, PinsChanged):
            heard.append(message)

    return hook


class TestRequestsToTheScreen:
    """Edit, fork and compact up to here are the chat pane's actions (its ``message`` part):
    they reach the screen as typed messages, which the screen handles."""

    async def test_e_s_and_f_post_typed_requests_the_screen_handles(
        self, service: ChatService, tmp_path: Path
    ) -> None:
        conversation = await service.transfer.import_file(_conversation_file(tmp_path))
        await service.conversations.set_setting(conversation.id, "summarizer", "extractive")
        stored = await service.messages.page(conversation.id)
        app = make_app(service, conversation.id)
        heard: list[Message] = []
        kinds = (EditRequested, ForkRequested, CompactUptoRequested)
        async with app.run_test(size=SIZE, message_hook=_keep_all(heard, kinds)) as pilot:
            screen = await ready(pilot)
            await pilot.press("f5", "up", "up", "up")  # the first prompt
            assert screen.chat.selected == stored[0].id
            await pilot.press("down", "down", "e")
            await until(pilot, lambda: screen.drafting.editing == stored[2].id)
            assert [type(m) for m in heard] == [EditRequested]
            assert isinstance(heard[0], EditRequested) and heard[0].message.id == stored[2].id
            assert screen.composer.text.startswith("message number 2")
            await pilot.press("f5", "up", "s")  # the first reply: compact up to it
            await until(pilot, lambda: bool(screen.timeline.summaries))
            assert isinstance(heard[-1], CompactUptoRequested)
            assert heard[-1].message_id == stored[1].id
            await pilot.press("f")
            await until(pilot, lambda: screen.conversation_id != conversation.id)
            assert isinstance(heard[-1], ForkRequested) and heard[-1].message_id == stored[1].id

    async def test_a_reply_is_not_edited_and_no_request_is_posted(
        self, service: ChatService, tmp_path: Path
    ) -> None:
        conversation = await service.transfer.import_file(_conversation_file(tmp_path))
        app = make_app(service, conversation.id)
        heard: list[Message] = []
        async with app.run_test(
            size=SIZE, message_hook=_keep_all(heard, (EditRequested,))
        ) as pilot:
            screen = await ready(pilot)
            await pilot.press("f5", "e")  # the newest message is a reply
            await until(pilot, lambda: any("Only your own" in n for n in notifications(app)))
            assert heard == [] and screen.drafting.editing is None and screen.chat.navigating


def _keep_all(heard: list[Message], kinds: tuple[type[Message], ...]) -> Callable[[Message], None]:
    def hook(message: Message) -> None:
        if isinstance(message, kinds):
            heard.append(message)

    return hook
