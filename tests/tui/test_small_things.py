"""Smaller things people notice (issue 22, item 11): escape closes a panel before it cancels a
reply, f4 opens the active version, a key clears the composer."""

from __future__ import annotations

from pathlib import Path

from tests.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.inspector import InspectorScreen


async def test_escape_closes_a_panel_before_it_cancels_a_reply(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.new_conversation()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_hang(30, after_chunks=1)
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
    await service.activate(demo.id, 1)
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: screen.timeline.highlighted is not None)
        highlighted = screen.timeline.highlighted
        assert highlighted is not None and highlighted.version != 1
        screen.action_focus_composer()  # the timeline stays open, the composer has the focus
        await pilot.pause()
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        assert inspector.summary.version == 1 and inspector.active


async def test_ctrl_l_clears_the_composer_and_up_brings_the_text_back(
    service: ChatService,
) -> None:
    conversation = await service.new_conversation()
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

    conversation = await service.new_conversation()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, SettingsScreen))
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
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        sections = list(app.screen.query_one(Grid).query(Static))
        assert sections
        for section in sections:
            lines = str(section.visual).splitlines()
            assert section.size.height == len(lines), lines[0]  # no line took two rows


async def test_search_results_mark_archived_conversations(service: ChatService) -> None:
    from textual.widgets import OptionList

    from tui_chat.tui.screens.search import SearchScreen

    kept = await service.new_conversation("kept")
    old = await service.new_conversation("old")
    for conversation in (kept, old):
        await service.store.messages.add(
            conversation.id,
            role="user",
            content=[{"type": "text", "text": "zebra"}],
            text="zebra",
            token_count=2,
        )
    await service.archive(old.id)
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

    long = await service.new_conversation("A very long conversation title that goes on and on")
    for _ in range(3):
        await service.store.messages.add(
            long.id,
            role="user",
            content=[{"type": "text", "text": "x" * 40}],
            text="x" * 40,
            token_count=123_456,
        )
    await service.archive(long.id)
    short = await service.new_conversation("short")
    app = make_app(service, short.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b", "f6")
        listing = app.query_one(ConversationList)
        await until(pilot, lambda: len(listing.conversations) == 2)
        await settle(pilot)
        options = listing.query_one(OptionList)
        assert options.virtual_size.height == 2 * options.option_count  # two lines a row
