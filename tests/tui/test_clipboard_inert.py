"""Copying a hostile reply never puts raw escape sequences on the clipboard; the copy shows them as
visible stand-ins, as the screen does.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ready
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane

HOSTILE = "innocent \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2Jtext\x9b31m"


async def test_copying_a_hostile_reply_copies_no_escape_sequence(
    service: ChatService, tmp_path: Path
) -> None:
    source = tmp_path / "hostile.json"
    source.write_text(
        json.dumps(
            {
                "title": "hostile",
                "messages": [
                    {"role": "user", "content": "say something"},
                    {"role": "assistant", "content": HOSTILE},
                ],
            }
        )
    )
    conversation = await service.transfer.import_file(source)
    stored = await service.messages.page(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = app.query_one(ChatPane)
        await pilot.press("f5")
        assert pane.selected == stored[-1].id
        await pilot.press("c")
        copied = app.clipboard
        assert "innocent" in copied and "text" in copied
        assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0 for c in copied)
