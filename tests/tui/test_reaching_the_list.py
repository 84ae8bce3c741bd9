"""After typing, ``shift+tab`` reaches the messages, whose footer names ``f5`` (letters become
commands); ``shift+tab`` again reaches the conversation list, opened when hidden, where the
footer names ``f5`` too."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app
from tests.tui.helpers import ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen


def _footer_keys(screen: MainScreen) -> dict[str, str]:
    return {
        key: binding.description
        for key, (_node, binding, enabled, _tip) in screen.active_bindings.items()
        if binding.show and enabled
    }


async def test_shift_tab_reaches_the_messages_then_the_list_and_both_name_f5(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False, turns=6)
    app = make_app(service, demo.id)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        assert not screen.panels.is_shown("conversations")
        await pilot.press(*"a draft", "shift+tab")
        await until(pilot, lambda: app.focused is screen.chat)
        assert _footer_keys(screen).get("f5") == "Commands"
        await pilot.press("shift+tab")  # the hidden list opens and takes the focus
        await until(pilot, lambda: screen.conversations.has_focus_within)
        assert screen.panels.is_shown("conversations")
        assert _footer_keys(screen).get("f5") == "Commands"
        await pilot.press("f5")
        await until(pilot, lambda: screen.conversations.navigating)
        assert screen.composer.text == "a draft"
