"""Cited recall in the TUI: a reply citing recalled messages shows ``[#id]``
after the cited text and chips under it; ``r`` in navigation mode (and the palette's "Go to
cited message") selects each cited message in turn, paging it in, then the reply again."""

from __future__ import annotations

from typing import Any

from tests.notified import raised
from tests.seam import engine_of
from tests.tui.conftest import make_app
from tests.tui.helpers import ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.recall_chips import RecallChips


def _citation(message_id: int, text: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": "recall",
        "title": "Recalled from the summarized part",
        "cited_text": f"#{message_id} user: {text}",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


async def _conversation(service: ChatService) -> tuple[str, list[int], int]:
    conv = await service.conversations.new("recall")
    ids = []
    for i in range(60):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{role} line {i}: crate {1000 + i} went to dock {i % 7}."
        added = await engine_of(service).store.messages.add(
            conv.id,
            role=role,  # type: ignore[arg-type]
            content=[{"type": "text", "text": text}],
            text=text,
            token_count=20,
        )
        ids.append(added.id)
    first, second = ids[2], ids[10]
    content = [
        {"type": "text", "text": "From before: "},
        {
            "type": "text",
            "text": "crate 1002 went to dock 2.",
            "citations": [_citation(first, "a")],
        },
        {"type": "text", "text": " Crate 1010 to dock 3.", "citations": [_citation(second, "b")]},
    ]
    await engine_of(service).store.messages.add(
        conv.id,
        role="user",
        content=[{"type": "text", "text": "remember?"}],
        text="remember?",
        token_count=3,
    )
    reply = await engine_of(service).store.messages.add(
        conv.id,
        role="assistant",
        content=content,
        text="".join(b["text"] for b in content),
        token_count=20,
    )
    return conv.id, [first, second], reply.id


async def test_r_goes_to_each_cited_message_and_back(keyed_service: ChatService) -> None:
    cid, cited, reply_id = await _conversation(keyed_service)
    app = make_app(keyed_service, cid)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        pane = app.main_screen.query_one(ChatPane)
        reply = pane.views[-1]
        assert reply.message_id == reply_id
        chips = str(reply.query_one(RecallChips).visual)
        assert f"#{cited[0]}" in chips and f"#{cited[1]}" in chips and "r jumps" in chips
        assert f"dock 2.[#{cited[0]}]" in reply.query_one("Markdown").source
        assert pane.view_for(cited[0]) is None  # far above the page shown
        await pilot.press("f5")
        assert pane.selected == reply_id
        await pilot.press("r")
        await until(pilot, lambda: pane.selected == cited[0])
        assert pane.view_for(cited[0]) is not None
        await pilot.press("r")
        await until(pilot, lambda: pane.selected == cited[1])
        await pilot.press("r")
        await until(pilot, lambda: pane.selected == reply_id)
        # The palette's entry does the same from the reply.
        await app.run_action("app.jump_cited")
        await until(pilot, lambda: pane.selected == cited[0])
        await settle(pilot)


async def test_r_on_a_message_citing_nothing_says_so(keyed_service: ChatService) -> None:
    conv = await keyed_service.conversations.new("plain")
    await engine_of(keyed_service).store.messages.add(
        conv.id, role="user", content=[{"type": "text", "text": "hi"}], text="hi", token_count=1
    )
    app = make_app(keyed_service, conv.id)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        pane = app.main_screen.query_one(ChatPane)
        await pilot.press("f5")
        selected = pane.selected
        await pilot.press("r")
        await until(pilot, lambda: bool(raised(app)))
        assert "cites no earlier message" in raised(app)[-1].message
        assert pane.selected == selected
