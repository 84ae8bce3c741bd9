"""Smaller things people notice: escape closes a panel before it cancels a
reply, f4 opens the active version, a key clears the composer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, on_screen, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.context_preview import ContextPreviewScreen
from tui_chat.tui.screens.inspector import InspectorScreen


async def test_escape_closes_a_panel_before_it_cancels_a_reply(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_hang(600, after_chunks=1)  # ends when the app goes
        screen.composer.load_text("tell me a long story")
        await pilot.press("enter")
        await until(pilot, lambda: screen.streaming_id is not None)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: screen.panels.is_shown("conversations"))
        await pilot.press("escape")
        await until(pilot, lambda: not screen.panels.is_shown("conversations"))
        assert app.replying and app.focused is screen.composer
        assert not any("cancelled" in n for n in notifications(app))
        await pilot.press("escape")  # now it cancels the reply
        await until(pilot, lambda: not app.replying)
        await settle(pilot)


async def test_f4_opens_the_active_version_unless_the_timeline_has_the_focus(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path)
    await service.summaries.activate(demo.id, 1)
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: screen.timeline.highlighted is not None)
        highlighted = screen.timeline.highlighted
        assert highlighted is not None and highlighted.version != 1
        screen.view.action_focus_composer()  # the timeline stays open, the composer has the focus
        await pilot.pause()
        await pilot.press("f4")
        await on_screen(pilot, InspectorScreen)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        assert inspector.summary.version == 1 and inspector.active


async def test_ctrl_l_clears_the_composer_and_up_brings_the_text_back(
    service: ChatService,
) -> None:
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press(*"a draft to drop", "ctrl+l")
        assert screen.composer.text == ""
        await pilot.press("up")
        assert screen.composer.text == "a draft to drop"


async def test_settings_open_on_the_first_field_without_selecting_it_and_presets_say_what_they_do(
    service: ChatService,
) -> None:
    from textual.widgets import Input, Select

    from tui_chat.tui.screens.settings import SettingsScreen

    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        settings = app.screen
        model = settings.query_one("#model", Input)
        await until(pilot, lambda: app.focused is model)
        assert model.selection.is_empty
        await pilot.press("end", "x")
        assert model.value == conversation.model + "x"
        labels = [str(prompt) for prompt, _ in settings.query_one("#preset", Select)._options]
        assert any("adaptive — summarises within a 100k working budget" in x for x in labels)


async def test_help_columns_do_not_wrap_at_80_columns(service: ChatService) -> None:
    from textual.containers import Grid
    from textual.widgets import Static

    from tui_chat.tui.screens.help import HelpScreen

    app = make_app(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await on_screen(pilot, HelpScreen)
        await settle(pilot)
        sections = list(app.screen.query_one(Grid).query(Static))
        assert sections
        for section in sections:
            lines = str(section.visual).splitlines()
            assert section.size.height == len(lines), lines[0]  # no line took two rows


async def test_search_results_mark_archived_conversations(service: ChatService) -> None:
    from textual.widgets import OptionList

    from tui_chat.tui.screens.search import SearchScreen

    kept = await service.conversations.new("kept")
    old = await service.conversations.new("old")
    for conversation in (kept, old):
        await engine_of(service).store.messages.add(
            conversation.id,
            role="user",
            content=[{"type": "text", "text": "zebra"}],
            text="zebra",
            token_count=2,
        )
    await service.conversations.archive(old.id)
    app = make_app(service, kept.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f", *"zebra", "enter")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await until(pilot, lambda: len(search.hits) == 2)
        options = search.query_one(OptionList)
        shown = {
            hit.conversation_id: str(options.get_option_at_index(i).prompt)
            for i, hit in enumerate(search.hits)
        }
        assert "[archived]" in shown[old.id] and "[archived]" not in shown[kept.id]


async def test_conversation_list_rows_do_not_wrap_at_80_columns(service: ChatService) -> None:
    from textual.widgets import OptionList

    from tui_chat.tui.widgets.conversation_list import ConversationList

    long = await service.conversations.new("A very long conversation title that goes on and on")
    for _ in range(3):
        await engine_of(service).store.messages.add(
            long.id,
            role="user",
            content=[{"type": "text", "text": "x" * 40}],
            text="x" * 40,
            token_count=123_456,
        )
    await service.conversations.archive(long.id)
    short = await service.conversations.new("short")
    app = make_app(service, short.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b", "f6")
        listing = app.query_one(ConversationList)
        await until(pilot, lambda: len(listing.conversations) == 2)
        await settle(pilot)
        options = listing.query_one(OptionList)
        assert options.virtual_size.height == 2 * options.option_count  # two lines a row


def test_context_preview_labels_merged_runs_and_the_new_message_by_id() -> None:
    from tui_chat.core.models import Message
    from tui_chat.tui.screens.context_preview import message_labels

    def stored(message_id: int, role: str) -> Message:
        return Message(
            id=message_id,
            conversation_id="c",
            role=role,  # type: ignore[arg-type]
            content=[{"type": "text", "text": "x"}],
            text="x",
            turn=message_id,
            token_count=1,
            status="complete",
            created_at="2026-03-14T10:30:00+00:00",
        )

    request = {"messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]}
    sent = [stored(3, "user"), stored(4, "user"), stored(5, "assistant"), stored(9, "user")]
    labels = message_labels(request, sent, new_message=True)
    assert labels == ["#3 + #4", "#5", "#9 + new message"]
    # A shape the builder never makes: numbered by place, never a wrong id.
    assert message_labels(request, [*sent, stored(10, "assistant")], new_message=True) == [
        "message 1",
        "message 2",
        "message 3",
    ]


async def test_context_preview_numbers_the_messages_by_their_id(
    service: ChatService, tmp_path: Path
) -> None:
    texts = ["where to go?", "Lisbon.", "and when?", "In May."]
    messages = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"title": "Chat", "messages": messages}))
    conversation = await service.transfer.import_file(path)
    stored = await service.messages.history(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.composer.load_text("and the weather?")
        await pilot.press("ctrl+o")
        await on_screen(pilot, ContextPreviewScreen)
        shown = str(app.screen.query_one("#request-readable", Static).visual)
        heads = [
            line for line in shown.splitlines() if line.startswith("── ") and "system" not in line
        ]
        ids = [m.id for m in stored]
        assert heads == [
            f"── #{ids[0]} · user",
            f"── #{ids[1]} · assistant",
            f"── #{ids[2]} · user",
            f"── #{ids[3]} · assistant",
            "── new message · user · cache breakpoint",
        ]


async def test_a_list_read_begun_before_archived_is_shown_does_not_hide_them_again(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Failed in a loaded CI run: the start-up's list read (without archived) ended after the
    # one f6 began, and the list showed one conversation under "Conversations (and archived)".
    from tui_chat.tui.widgets.conversation_list import ConversationList

    old = await service.conversations.new("old")
    await service.conversations.archive(old.id)
    current = await service.conversations.new("current")
    app = make_app(service, current.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        listing = app.query_one(ConversationList)
        # Start-up fills the list a moment after the first frame, in the screen's own queue:
        # patched before that, its read (without archived) would be held, and the screen with it.
        await until(pilot, lambda: len(listing.conversations) == 1)
        await settle(pilot)
        held = asyncio.Event()
        reads: list[bool] = []
        read = service.conversations.list

        async def list_held(*, include_archived: bool = False, **kw: Any) -> Any:
            reads.append(include_archived)
            if not include_archived:
                await held.wait()  # the earlier read, still under way
            return await read(include_archived=include_archived, **kw)

        monkeypatch.setattr(service.conversations, "list", list_held)
        screen.run_worker(screen.refresh_conversations())
        await until(pilot, lambda: False in reads)  # (the outside-writes watch may read too)
        await pilot.press("ctrl+b", "f6")
        await until(pilot, lambda: len(listing.conversations) == 2)
        held.set()
        await settle(pilot)
        assert reads[0] is False and True in reads
        assert len(listing.conversations) == 2
