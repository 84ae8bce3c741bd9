"""The summary inspector shows identifier retention per kind and what was not kept (issue 10)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ready
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.inspector import InspectorScreen


async def test_inspector_lists_retention_per_kind_and_the_identifiers_lost(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    summaries = {s.version: s for s in await service.summaries(conversation.id)}
    expected = (await service.retention(conversation.id, summaries[2])).to_json()
    assert expected["total"] > 0
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+t", "down", "enter")
        await pilot.pause()
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        text = str(inspector.query_one("#summary-identifiers", Static).visual)
        assert f"{expected['kept']} of {expected['total']} identifiers kept" in text
        for kind, cell in expected["by_kind"].items():
            assert f"{kind:<8} {cell['kept']:>5} / {cell['total']:<5}" in text
        for item in expected["not_kept"]:
            assert item["value"] in text
