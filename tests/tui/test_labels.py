"""Labels say what is true: the timeline's folded history counts each span once, the
inspector's Identifiers tab has its key, the export dialog names every format."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static, TabbedContent

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, open_timeline, ready, settle
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.inspector import InspectorScreen
from tui_chat.tui.screens.prompt import TextPrompt
from tui_chat.tui.text import tokens


async def test_the_timeline_counts_the_folded_history_once_however_many_versions(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path)  # v3 regenerates v2: the same span twice
    versions = {s.version: s for s in await service.summaries.versions(demo.id)}
    active = versions[3]
    history = await service.messages.history(demo.id)
    folded = sum(m.token_count for m in history if m.id <= active.covers_to_message_id)
    assert sum(s.source_tokens for s in versions.values()) > folded  # what was added before
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await open_timeline(pilot)
        text = str(screen.timeline.query_one("#timeline-totals", Static).visual)
        expected = f"history folded: {tokens(folded)} → {tokens(active.summary_tokens)}"
        assert expected in text, text
        assert "all versions" not in text


async def test_i_opens_the_inspectors_identifiers_tab(service: ChatService, tmp_path: Path) -> None:
    demo = await seed_demo(service, tmp_path)
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        inspector = await on_screen(pilot, InspectorScreen)
        await pilot.press("i")
        await pilot.pause()
        assert inspector.query_one(TabbedContent).active == "identifiers"
        await pilot.press("t")
        await pilot.pause()
        assert inspector.query_one(TabbedContent).active == "text"


async def test_the_export_dialog_names_html_and_writes_it(
    service: ChatService, tmp_path: Path
) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False, turns=6)
    app = make_app(service, demo.id, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+s")
        prompt = await on_screen(pilot, TextPrompt)
        title = str(prompt.query_one(".title", Static).visual)
        assert ".md" in title and ".json" in title and ".html" in title, title
        target = tmp_path / "out.html"
        prompt.query_one("#prompt-input").value = str(target)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        assert target.read_text().lstrip().lower().startswith("<!doctype html")


async def test_the_gauge_names_the_ledger_for_its_identifiers_and_shows_no_unfilled_budget(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        legend = str(screen.gauge.render())
        assert "ledger" not in legend
        for name in ("summary 0 ", "identifiers 0 ", "recall 0 "):  # nothing folded yet
            assert name in legend, legend
        assert "pins 0/" in legend  # a budget the chat can fill is still shown
