"""Pilot tests of the screens: conversations, search, context preview, settings, export, help."""

from __future__ import annotations

import json
from pathlib import Path

from textual.binding import Binding
from textual.widgets import Input, OptionList, Static

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.app import ChatApp
from tui_chat.tui.help_table import help_sections
from tui_chat.tui.screens.context_preview import ContextPreviewScreen
from tui_chat.tui.screens.help import HelpScreen
from tui_chat.tui.screens.inspector import InspectorScreen
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.prompt import Confirm, TextPrompt
from tui_chat.tui.screens.search import SearchScreen
from tui_chat.tui.screens.settings import SettingsScreen
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList


async def test_conversation_list_new_rename_archive_delete(service: ChatService) -> None:
    first = await service.conversations.new("alpha")
    app = make_app(service, first.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        listing = app.query_one(ConversationList)
        assert not listing.display
        await pilot.press("ctrl+b")
        assert listing.display
        await pilot.press("f5", "n")  # letters are commands in navigation mode
        await settle(pilot)
        infos = await service.conversations.list()
        assert len(infos) == 2
        created = screen.conversation_id
        assert created != first.id
        # Rename the new one from the list.
        await pilot.press("ctrl+b", "ctrl+b")
        assert listing.highlighted_id == created
        await pilot.press("f5", "r")
        await on_screen(pilot, TextPrompt)
        app.screen.query_one(Input).value = "beta [b]bold?[/b]"
        await pilot.press("enter")
        await settle(pilot)
        assert (await service.conversations.resolve(created or "")).title == "beta [b]bold?[/b]"
        assert str(screen.title) == "beta [b]bold?[/b]"
        # Delete asks first; "n" keeps it.
        await pilot.press("ctrl+b", "ctrl+b", "f5", "d")
        await on_screen(pilot, Confirm)
        await pilot.press("n")
        await settle(pilot)
        assert len(await service.conversations.list()) == 2
        await pilot.press("delete")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        ids = [i.conversation.id for i in await service.conversations.list()]
        assert ids == [first.id]
        assert screen.conversation_id == first.id
        # Archive hides it from the list and opens another conversation.
        await pilot.press("ctrl+b", "ctrl+b", "f5", "a")
        await settle(pilot)
        assert await service.conversations.list() == [] or all(
            i.conversation.id != first.id for i in await service.conversations.list()
        )
        archived = await service.conversations.list(include_archived=True)
        assert any(i.conversation.id == first.id and i.conversation.archived_at for i in archived)
        assert screen.conversation_id != first.id


async def test_enter_in_the_list_opens_a_conversation(service: ChatService) -> None:
    first = await service.conversations.new("first")
    await service.conversations.new("second")
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.conversation_id != first.id
        await pilot.press("ctrl+b", "down", "enter")
        await settle(pilot)
        assert screen.conversation_id == first.id
        assert app.focused is app.query_one(Composer)


async def test_search_jumps_to_the_hit(service: ChatService, tmp_path: Path) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False)
    other = await service.conversations.new("elsewhere")
    target = next(m for m in await service.messages.page(demo.id) if "setval" in m.text)
    app = make_app(service, other.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        search = app.screen
        assert isinstance(search, SearchScreen)
        await pilot.press(*"setval")
        await pilot.press("enter")
        await until(pilot, lambda: bool(search.hits))
        assert search.hits[0].message_id == target.id
        from tui_chat.core.models import HIT_END, HIT_START
        from tui_chat.tui.screens.search import highlight

        marked = highlight(f"reset {HIT_START}setval{HIT_END} and [x] {HIT_START}y{HIT_END}")
        assert marked.plain == "reset setval and [x] y"  # real brackets stay text
        assert [marked.plain[span.start : span.end] for span in marked.spans] == ["setval", "y"]
        results = search.query_one(OptionList)
        assert app.focused is results
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert screen.conversation_id == demo.id
        pane = app.query_one(ChatPane)
        assert pane.selected == target.id
        # Typing goes on in the composer; f5 goes to the selected hit.
        assert app.focused is screen.composer
        await pilot.press("f5")
        assert app.focused is pane and pane.selected == target.id


async def test_context_preview_shows_the_exact_next_request(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path)
    # A window the folded history could not be carried in: recall is not capped by its cost.
    await service.conversations.set_setting(demo.id, "context_window", "1100")
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        draft = "what was the rollback plan?"
        app.query_one(Composer).load_text(draft)
        await pilot.press("ctrl+o")
        await pilot.pause()
        preview = app.screen
        assert isinstance(preview, ContextPreviewScreen)
        expected = await service.requests.context(demo.id, draft)
        assert json.loads(preview.request_json) == expected.request
        # The draft's own text, then (after its cache breakpoint) any recalled excerpts.
        content = expected.request["messages"][-1]["content"]
        assert next(b.get("text") for b in content if b["type"] == "text") == draft
        assert expected.breakdown.sections["recall"] > 0
        shown = str(preview.query_one("#request-readable", Static).visual)
        assert "── system block 1" in shown and "· user" in shown
        assert draft in shown.rsplit("· user", 1)[-1]  # the last user message, excerpts after
        table = str(preview.query_one("#preview-breakdown Static", Static).visual)
        assert f"{expected.breakdown.input_tokens:,}" in table
        assert "recall" in table
        await pilot.press("c")
        assert json.loads(app.clipboard) == expected.request
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_settings_save_valid_values_and_refuse_invalid_ones(
    service: ChatService,
) -> None:
    conversation = await service.conversations.new("configure me")
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        settings = app.screen
        assert isinstance(settings, SettingsScreen)
        settings.query_one("#compression_rate", Input).value = "0.9"
        await pilot.press("ctrl+s")
        await on_screen(pilot, SettingsScreen)
        assert "compression_rate" in str(settings.query_one("#settings-error", Static).visual)
        assert (await service.conversations.resolve(conversation.id)).settings == {}

        settings.query_one("#compression_rate", Input).value = "0.2"
        settings.query_one("#model", Input).value = "claude-haiku-4-5"
        settings.query_one("#summarizer", Input).value = "extractive"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        saved = await service.conversations.resolve(conversation.id)
        assert saved.model == "claude-haiku-4-5"
        policy = service.conversations.policy_for(saved)
        assert policy.compression_rate == 0.2 and policy.summarizer == "extractive"
        assert "claude-haiku-4-5" in str(screen.sub_title)


async def test_settings_preset_change_applies_the_preset(service: ChatService) -> None:
    conversation = await service.conversations.new("preset")
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        settings = app.screen
        assert isinstance(settings, SettingsScreen)
        from textual.widgets import Select

        settings.query_one("#preset", Select).value = "turns"
        # The preset shows its own knobs (its strategy; "every 3 turns" is the default too).
        strategy = settings.query_one("#strategy", Select)
        await until(pilot, lambda: strategy.value == "segments")
        assert settings.query_one("#every_turns", Input).value == "3"
        await pilot.press("ctrl+s")
        await settle(pilot)
        policy = service.conversations.policy_for(
            await service.conversations.resolve(conversation.id)
        )
        assert policy.preset == "turns" and policy.strategy == "segments"


async def test_export_writes_the_conversation(service: ChatService, tmp_path: Path) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False)
    app = make_app(service, demo.id, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, TextPrompt)
        field = prompt.query_one(Input)
        assert field.value.startswith(str(tmp_path))
        target = tmp_path / "out.json"
        field.value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        written = json.loads(target.read_text())
        expected = json.loads(await service.transfer.export(demo.id, "json"))
        assert written["messages"] == expected["messages"]
        # A .md path gets Markdown.
        await pilot.press("ctrl+s")
        await pilot.pause()
        markdown = tmp_path / "out.md"
        app.screen.query_one(Input).value = str(markdown)
        await pilot.press("enter")
        await settle(pilot)
        assert markdown.read_text() == await service.transfer.export(demo.id, "md")


async def test_export_over_an_existing_file_asks_and_replaces_only_on_yes(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False)
    target = tmp_path / "notes.md"
    target.write_text("my own notes\n")
    app = make_app(service, demo.id, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for answer in ("n", "y"):
            await pilot.press("ctrl+s")
            await on_screen(pilot, TextPrompt)
            app.screen.query_one(Input).value = str(target)
            await pilot.press("enter")
            await on_screen(pilot, Confirm)
            await pilot.press(answer)
            await settle(pilot)
            if answer == "n":
                assert target.read_text() == "my own notes\n"
        assert target.read_text() == await service.transfer.export(demo.id, "md")
        # A directory in the way is never replaced, and nothing is asked.
        folder = tmp_path / "folder.md"
        folder.mkdir()
        await pilot.press("ctrl+s")
        await on_screen(pilot, TextPrompt)
        app.screen.query_one(Input).value = str(folder)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, Confirm) and folder.is_dir()


async def test_help_lists_every_binding(service: ChatService) -> None:
    from tui_chat.tui.widgets.conversation_list import ConversationList as Listing

    listed = {keys for _, entries in help_sections() for keys, _ in entries}
    for owner in (ChatApp, MainScreen, ChatPane, Composer, Listing, InspectorScreen):
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            shown = binding.key_display or " / ".join(binding.key.split(","))
            assert shown in listed, (owner.__name__, binding.key)
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await on_screen(pilot, HelpScreen)
        text = "\n".join(str(w.visual) for w in app.screen.query("Grid > Static"))
        for needle in ("ctrl+t", "Show/hide summary timeline", "Pin/unpin", "Command palette"):
            assert needle in text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_a_failing_screen_task_is_reported(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        screen.conversation_commands.action_rename("no-such-conversation")
        from tests.tui.helpers import notifications

        await until(pilot, lambda: any("no-such-conversation" in n for n in notifications(app)))
        assert isinstance(app.screen, MainScreen)
