"""A conversation with invalid settings opens, a message bigger than the usable window is
refused and stays in the composer.
"""

from __future__ import annotations

import json

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.composer import Composer


async def test_a_conversation_with_invalid_settings_opens_and_says_how_to_fix_it(
    service: ChatService,
) -> None:
    conversation = await service.conversations.new("bad import")
    await engine_of(service).store.messages.add(
        conversation.id,
        role="user",
        content=[{"type": "text", "text": "hello"}],
        text="hello",
        token_count=2,
    )
    # As an import made before imports were validated left it.
    async with engine_of(service).store.transaction() as db:
        await db.execute(
            "UPDATE conversations SET settings = ? WHERE id = ?",
            (json.dumps({"preset": "nope", "context_window": -1}), conversation.id),
        )
    app = make_app(service)  # the last conversation is the one with the bad settings
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        main = await ready(pilot)
        await settle(pilot)
        assert app.return_code is None and main.conversation is not None
        assert main.conversation.id == conversation.id
        shown = " ".join(notifications(app))
        assert conversation.id in shown and "preset" in shown, shown
        assert f"tui-chat set {conversation.id} preset" in shown, shown


async def test_a_message_bigger_than_the_window_stays_in_the_composer(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new("small window")
    await keyed_service.conversations.set_setting(conversation.id, "context_window", "2000")
    huge = " ".join(f"word{n}" for n in range(6_000))
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        composer = app.query_one(Composer)
        composer.focus()
        composer.load_text(huge)
        await pilot.press("enter")
        await settle(pilot)
        await until(pilot, lambda: composer.text == huge)
        shown = " ".join(notifications(app))
        assert "tokens" in shown and "draft" in shown, shown
    assert fake_anthropic.requests == []
    assert await keyed_service.messages.history(conversation.id) == []
    assert await keyed_service.drafts.get(conversation.id) == huge
