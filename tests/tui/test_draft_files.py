"""Pilot tests of files attached to the draft: files alone are a
message, a refused send gives its files back, the files stay with the draft across
conversation switches and a restart, and backspace at the start of the composer removes one."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, notifications, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen


async def _attach(pilot: ChatPilot, screen: MainScreen, path: Path) -> None:
    count = len(screen.tray.pending)
    await pilot.press("ctrl+a")
    await until(pilot, lambda: bool(pilot.app.screen.query(Input)))
    pilot.app.screen.query_one(Input).value = str(path)
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.tray.pending) == count + 1)


def _chips(screen: MainScreen) -> str:
    return str(screen.query_one("#pending-files", Static).visual)


async def test_a_pdf_with_no_typed_text_is_sent(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.pdf"
    doc.write_bytes(sample_files.pdf(2))  # 4,500 tokens: the size check builds the message
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _attach(pilot, screen, doc)
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_anthropic.bodies) == 1)
        await settle(pilot)
        content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
        assert [block["type"] for block in content] == ["document"]
        assert not any("failed" in n for n in notifications(app))
        stored = await keyed_service.messages.history(conversation.id)
        assert stored[0].role == "user" and "doc.pdf" in stored[0].text
        # Sent: the draft (and its files) are gone.
        assert await keyed_service.drafts.files(conversation.id) == []


async def test_a_refused_send_keeps_its_text_and_files(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    doc = tmp_path / "big.pdf"
    doc.write_bytes(sample_files.pdf(3))  # 6,750 tokens: more than this window can take
    conversation = await keyed_service.conversations.new()
    await keyed_service.conversations.set_setting(conversation.id, "context_window", "6000")
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _attach(pilot, screen, doc)
        screen.composer.load_text("read this")
        await pilot.press("enter")
        await until(pilot, lambda: any("tokens" in n for n in notifications(app)))
        await settle(pilot)
        assert fake_anthropic.bodies == []
        assert [a.name for a in screen.tray.pending] == ["big.pdf"] and "big.pdf" in _chips(screen)
        assert screen.composer.text == "read this"
        assert [a.name for a in await keyed_service.drafts.files(conversation.id)] == ["big.pdf"]
        assert await keyed_service.messages.history(conversation.id) == []


async def test_files_stay_with_the_draft_and_backspace_removes_one(
    keyed_service: ChatService, tmp_path: Path
) -> None:
    image = tmp_path / "plot.png"
    image.write_bytes(sample_files.png(40, 30))
    notes = tmp_path / "notes.txt"
    notes.write_text("deploy on Fridays\n")
    first = await keyed_service.conversations.new("first")
    second = await keyed_service.conversations.new("second")
    app = make_app(keyed_service, first.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _attach(pilot, screen, image)
        await _attach(pilot, screen, notes)
        await screen.open_conversation(second.id)
        assert screen.tray.pending == [] and not _chips(screen).strip()
        await screen.open_conversation(first.id)
        assert [a.name for a in screen.tray.pending] == ["plot.png", "notes.txt"]
        assert "plot.png" in _chips(screen) and "notes.txt" in _chips(screen)
        await settle(pilot)
    # Quit and start again: the files are still attached.
    app = make_app(keyed_service, first.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: len(screen.tray.pending) == 2)
        screen.composer.load_text("typed")
        screen.composer.move_cursor((0, 1))
        await pilot.press("backspace")  # inside the text: a character goes, not a file
        assert screen.composer.text == "yped" and len(screen.tray.pending) == 2
        await pilot.press("backspace")  # at the start: the last file goes
        await until(pilot, lambda: [a.name for a in screen.tray.pending] == ["plot.png"])
        assert "notes.txt" not in _chips(screen) and screen.composer.text == "yped"
        await settle(pilot)
        kept = await keyed_service.drafts.files(first.id)
        assert [a.name for a in kept] == ["plot.png"]


async def test_an_edit_cancelled_brings_the_draft_files_back(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    image = tmp_path / "kept.png"
    image.write_bytes(sample_files.png(40, 30))
    conversation = await keyed_service.conversations.new()
    await keyed_service.send(conversation.id, "first prompt")
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _attach(pilot, screen, image)
        await pilot.press("f5", "up")  # the prompt
        await pilot.press("e")
        await until(pilot, lambda: screen.composer.text == "first prompt")
        await until(pilot, lambda: screen.tray.pending == [])  # the prompt had no files
        await pilot.press("escape")
        await until(pilot, lambda: [a.name for a in screen.tray.pending] == ["kept.png"])
        assert "kept.png" in _chips(screen)
