"""``escape`` while a prompt waits for the reply: the reply is cancelled and the queued prompt
comes back to the composer, unsent (it was sent at once after the cancel)."""

from __future__ import annotations

import json

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, ready, settle, until
from tui_chat.engine.service import ChatService


async def test_escape_cancels_the_reply_and_keeps_the_queued_prompt_in_the_composer(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_hang(600, after_chunks=1)  # ends when cancelled
        await pilot.press(*"tell me a long story", "enter")
        await until(pilot, lambda: screen.streaming_id is not None)
        await pilot.press(*"the queued one", "enter")
        await until(pilot, lambda: len(screen.replies.queued) == 1)
        await pilot.press(*"still typing")
        sent = len(fake_anthropic.message_requests)
        await pilot.press("escape")
        await until(pilot, lambda: not app.replying)
        await settle(pilot)
        assert screen.replies.queued == []
        assert screen.composer.text == "the queued one\n\nstill typing"
        assert screen.composer.border_subtitle is None  # nothing waits any more
        assert len(fake_anthropic.message_requests) == sent  # nothing was sent after the cancel
        bodies = [json.dumps(r.body) for r in fake_anthropic.message_requests]
        assert not any("the queued one" in body for body in bodies)
        history = await keyed_service.messages.history(conversation.id)
        assert [m.text for m in history if m.role == "user"] == ["tell me a long story"]
        assert any("back in the composer" in n for n in notifications(app))
