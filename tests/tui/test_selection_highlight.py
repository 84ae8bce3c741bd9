"""The selection's highlight is painted on every block of the message it moves to and taken
off the one it leaves, though only the message's own styles are matched again (a restyle of
each block was a third of a held ``up``'s time)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.color import Color
from textual.widgets import Markdown

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.message_view import MessageView


def _block_background(view: MessageView) -> Color:
    """The background the first block of a reply's Markdown is drawn on."""
    block = view.query_one(Markdown).children[0]
    return block.visual_style.background or Color(0, 0, 0, 0)


async def test_the_highlight_is_drawn_under_the_blocks_of_the_selected_reply(
    service: ChatService, tmp_path: Path
) -> None:
    messages = [
        {"role": ("user", "assistant")[i % 2], "content": f"line {i}\n\nmore {i}"}
        for i in range(6)
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"title": "Six", "messages": messages}))
    conversation = await service.transfer.import_file(path)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        newest, older = pane.views[-1], pane.views[-3]
        plain = _block_background(newest)
        await pilot.press("f5")
        await until(pilot, lambda: pane.selected == newest.message_id)
        await settle(pilot)
        lit = _block_background(newest)
        assert lit != plain
        for _ in range(2):
            await pilot.press("up")
        await until(pilot, lambda: pane.selected == older.message_id)
        await settle(pilot)
        assert _block_background(older) == lit
        assert _block_background(newest) == plain
