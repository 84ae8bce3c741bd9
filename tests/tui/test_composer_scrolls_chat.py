"""The chat scrolls from the composer: ``pageup``/``pagedown`` a page, ``ctrl+home``/``ctrl+end``
to its start and end, the focus staying in the composer (as opencode and Claude Code do)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, ready, settle, until
from tui_chat.core.models import Conversation
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.page_loads import PageLoads


async def _long(service: ChatService, folder: Path, count: int) -> Conversation:
    messages = [
        {
            "role": ("user", "assistant")[i % 2],
            "content": f"question {i}" if i % 2 == 0 else f"answer {i}\n\nmore\n\nlines",
        }
        for i in range(count)
    ]
    path = folder / "long.json"
    path.write_text(json.dumps({"title": "Long", "messages": messages}))
    return await service.transfer.import_file(path)


async def test_page_keys_in_the_composer_scroll_the_chat_and_ctrl_home_end_jump(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The page keys' own scroll, measured in the first window: no page loaded ahead of them
    # (the window of 20 short messages is within two screens of its top).
    monkeypatch.setattr(PageLoads, "AHEAD", 0.0)
    conversation = await _long(service, tmp_path, 160)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        await pilot.press(*"typing")
        assert app.focused is screen.composer
        bottom = pane.scroll_y
        assert bottom == pane.max_scroll_y > 0
        await pilot.press("pageup")
        await until(pilot, lambda: pane.scroll_y < bottom)
        assert bottom - pane.scroll_y == pane.scrollable_content_region.height
        await pilot.press("pagedown")
        await until(pilot, lambda: pane.scroll_y == bottom)
        await pilot.press("ctrl+home")  # the first page is loaded, its top shown
        await until(pilot, lambda: not pane.has_older and pane.scroll_y == 0)
        first = min(v.message_id for v in pane.views)
        assert pane.views[0].message_id == first and pane.selected is None
        assert pane.views[0].message.text == "question 0"
        await pilot.press("ctrl+end")  # back to the newest, followed
        await until(pilot, lambda: not pane.has_newer and pane.scroll_y == pane.max_scroll_y)
        assert pane.views[-1].message.text.startswith("answer 159")
        assert app.focused is screen.composer and screen.composer.text == "typing"
        assert pane.selected is None
