"""Thinking and web search in the TUI: the thinking streams folded and
dimmed above the reply and opens with ``t``; the searches, results and cited pages are shown
by title and domain, and ``u`` copies their links."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import on_screen, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.thinking_block import ThinkingBlock
from tui_chat.tui.widgets.web_blocks import WebActivity, WebSources


async def test_thinking_and_a_web_search_are_shown_and_open_with_keys(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        conversation = await keyed_service.conversations.new()
        for key in ("thinking", "web_search"):
            await keyed_service.conversations.set_setting(conversation.id, key, "on")
        await screen.open_conversation(conversation.id)
        await settle(pilot)
        fake_anthropic.chunk_delay = 0.001  # thinking arrives in several deltas
        screen.query_one("#composer").focus()
        await pilot.press(*"search for textual widgets")
        await pilot.press("enter")
        pane = screen.query_one(ChatPane)
        await until(pilot, lambda: len(pane.views) == 2)
        reply = pane.views[-1]
        await until(pilot, lambda: reply.message.status == "complete")
        await settle(pilot)
        reply = pane.views[-1]  # the view as mounted now (the pane may have rebuilt it)
        block = reply.query_one(ThinkingBlock)
        folded = str(block.visual)
        assert "▸ Thinking · 5 words · 18 tokens" in folded and "Considering" not in folded
        activity = str(reply.query_one(WebActivity).visual)
        assert "searched the web: “textual widgets”" in activity
        assert "Textual widgets – documentation — docs.python.org" in activity
        sources = str(reply.query_one(WebSources).visual)
        assert "[1] Textual widgets – documentation — docs.python.org" in sources
        assert "[2]" in sources
        # The body marks the cited passages with the sources' numbers.
        body = reply.query_one("Markdown").source
        assert "[1]" in body
        # The default model (Sonnet 5.5) writes its note before the search as thinking: it is
        # the reply's text, first in the body, and not in the folded thinking.
        assert body.startswith("Searching the web for textual widgets.\n\n")
        assert "Searching" not in block.text
        # Navigation mode: t opens the thinking, u copies the links.
        await pilot.press("f5")
        assert pane.selected == reply.message_id
        await pilot.press("t")
        await until(pilot, lambda: block.expanded)
        assert "Considering: search for textual widgets" in str(block.visual)
        await pilot.press("u")
        assert app.clipboard.splitlines()[:2] == [
            "https://docs.python.org/textual-widgets",
            "https://en.wikipedia.org/textual-widgets",
        ]
        await pilot.press("t")
        await until(pilot, lambda: not block.expanded)


async def test_a_stored_reply_shows_its_thinking_and_sources_when_opened(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    for key in ("thinking", "web_search"):
        await keyed_service.conversations.set_setting(conversation.id, key, "on")
    assert (await keyed_service.send(conversation.id, "Search for rich tables")).error is None
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        reply = app.main_screen.query_one(ChatPane).views[-1]
        assert isinstance(reply, MessageView)
        assert "Thinking" in str(reply.query_one(ThinkingBlock).visual)
        assert "[1]" in str(reply.query_one(WebSources).visual)
        note = "Searching the web for rich tables."
        assert reply.query_one("Markdown").source.startswith(note)  # the note is reply text
        assert note not in reply.query_one(ThinkingBlock).text


async def test_the_settings_screen_turns_thinking_and_search_on(
    keyed_service: ChatService,
) -> None:
    from textual.widgets import Input, Static, Switch

    from tui_chat.tui.screens.settings import SettingsScreen

    conversation = await keyed_service.conversations.new("web")
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        settings = app.screen
        settings.query_one("#thinking", Switch).value = True
        settings.query_one("#web_search", Switch).value = True
        settings.query_one("#web_allowed_domains", Input).value = "docs.python.org, bad domain!"
        await pilot.press("ctrl+s")
        await settle(pilot)
        # A bad domain is refused with the engine's message; nothing is lost from the form.
        assert isinstance(app.screen, SettingsScreen)
        assert "not a domain" in str(settings.query_one("#settings-error", Static).visual)
        settings.query_one("#web_allowed_domains", Input).value = "docs.python.org"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        policy = keyed_service.conversations.policy_for(
            await keyed_service.conversations.resolve(conversation.id)
        )
        assert policy.thinking == "on" and policy.web_search
        assert policy.web_allowed_domains == ("docs.python.org",)


async def test_thinking_streams_before_the_text_and_a_cancel_keeps_it(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    await keyed_service.conversations.set_setting(conversation.id, "thinking", "on")
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        # The stream stalls after the thinking's deltas and its signature, before any text.
        fake_anthropic.push_hang(30.0, after_chunks=3)
        screen.query_one("#composer").focus()
        await pilot.press(*"a question worth a long think")
        await pilot.press("enter")
        pane = screen.query_one(ChatPane)
        await until(
            pilot, lambda: len(pane.views) == 2 and bool(pane.views[-1].query(ThinkingBlock))
        )
        block = pane.views[-1].query_one(ThinkingBlock)
        await until(pilot, lambda: "Thinking… · 7 words" in str(block.visual))
        assert pane.views[-1].message.status == "streaming"
        await pilot.press("escape")  # cancel the reply
        stored: list[dict[str, object]] = []

        async def reply_content() -> None:
            stored[:] = (await keyed_service.messages.page(conversation.id))[-1].content

        await until(pilot, lambda: pane.views[-1].message.status == "incomplete")
        await reply_content()
        assert stored and stored[0]["type"] == "thinking"
        assert str(stored[0]["thinking"]).startswith("Considering: a question worth")
