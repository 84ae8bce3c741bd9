"""Copy one message or a range of messages as Markdown (``m`` in navigation mode;
``shift+up``/``shift+down`` or ``v`` then moves make the range), and Textual's mouse selection in
the chat pane copied with ``ctrl+c``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.widgets import Markdown

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, notifications, ready, settle, until
from tests.tui.seed import PINNED_TURN, TURNS, seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.engine.transfer.transfer import export_markdown
from tui_chat.tui.app import ChatApp
from tui_chat.tui.widgets.chat_pane import ChatPane


@dataclass
class Demo:
    """The demo conversation (no summaries) and each of its messages as the Markdown export
    writes it."""

    conv: str
    sections: list[str]


@pytest.fixture
async def demo(service: ChatService, tmp_path: Path) -> Demo:
    conversation = await seed_demo(service, tmp_path, summaries=False)
    messages = await service.messages.page(conversation.id, limit=1000)
    pinned = dict.fromkeys(await service.messages.pinned_ids(conversation.id), "")
    text = export_markdown(conversation, messages, pinned)
    return Demo(conversation.id, ["## " + part.strip() for part in text.split("\n## ")[1:]])


async def _open(pilot: ChatPilot) -> ChatPane:
    await ready(pilot)
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, ChatApp)
    await pilot.press("f5")
    pane = app.main_screen.chat
    await until(pilot, lambda: pane.navigating and pane.selected is not None)
    return pane


async def test_m_copies_the_selected_message_as_the_markdown_export_writes_it(
    service: ChatService, demo: Demo
) -> None:
    sections = demo.sections
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot)
        await pilot.press("m")
        await until(pilot, lambda: bool(app.clipboard))
        assert app.clipboard == sections[-1]
        assert any("Copied message #" in n and "as Markdown" in n for n in notifications(app))
        # The pinned prompt is marked as in the export.
        pinned_id = (await service.messages.page(demo.conv, limit=1000))[2 * PINNED_TURN].id
        pane.selected = pinned_id
        await pilot.press("m")
        await until(pilot, lambda: "(pinned)" in app.clipboard)
        assert app.clipboard == sections[2 * PINNED_TURN]


async def test_shift_arrows_extend_a_range_and_m_copies_it(
    service: ChatService, demo: Demo
) -> None:
    sections = demo.sections
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot)
        await pilot.press("shift+up", "shift+up", "shift+up")
        await until(pilot, lambda: len(pane.query(".-in-range")) == 4)
        await pilot.press("m")
        await until(pilot, lambda: bool(app.clipboard))
        assert app.clipboard == "\n\n".join(sections[-4:])
        assert any("Copied 4 messages" in n for n in notifications(app))
        assert not pane.query(".-in-range")  # copied: the range is gone
        # A plain move drops a range made with shift.
        await pilot.press("shift+up")
        await until(pilot, lambda: len(pane.query(".-in-range")) == 2)
        await pilot.press("k")
        await until(pilot, lambda: not pane.query(".-in-range"))


async def test_v_marks_a_start_and_moves_extend_it_past_the_mounted_page(
    service: ChatService, demo: Demo
) -> None:
    sections = demo.sections
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot)
        await pilot.press("g")  # the first message
        await until(
            pilot,
            lambda: pane.selected == pane.views[0].message_id,
            state=lambda: (
                pane.selected,
                [v.message_id for v in pane.views][:3],
                (pane.has_older, pane.has_newer),
                pilot.app.focused,
                [(w.name, w.state.name) for w in pilot.app.workers],
            ),
        )
        await pilot.press("v", *["j"] * (2 * len(TURNS) - 1))
        last = (await service.messages.page(demo.conv, limit=1000))[-1].id
        await until(pilot, lambda: pane.selected == last)
        await pilot.press("m")
        await until(pilot, lambda: bool(app.clipboard))
        assert app.clipboard == "\n\n".join(sections)
        await pilot.press("v", "v")  # started and dropped
        await until(pilot, lambda: not pane.query(".-in-range"))


async def test_mouse_selection_in_a_message_is_copied_with_ctrl_c(
    service: ChatService, demo: Demo
) -> None:
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await settle(pilot)
        pane = app.main_screen.chat
        block = pane.views[-1].query_one(Markdown).children[0]
        await pilot.mouse_down(block, offset=(0, 0))
        await pilot.hover(block, offset=(20, 0))
        await pilot.mouse_up(block, offset=(20, 0))
        selected = app.screen.get_selected_text()
        assert selected and len(selected) >= 15
        assert selected in TURNS[-1][1].replace("`", "")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.clipboard == selected)
        # Without a selection ctrl+c keeps its meaning (how to quit), copying nothing.
        app.screen.clear_selection()
        app.copy_to_clipboard("before")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: any("to quit" in n for n in notifications(app)))
        assert app.clipboard == "before"


WL_COPY = """#!/bin/sh
# A stand-in wl-copy: the clipboard is the file next to this script.
/bin/cat > "${0%/*}/clipboard"
"""


async def test_a_copy_goes_through_the_system_clipboard_tool_too(
    service: ChatService, demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terminals that ignore OSC 52 (GNOME Terminal, Konsole) still get the copy."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "wl-copy").write_text(WL_COPY)
    (tools / "wl-copy").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    sections = demo.sections
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot)
        await pilot.press("m")
        copied = tools / "clipboard"
        await until(pilot, lambda: copied.exists() and copied.read_text() == sections[-1])
        assert app.clipboard == sections[-1]  # and by OSC 52


async def test_leaving_the_messages_ends_a_range(service: ChatService, demo: Demo) -> None:
    """As in an editor, a selection lives in its pane: escape (or tab) to the composer drops
    the marked range, and a later ``m`` copies the selected message alone."""
    app = make_app(service, demo.conv)
    async with app.run_test(size=SIZE) as pilot:
        pane = await _open(pilot)
        await pilot.press("shift+up", "shift+up")
        await until(pilot, lambda: len(pane.query(".-in-range")) == 3)
        await pilot.press("escape")  # back to the composer
        await until(pilot, lambda: app.focused is app.main_screen.composer)
        await until(pilot, lambda: not pane.query(".-in-range"))
        assert pane.range.range_ids is None
        await pilot.press("f5")
        await until(pilot, lambda: pane.navigating)
        await pilot.press("m")
        await until(pilot, lambda: bool(app.clipboard))
        assert app.clipboard == demo.sections[-3]
        # Marked with v, then tab to the composer: dropped too.
        await pilot.press("v", "k")
        await until(pilot, lambda: len(pane.query(".-in-range")) == 2)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is not pane)
        await until(pilot, lambda: not pane.query(".-in-range"))
