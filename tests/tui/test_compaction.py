"""Pilot tests of compaction in the UI: timeline, notifications, inspector, rollback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input, Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, on_screen, open_timeline, ready, settle, until
from tests.tui.seed import seed_demo
from tests.tui.test_actions import resolve
from tui_chat.engine.service import ChatService
from tui_chat.tui.commands import PALETTE
from tui_chat.tui.screens.inspector import InspectorScreen
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.spinner import Spinner
from tui_chat.tui.widgets.summary_timeline import SummaryCard, SummaryTimeline

DESIGN_NAMES = [
    "New conversation",
    "Rename conversation",
    "Delete conversation",
    "Search",
    "Compact now",
    "Pin message",
    "Unpin message",
    "Summary timeline",
    "Inspect summary",
    "Roll back summary",
    "Regenerate summary",
    "Context preview",
    "Export conversation",
    "Settings",
    "Retry reply",
    "Cancel reply",
]
BRANCHING_NAMES = [
    "Fork conversation",
    "Edit message",
    "Compact up to here",
    "Attach file",
    "Paste image",
    "Remove attached file",
    "Copy code block",
    "Previous version",
    "Next version",
]
"""The palette commands added after the design's (Paste image, the branch versions, Remove
attached file among them)."""
RECALL_NAMES = ["Go to cited message"]
"""Cited recall (run on the app: it selects in the chat pane)."""


def _cards(timeline: SummaryTimeline) -> list[SummaryCard]:
    return list(timeline.query(SummaryCard))


async def test_compact_now_adds_an_active_version_and_notifies(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path, summaries=False)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        timeline = screen.timeline
        assert not timeline.display
        await pilot.press("ctrl+t")
        assert timeline.display
        assert _cards(timeline) == []
        await pilot.press("ctrl+g")
        await settle(pilot)
        summaries = await service.summaries.versions(conversation.id)
        assert [s.version for s in summaries] == [1]
        current = await service.conversations.resolve(conversation.id)
        assert current.active_summary_id == summaries[0].id
        cards = _cards(timeline)
        assert [c.summary.version for c in cards] == [1]
        assert cards[0].active and cards[0].has_class("-active")
        card_text = str(cards[0].query_one(Static).visual)
        assert "active" in card_text and "ids" in card_text and "→" in card_text
        assert any("Summary v1" in n for n in notifications(app))
        # The gauge now carries a summary section (its refresh runs in a worker after the
        # version's event: wait for the state, not for time).

        def summarised() -> bool:
            breakdown = screen.gauge.breakdown
            return breakdown is not None and breakdown.sections["summary"] > 0

        await until(pilot, summarised)
        await pilot.press("ctrl+t")
        assert not timeline.display


async def test_background_compaction_after_a_reply_is_shown(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new("auto")
    for key, value in (("trigger", "tokens"), ("threshold_tokens", "100"), ("keep_recent", "2")):
        await keyed_service.conversations.set_setting(conversation.id, key, value)
    app = make_app(keyed_service, conversation.id)
    shown: list[str] = []  # every toast, also those that timed out on a slow machine
    notify = app.notify

    def record(message: str, *args: Any, **kwargs: Any) -> None:
        shown.append(message)
        notify(message, *args, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+t")
        composer = app.query_one(Composer)
        for index in range(4):
            composer.focus()
            composer.load_text(f"Turn {index}: " + "tell me about the migration plan " * 12)
            await pilot.press("enter")
            await settle(pilot)
        await until(
            pilot,
            lambda: any(s.status == "completed" for s in screen.timeline.summaries),
        )
        # The panels refresh after the reply's frame, so the timeline can show the stored
        # summary a moment before the compaction's own event (and its toast) is handled.
        await until(pilot, lambda: any("Summary v1" in n for n in shown))
        assert any("Compacting" in n for n in shown)
        summaries = await keyed_service.summaries.versions(conversation.id)
        assert summaries[-1].trigger == "auto"


async def test_a_compaction_in_progress_shows_a_spinner(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    conversation = await seed_demo(keyed_service, tmp_path, summaries=False)
    fake_anthropic.push_summary(delay=1.0)
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+t", "ctrl+g")
        await until(pilot, lambda: bool(screen.timeline.query(Spinner)))
        card = _cards(screen.timeline)[0]
        assert card.summary.status == "in_progress"
        assert "compacting" in str(card.query_one(Static).visual)
        await settle(pilot)
        await until(pilot, lambda: not screen.timeline.query(Spinner))
        assert [c.summary.status for c in _cards(screen.timeline)] == ["completed"]


async def test_a_failed_compaction_is_shown_with_its_reason(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    conversation = await seed_demo(keyed_service, tmp_path, summaries=False)
    fake_anthropic.push_error(400, message="summary request rejected", target="summary")
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+t", "ctrl+g")
        # Not settle(): the compaction's worker fails on purpose, and waiting for it raises.
        # The cards are drawn from the versions after they are set: wait for the card itself.
        await until(
            pilot, lambda: any(c.summary.status == "failed" for c in _cards(screen.timeline))
        )
        failed = [c for c in _cards(screen.timeline) if c.summary.status == "failed"]
        assert failed and failed[0].has_class("-failed")
        assert "failed" in str(failed[0].query_one(Static).visual)
        assert any("failed" in n.lower() for n in notifications(app))
        current = await keyed_service.conversations.resolve(conversation.id)
        assert current.active_summary_id is None


async def test_inspector_shows_figures_text_and_diff_against_the_parent(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    by_version = {s.version: s for s in await service.summaries.versions(conversation.id)}
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_timeline(pilot)
        await pilot.press("down", "enter")
        await on_screen(pilot, InspectorScreen)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        assert inspector.summary.version == 2
        figures = str(inspector.query_one("#inspector-figures", Static).visual)
        assert "Identifiers kept" in figures
        assert f"{by_version[2].identifiers_kept}/{by_version[2].identifiers_total}" in figures
        assert str(inspector.query_one("#summary-text", Static).visual) == by_version[2].text
        await pilot.press("d")
        diff = str(inspector.query_one("#summary-diff", Static).visual)
        assert diff.startswith("--- v1\n+++ v2")
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_activate_in_the_inspector_and_roll_back_from_the_palette(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    by_version = {s.version: s for s in await service.summaries.versions(conversation.id)}
    assert conversation.active_summary_id == by_version[3].id
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await open_timeline(pilot)
        await pilot.press("down", "down", "enter")
        await on_screen(pilot, InspectorScreen)
        await pilot.press("a")
        await settle(pilot)
        assert (
            await service.conversations.resolve(conversation.id)
        ).active_summary_id == by_version[1].id
        active = [c.summary.version for c in _cards(screen.timeline) if c.active]
        assert active == [1]
        # Roll back from v1: nothing older, so no summary at all is sent.
        await pilot.press("ctrl+p")
        await pilot.press(*"Roll back summary")
        await pilot.press("enter")
        await settle(pilot)
        assert (await service.conversations.resolve(conversation.id)).active_summary_id is None
        assert screen.gauge.breakdown is not None
        assert screen.gauge.breakdown.sections["summary"] == 0


async def test_roll_back_goes_to_the_previous_version(service: ChatService, tmp_path: Path) -> None:
    conversation = await seed_demo(service, tmp_path)
    by_version = {s.version: s for s in await service.summaries.versions(conversation.id)}
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await screen.run_action("part('summary.roll_back')")
        await settle(pilot)
        assert (
            await service.conversations.resolve(conversation.id)
        ).active_summary_id == by_version[2].id


async def test_regenerate_with_instructions_from_the_inspector(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        await open_timeline(pilot)
        await pilot.press("enter")
        await on_screen(pilot, InspectorScreen)
        await pilot.press("g")
        await until(pilot, lambda: bool(app.screen.query(Input)))
        field = app.screen.query_one(Input)
        field.value = "keep the SQL"
        await pilot.press("enter")
        await settle(pilot)
        summaries = await service.summaries.versions(conversation.id)
        newest = summaries[0]
        assert newest.version == 4
        assert newest.trigger == "regenerate" and newest.instructions == "keep the SQL"
        assert (await service.conversations.resolve(conversation.id)).active_summary_id == newest.id
        assert screen.timeline.summaries[0].version == 4
        assert any("Summary v4" in n for n in notifications(app))


async def test_palette_offers_exactly_the_design_commands(service: ChatService) -> None:
    names = [name for name, _, _ in PALETTE]
    assert names[: len(DESIGN_NAMES + BRANCHING_NAMES)] == DESIGN_NAMES + BRANCHING_NAMES
    assert names[-len(RECALL_NAMES) :] == RECALL_NAMES
    for _, action, _ in PALETTE:  # on the screen, the app or a part of the chat pane
        assert callable(resolve(action, MainScreen, MainScreen)), action
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        from textual.command import CommandList, CommandPalette

        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await until(pilot, lambda: palette.query_one(CommandList).option_count >= 16)
        listed = {
            str(option.prompt).split("\n")[0] for option in palette.query_one(CommandList).options
        }
        assert set(DESIGN_NAMES + BRANCHING_NAMES) <= {line.strip() for line in listed} | listed


async def test_compact_now_from_the_palette(service: ChatService, tmp_path: Path) -> None:
    conversation = await seed_demo(service, tmp_path, summaries=False)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p", *"Compact now")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert [s.version for s in await service.summaries.versions(conversation.id)] == [1]
