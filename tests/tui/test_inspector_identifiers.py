"""The summary inspector shows identifier retention per kind and what was not kept."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, open_timeline, ready, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.inspector import InspectorScreen
from tui_chat.tui.widgets.summary_timeline import SummaryCard


async def test_inspector_lists_retention_per_kind_and_the_identifiers_lost(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    summaries = {s.version: s for s in await service.summaries.versions(conversation.id)}
    expected = (await service.summaries.retention(conversation.id, summaries[2])).to_json()
    assert expected["total"] > 0
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_timeline(pilot)
        await pilot.press("down", "enter")
        await on_screen(pilot, InspectorScreen)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        text = str(inspector.query_one("#summary-identifiers", Static).visual)
        assert f"{expected['kept']} of {expected['total']} identifiers kept" in text
        for kind, cell in expected["by_kind"].items():
            assert f"{kind:<8} {cell['kept']:>5} / {cell['total']:<5}" in text
        for item in expected["not_kept"]:
            assert item["value"] in text


async def test_timeline_card_inspector_figures_and_identifiers_tab_show_one_figure(
    service: ChatService, tmp_path: Path
) -> None:
    """The timeline said ``0/124 (0%)`` while the Identifiers tab said ``175/175``."""
    conversation = await seed_demo(service, tmp_path)
    summaries = {s.version: s for s in await service.summaries.versions(conversation.id)}
    kept = (await service.summaries.retention(conversation.id, summaries[2])).to_json()
    figure = f"{kept['kept']}/{kept['total']} ({kept['kept'] / kept['total']:.0%})"
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: len(app.screen.query(SummaryCard)) == len(summaries))
        card = next(c for c in app.screen.query(SummaryCard) if c.summary.version == 2)
        assert f"ids {figure}" in str(card.query_one(Static).visual)
        await pilot.press("down", "enter")
        await on_screen(pilot, InspectorScreen)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen) and inspector.summary.version == 2
        figures = str(inspector.query_one("#inspector-figures", Static).visual)
        assert f"Identifiers kept {figure}" in " ".join(figures.split())
        tab = str(inspector.query_one("#summary-identifiers", Static).visual)
        assert f"{kept['kept']} of {kept['total']} identifiers kept" in tab
