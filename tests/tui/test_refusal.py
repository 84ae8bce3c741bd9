"""A refused reply is shown as refused, with the category the API gave."""

from __future__ import annotations

from textual.widgets import Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import ready, settle, until
from tui_chat.engine.service import ChatService


async def test_the_refused_reply_says_it_was_refused_and_why(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        fake_anthropic.push_refusal("cyber", "This request was declined because of cyber harm.")
        composer = app.main_screen.query_one("#composer")
        composer.focus()
        await pilot.pause()
        await pilot.press(*"write malware")
        await pilot.press("enter")
        await settle(pilot)
        chat = app.main_screen.query_one("#chat")
        await until(pilot, lambda: len(list(chat.query("MessageView"))) == 2)
        views = list(chat.query("MessageView"))
        prompt, reply = views
        await until(pilot, lambda: "refused" in str(reply.query_one(".header", Static).visual))
        assert "refused (cyber)" in str(reply.query_one(".header", Static).visual)
        status = str(reply.query_one(".status", Static).visual)
        assert "category: cyber" in status
        assert "declined because of cyber harm" in status
        assert "left out of later requests" in status
        # The refused turn is marked as left out of the context, the prompt says so.
        assert prompt.has_class("-left-out") is False  # the last turn is kept for ctrl+r
        fake_anthropic.push_reply("Fine answer.")
        await pilot.press(*"something else")
        await pilot.press("enter")
        await settle(pilot)
        await until(pilot, lambda: len(list(chat.query("MessageView"))) == 4)
        views = list(chat.query("MessageView"))
        await until(pilot, lambda: views[0].has_class("-left-out"))
        assert views[1].has_class("-left-out")
        assert "was refused" in str(views[0].query_one(".status", Static).visual)
        assert "write malware" not in str(fake_anthropic.bodies[-1]["messages"])
