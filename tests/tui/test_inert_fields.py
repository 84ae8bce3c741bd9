"""Escape sequences from the clipboard (``ctrl+v`` and the terminal's own paste), a stored draft,
an imported prompt put back by ``e`` and an imported system prompt never reach the terminal: the
fields hold and draw them as visible stand-ins, as model output is. A clipboard holding
``x ESC]0;pwned BEL ESC[2J`` pasted with ``ctrl+v`` set the terminal's title and cleared it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual import events
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import TextArea

from tests.reliability.helpers import CONTROL_CHARS
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, on_screen, ready, until
from tests.tui.test_clipboard_paste import _clipboard
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.settings import SettingsScreen
from tui_chat.tui.widgets.chat_pane import ChatPane

HOSTILE = "x \x1b]0;pwned\x07 \x1b[2J\x9b31m end"


def _raw(text: str) -> set[str]:
    return {c for c in text if c in CONTROL_CHARS}


def _drawn(widget: Widget) -> str:
    """Every character the widget's lines give the terminal."""
    width, height = widget.size
    strips = widget.render_lines(Region(0, 0, width, height))
    return "".join(segment.text for strip in strips for segment in strip)


def _held_and_drawn_inert(field: TextArea) -> None:
    assert "pwned" in field.text and "end" in field.text
    assert _raw(field.text) == set(), repr(field.text)
    assert _raw(_drawn(field)) == set()
    assert "␛]0;pwned␇" in field.text  # shown, not dropped: the user sees what is sent


async def _composer_shows_it(pilot: ChatPilot) -> None:
    screen = pilot.app.screen
    composer = screen.query_one("#composer", TextArea)
    await until(pilot, lambda: "end" in composer.text)
    _held_and_drawn_inert(composer)


async def test_ctrl_v_pastes_clipboard_text_inert(
    service: ChatService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clipboard(monkeypatch, tmp_path, text=HOSTILE)
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+v")
        await _composer_shows_it(pilot)


async def test_the_terminals_paste_is_inert(service: ChatService) -> None:
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.composer.post_message(events.Paste(HOSTILE))
        await _composer_shows_it(pilot)


async def test_a_stored_draft_is_shown_inert(service: ChatService) -> None:
    conversation = await service.conversations.new()
    await service.drafts.set(conversation.id, HOSTILE)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await _composer_shows_it(pilot)


def _hostile_import(folder: Path) -> Path:
    path = folder / "hostile.json"
    path.write_text(
        json.dumps(
            {
                "title": "hostile",
                "system": HOSTILE,
                "messages": [
                    {"role": "user", "content": HOSTILE},
                    {"role": "assistant", "content": "fine."},
                ],
            }
        )
    )
    return path


async def test_editing_an_imported_prompt_is_inert(service: ChatService, tmp_path: Path) -> None:
    conversation = await service.transfer.import_file(_hostile_import(tmp_path))
    stored = await service.messages.history(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f5", "up")
        await until(pilot, lambda: app.query_one(ChatPane).selected == stored[0].id)
        await pilot.press("e")
        await _composer_shows_it(pilot)


async def test_an_imported_system_prompt_is_inert_in_the_settings(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await service.transfer.import_file(_hostile_import(tmp_path))
    assert "\x1b" in conversation.system_prompt  # stored as imported
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        settings = await on_screen(pilot, SettingsScreen)
        _held_and_drawn_inert(settings.query_one("#system", TextArea))
