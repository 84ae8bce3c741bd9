"""Pilot tests of the chat: sending, streaming, inert output, cancel/retry, history, gauge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Markdown, Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, notifications, ready, settle, until
from tui_chat.config import Config
from tui_chat.engine.service import ChatService
from tui_chat.tui.app import ChatApp
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.pages import Pages


async def _send(pilot: object, text: str) -> None:
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    composer = pilot.app.query_one(Composer)
    composer.focus()
    composer.load_text(text)
    await pilot.press("enter")


def _import_file(folder: Path, count: int) -> Path:
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"message number {i}",
        }
        for i in range(count)
    ]
    path = folder / "long.json"
    path.write_text(json.dumps({"title": "Long", "messages": messages}))
    return path


async def test_starts_with_a_new_conversation_on_an_empty_database(
    service: ChatService,
) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        infos = await service.conversations.list()
        assert [i.conversation.id for i in infos] == [screen.conversation_id]
        assert chat(app).views == []
        assert app.focused is screen.composer


async def test_opens_the_last_conversation_or_the_one_named(service: ChatService) -> None:
    first = await service.conversations.new("first")
    second = await service.conversations.new("second")
    async with make_app(service).run_test(size=SIZE) as pilot:
        assert (await ready(pilot)).conversation_id == second.id
    async with make_app(service, first.id[:8]).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.conversation_id == first.id
        assert "first" in str(screen.title)


async def test_unknown_conversation_exits_with_a_reason(service: ChatService) -> None:
    app = make_app(service, "no-such-conversation")
    async with app.run_test(size=SIZE):
        pass
    assert app.return_code == 1
    assert await service.conversations.list() == []


async def test_send_streams_the_reply_and_stores_both_messages(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_reply("Hello **there**, here is `code`.")
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _send(pilot, "Say hello")
        await settle(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        stored = await keyed_service.messages.page(conv_id)
        assert [(m.role, m.status) for m in stored] == [
            ("user", "complete"),
            ("assistant", "complete"),
        ]
        views = chat(app).views
        assert [v.message_id for v in views] == [m.id for m in stored]
        markdown = views[1].query_one(Markdown)
        assert markdown.source == "Hello **there**, here is `code`."
        assert screen.composer.text == ""
        assert screen.streaming_id is None
        # The gauge and the title follow the new state of the conversation.
        gauge = screen.gauge.breakdown
        assert gauge is not None and gauge.sections["recent"] > 0
        assert screen.gauge.cost > 0
        # Named from its first prompt once the reply's after-work has read the new title.
        await until(pilot, lambda: "Say hello" in str(screen.title))


async def test_model_output_markup_and_escapes_are_shown_not_interpreted(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    hostile = "[bold]B[/bold] [@click=app.quit]quit[/] \x1b[31mred\x1b]0;pwned\x07 end"
    fake_anthropic.push_reply(hostile)
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await _send(pilot, "[reverse]user markup[/reverse] \x1b[2J")
        await settle(pilot)
        user_view, reply_view = chat(app).views
        shown = reply_view.query_one(Markdown).source
        assert "\x1b" not in shown and "\x07" not in shown
        assert "[bold]B[/bold]" in shown and "[@click=app.quit]quit[/]" in shown
        assert "␛[31mred" in shown
        user_text = str(user_view.query_one(".user-text", Static).visual)
        assert "[reverse]user markup[/reverse]" in user_text
        assert "\x1b" not in user_text
        # Clicking the would-be link must not quit: the app is still running.
        await pilot.click(MessageView, offset=(5, 2))
        await pilot.pause()
        assert app.is_running


async def test_escape_cancels_a_streaming_reply_and_retry_completes_it(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_hang(600, after_chunks=2)  # ends when the client goes (the cancel)
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _send(pilot, "Tell me a long story")
        await until(pilot, lambda: screen.streaming_id is not None)
        streaming = chat(app).view_for(screen.streaming_id or 0)
        assert streaming is not None
        await until(pilot, lambda: bool(streaming.query_one(Markdown).source))
        assert app.replying
        await pilot.press("escape")
        await settle(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        reply = (await keyed_service.messages.page(conv_id))[-1]
        assert reply.status == "incomplete" and reply.text
        view = chat(app).view_for(reply.id)
        assert view is not None and view.has_class("-failed") and view.has_class("-last")
        assert "ctrl+r" in str(view.query_one(".status", Static).visual)

        fake_anthropic.push_reply("The complete story.")
        await pilot.press("ctrl+r")
        await settle(pilot)
        stored = await keyed_service.messages.page(conv_id)
        assert stored[-1].status == "complete"
        assert stored[-1].text == "The complete story."
        assert chat(app).views[-1].query_one(Markdown).source == "The complete story."


async def test_an_api_error_is_shown_with_what_to_do_and_retry_works(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_error(529)
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        await _send(pilot, "Are you there?")
        await settle(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        stored = await keyed_service.messages.page(conv_id)
        assert stored[0].role == "user" and stored[0].text == "Are you there?"
        assert stored[-1].status == "error"
        view = chat(app).views[-1]
        assert view.has_class("-failed")
        assert any("overloaded" in n.lower() for n in notifications(app))
        # After a restart the stored reason is still shown.
        await chat(app).show(conv_id)
        await pilot.pause()
        reopened = chat(app).views[-1].query_one(".status", Static)
        assert "the API is overloaded (529)" in str(reopened.visual)  # the stored reason
        view = chat(app).views[-1]
        await pilot.click(view.query_one("#retry"))
        await settle(pilot)
        assert (await keyed_service.messages.page(conv_id))[-1].status == "complete"


async def test_without_a_key_sending_explains_how_to_set_it(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        banner = app.query_one("#no-key", Static)
        assert banner.display
        assert "ANTHROPIC_API_KEY" in str(banner.visual)
        await _send(pilot, "hello?")
        await settle(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        assert await service.messages.page(conv_id) == []
        assert screen.composer.text == "hello?"
        assert any("ANTHROPIC_API_KEY" in n for n in notifications(app))


async def test_with_a_key_there_is_no_banner(keyed_service: ChatService) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert not app.query_one("#no-key").display


async def test_newline_key_inserts_a_line_break_without_sending(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("a", "ctrl+j", "b")
        assert screen.composer.text == "a\nb"
        conv_id = screen.conversation_id
        assert conv_id is not None
        assert await service.messages.page(conv_id) == []


async def test_prompt_history_walks_up_and_back_down_to_the_draft(
    keyed_service: ChatService,
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for prompt in ("first prompt", "second prompt"):
            await _send(pilot, prompt)
            await settle(pilot)
        composer = screen.composer
        await pilot.press(*"dra", "f", "t")
        await pilot.press("up")
        assert composer.text == "second prompt"
        await pilot.press("up")
        assert composer.text == "first prompt"
        await pilot.press("down", "down")
        assert composer.text == "draft"


async def test_history_is_loaded_from_the_conversation(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await service.transfer.import_file(_import_file(tmp_path, 6))
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("up")
        assert screen.composer.text == "message number 4"


async def test_gauge_counts_the_draft_while_typing(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: screen.gauge.breakdown is not None)
        assert screen.gauge.breakdown is not None
        assert screen.gauge.breakdown.sections["new_message"] == 0
        draft = "how many tokens is this draft going to take in the request?"
        await pilot.press(*draft)
        conv_id = screen.conversation_id
        assert conv_id is not None
        expected = (await service.requests.gauge(conv_id, draft)).sections["new_message"]
        assert expected > 0

        def counted() -> bool:
            breakdown = screen.gauge.breakdown
            return breakdown is not None and breakdown.sections["new_message"] == expected

        await until(pilot, counted)
        rendered = str(screen.gauge.render())
        assert f"draft {expected}" in rendered


async def test_gauge_counts_excerpts_recalled_for_the_draft(
    service: ChatService, tmp_path: Path
) -> None:
    from tests.tui.seed import seed_demo

    demo = await seed_demo(service, tmp_path)
    # A window the folded history could not be carried in: recall is not capped by its cost.
    await service.conversations.set_setting(demo.id, "context_window", "1100")
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)  # the gauge has counted
        assert screen.gauge.breakdown is not None
        assert screen.gauge.breakdown.sections["recall"] == 0
        draft = "what was the rollback plan?"
        await pilot.press(*draft)
        expected = (await service.requests.context(demo.id, draft)).breakdown.sections["recall"]
        assert expected > 0

        def recalled() -> bool:
            breakdown = screen.gauge.breakdown
            return breakdown is not None and breakdown.sections["recall"] == expected

        await until(pilot, recalled)


async def test_only_a_window_of_messages_is_mounted_and_older_pages_load(
    service: ChatService, tmp_path: Path, small_pages: None
) -> None:
    # Four walks up (two pages each) stay short of the first message; the window is pruned.
    conversation = await service.transfer.import_file(_import_file(tmp_path, 200))
    stored = await service.messages.page(conversation.id, limit=1000)
    ids = [m.id for m in stored]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one(ChatPane)
        assert [v.message_id for v in pane.views] == ids[-Pages.FIRST_PAGE :]
        assert pane.has_older
        await pilot.press("f5")
        assert pane.selected == ids[-1]
        # Walk up past several page boundaries with the keyboard: up from the oldest mounted
        # message pages the one before it in (home goes to the conversation's first one).
        for _ in range(4):
            oldest = pane.selected = pane.views[0].message_id
            await pilot.press("up")
            # The page before comes from the database: wait until it is in and selected.
            await until(pilot, lambda: pane.selected != oldest)  # noqa: B023
            await settle(pilot)  # and the page the scroll to the top asked for
        # (at least: selecting the first mounted message scrolls to the top, which pages too)
        assert ids.index(pane.selected) <= len(ids) - 1 - Pages.FIRST_PAGE - Pages.PAGE * 3
        mounted = [v.message_id for v in pane.views]
        assert len(mounted) <= ChatPane.MAX_MOUNTED
        assert mounted == sorted(mounted)
        assert pane.selected in mounted
        assert pane.has_newer
        # Down past the pruned bottom pages the next messages in, without jumping away.
        pane.selected = mounted[-1]
        await pilot.press("down")
        await until(pilot, lambda: pane.selected != mounted[-1])
        following = ids[ids.index(mounted[-1]) + 1]
        assert pane.selected == following
        # The page that came in is mounted first and the far end pruned after it.
        await until(pilot, lambda: len(pane.views) <= ChatPane.MAX_MOUNTED)
        window = [v.message_id for v in pane.views]
        # Still the neighbourhood of the selection, not just the latest page.
        assert following in window and mounted[-1] in window
        assert window[0] < ids[-Pages.PAGE]
        assert len(window) <= ChatPane.MAX_MOUNTED and window == sorted(window)
        # The end key jumps back to the latest page.
        await pilot.press("end")
        await until(pilot, lambda: not pane.has_newer and pane.selected == ids[-1])
        window = [v.message_id for v in pane.views]
        assert window[-Pages.FIRST_PAGE :] == ids[-Pages.FIRST_PAGE :]
        assert pane.selected == ids[-1]
        assert not pane.has_newer


async def test_scrolling_to_the_top_pages_older_messages_in(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await service.transfer.import_file(_import_file(tmp_path, 200))
    ids = [m.id for m in await service.messages.page(conversation.id, limit=1000)]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one(ChatPane)
        first_shown = pane.views[0]
        pane.scroll_home(animate=False, immediate=True)
        shown = Pages.FIRST_PAGE + Pages.PAGE
        await until(pilot, lambda: len(pane.views) == shown)
        assert [v.message_id for v in pane.views] == ids[-shown:]
        # The place is kept, whenever the page is laid out: what was the first message is
        # still at the top of the view (its row: a layout and the scroll that keeps the place
        # come together, test_paging.py).
        await settle(pilot)
        assert pane.scroll_y > 0
        assert first_shown.virtual_region.y - round(pane.scroll_y) == 0


async def test_copy_and_pin_the_selected_message(service: ChatService, tmp_path: Path) -> None:
    conversation = await service.transfer.import_file(_import_file(tmp_path, 4))
    stored = await service.messages.page(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one(ChatPane)
        await pilot.press("f5", "up")
        assert pane.selected == stored[-2].id
        await pilot.press("c")
        assert app.clipboard == stored[-2].text
        view = pane.view_for(stored[-2].id)
        assert view is not None
        header = view.query_one(".header", Static)
        await pilot.press("p")
        await until(pilot, lambda: "pinned" in str(header.visual))
        assert await service.messages.pinned_ids(conversation.id) == {stored[-2].id}
        await pilot.press("p")
        await until(pilot, lambda: "pinned" not in str(header.visual))
        assert await service.messages.pinned_ids(conversation.id) == set()
        await pilot.press("escape")
        assert app.focused is app.main_screen.composer


@pytest.mark.parametrize("ref", [None])
async def test_run_app_entry_point_builds_the_app(no_key_config: Config, ref: str | None) -> None:
    app = ChatApp(no_key_config, conversation_ref=ref, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.conversation is not None
