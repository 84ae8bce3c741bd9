"""Pilot tests of ``ctrl+v``: the clipboard's image is attached to the draft,
its text is pasted when it holds no image, and with no clipboard tool a message names the one to
install. The clipboard is a stand-in ``wl-paste`` (a small script) first on ``PATH``."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.fakes import sample_files
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import from_palette, notifications, ready, settle, until
from tui_chat.engine.service import ChatService

STAND_IN = """#!/bin/sh
# A stand-in wl-paste: the clipboard is the files next to this script.
here="${0%/*}"
case "$1" in
  --list-types) /bin/cat "$here/types" ;;
  --type) /bin/cat "$here/image" ;;
  --no-newline) /bin/cat "$here/text" ;;
  *) exit 2 ;;
esac
"""


def _clipboard(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, image: bytes = b"", text: str = ""
) -> None:
    """Put a stand-in ``wl-paste`` holding ``image`` (as PNG) or ``text`` first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "wl-paste"
    tool.write_text(STAND_IN)
    tool.chmod(0o755)
    types = "image/png\ntext/html\n" if image else "text/plain;charset=utf-8\nTEXT\n"
    (bin_dir / "types").write_text(types)
    (bin_dir / "image").write_bytes(image)
    (bin_dir / "text").write_text(text)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.delenv("DISPLAY", raising=False)


def _chips(screen: object) -> str:
    return str(screen.query_one("#pending-files", Static).visual)  # type: ignore[attr-defined]


async def test_ctrl_v_attaches_the_clipboard_image_to_the_draft(
    keyed_service: ChatService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clipboard(monkeypatch, tmp_path, image=sample_files.png(40, 30))
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.composer.load_text("what is this?")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        await settle(pilot)
        attached = screen.tray.pending[0]
        assert attached.kind == "image" and attached.media_type == "image/png"
        assert attached.name.startswith("clipboard-") and attached.name.endswith(".png")
        assert attached.name in _chips(screen)
        assert screen.composer.text == "what is this?"  # nothing pasted as text
        kept = await keyed_service.drafts.files(conversation.id)
        assert [a.sha256 for a in kept] == [attached.sha256]
        # The palette entry does the same: a second image (same bytes) is attached again.
        await from_palette(pilot, "Paste image")
        await until(pilot, lambda: len(screen.tray.pending) == 2)


async def test_ctrl_v_pastes_text_when_the_clipboard_holds_no_image(
    keyed_service: ChatService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clipboard(monkeypatch, tmp_path, text="deploy on Fridays")
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: screen.composer.text == "deploy on Fridays")
        await settle(pilot)
        assert screen.tray.pending == []


async def test_ctrl_v_refuses_clipboard_bytes_that_are_no_image(
    keyed_service: ChatService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clipboard(monkeypatch, tmp_path, image=b"\x00\x01 not an image at all \xff")
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any("not an image" in n for n in notifications(app)))
        assert screen.tray.pending == []


async def test_with_no_clipboard_tool_a_message_names_the_tool_to_install(
    keyed_service: ChatService, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any("install xclip" in n for n in notifications(app)))
        assert screen.tray.pending == []
