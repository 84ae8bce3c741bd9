"""Pilot test of the compact preview: ctrl+g asks first when the compact would drop a message
the draft needs, and compacts only when told to."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, settle, until
from tests.unit.engine.test_compact_preview import DRAFT, chat_with_fact
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.prompt import Confirm


async def test_compact_now_warns_of_what_the_draft_would_lose_and_waits_for_a_yes(
    service: ChatService, tmp_path: Path
) -> None:
    cid = await chat_with_fact(service, tmp_path, "off")
    app = make_app(service, cid)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        screen.composer.text = DRAFT
        await pilot.press("ctrl+g")
        dialog = await on_screen(pilot, Confirm)
        shown = " ".join(str(s.visual) for s in dialog.query(Static))
        assert "Compacting would drop 1 message the next request needs" in shown
        assert "Marguerite" in shown
        await pilot.press("n")
        await on_screen(pilot, MainScreen)
        await settle(pilot)
        assert await service.summaries.versions(cid) == []  # not compacted
        await pilot.press("ctrl+g")
        await on_screen(pilot, Confirm)
        await pilot.press("y")
        await on_screen(pilot, MainScreen)
        await settle(pilot)
        assert [s.version for s in await service.summaries.versions(cid)] == [1]
        assert screen.composer.text == DRAFT  # the draft stays


async def test_compact_now_without_a_loss_compacts_at_once(
    service: ChatService, tmp_path: Path
) -> None:
    cid = await chat_with_fact(service, tmp_path, "on")  # recall brings the fact back
    app = make_app(service, cid)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        screen.composer.text = DRAFT
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert not isinstance(app.screen, Confirm)
        assert [s.version for s in await service.summaries.versions(cid)] == [1]


async def test_compact_up_to_here_asks_first_when_the_draft_would_lose_a_message(
    service: ChatService, tmp_path: Path
) -> None:
    cid = await chat_with_fact(service, tmp_path, "off")
    stored = await service.messages.history(cid)
    target = stored[-3]  # a reply: the turns up to it fold, the newest stays raw
    app = make_app(service, cid)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        screen.composer.text = DRAFT
        await pilot.press("f5", "up", "up")
        assert screen.chat.selected == target.id
        await pilot.press("s")
        dialog = await on_screen(pilot, Confirm)
        shown = " ".join(str(s.visual) for s in dialog.query(Static))
        assert f"up to #{target.id}" in shown
        assert "Compacting would drop 1 message the next request needs" in shown
        await pilot.press("n")
        await on_screen(pilot, MainScreen)
        await settle(pilot)
        assert await service.summaries.versions(cid) == []  # not compacted
        await pilot.press("s")
        await on_screen(pilot, Confirm)
        await pilot.press("y")
        await on_screen(pilot, MainScreen)
        await until(pilot, lambda: bool(screen.timeline.summaries))
        versions = await service.summaries.versions(cid)
        assert [v.covers_to_message_id for v in versions] == [target.id]


async def test_compact_up_to_here_without_a_loss_compacts_at_once(
    service: ChatService, tmp_path: Path
) -> None:
    cid = await chat_with_fact(service, tmp_path, "on")  # recall brings the fact back
    stored = await service.messages.history(cid)
    app = make_app(service, cid)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        screen.composer.text = DRAFT
        await pilot.press("f5", "up", "up", "up", "up", "s")
        await until(pilot, lambda: bool(screen.timeline.summaries))
        assert not isinstance(app.screen, Confirm)
        versions = await service.summaries.versions(cid)
        assert [v.covers_to_message_id for v in versions] == [stored[-5].id]
