"""``@path`` completion in the composer: typing ``@`` lists the paths under the
working directory, ``tab``/``enter`` accepts (a folder goes on listing, a file is attached and
its ``@path`` stays in the text), hidden entries only when asked for, huge folders cut short."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.path_completions import (
    MAX_SHOWN,
    PathCompletions,
    at_token,
    complete_paths,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a file, a folder with a file, and hidden entries."""
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    (tmp_path / "notes.txt").write_text("deploy on Fridays\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _dropdown(screen: MainScreen) -> PathCompletions:
    return screen.query_one(PathCompletions)


def _shown(screen: MainScreen) -> list[str]:
    dropdown = _dropdown(screen)
    return dropdown.completions.paths if dropdown.display else []


async def _type(pilot: ChatPilot, text: str) -> None:
    await pilot.press(*("space" if c == " " else c for c in text))


async def test_at_lists_paths_and_tab_attaches_the_file_keeping_the_text(
    keyed_service: ChatService, project: Path
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _type(pilot, "read @")
        await until(pilot, lambda: _shown(screen) == ["src/", "notes.txt"])  # no hidden ones
        await _type(pilot, "no")
        await until(pilot, lambda: _shown(screen) == ["notes.txt"])
        await pilot.press("tab")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        await settle(pilot)
        assert screen.tray.pending[0].name == "notes.txt"
        assert screen.composer.text == "read @notes.txt "
        assert not _dropdown(screen).display
        kept = await keyed_service.drafts.files(conversation.id)
        assert [a.name for a in kept] == ["notes.txt"]


async def test_enter_on_a_folder_lists_inside_it_and_never_sends(
    keyed_service: ChatService, project: Path
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _type(pilot, "@s")
        await until(pilot, lambda: _shown(screen) == ["src/"])
        await pilot.press("enter")
        await until(pilot, lambda: _shown(screen) == ["src/main.py"])
        assert screen.composer.text == "@src/"
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        assert screen.tray.pending[0].name == "main.py"
        assert screen.composer.text == "@src/main.py "
        assert await keyed_service.messages.history(conversation.id) == []  # nothing was sent


async def test_hidden_entries_when_asked_and_escape_closes(
    keyed_service: ChatService, project: Path
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await _type(pilot, "@.")
        await until(pilot, lambda: _shown(screen) == [".git/", ".env"])
        await pilot.press("escape")
        await until(pilot, lambda: not _dropdown(screen).display)
        await pilot.press("down")  # the dropdown is closed: keys are the composer's again
        await settle(pilot)
        assert screen.tray.pending == [] and screen.composer.text == "@."


def test_a_huge_folder_is_cut_short(tmp_path: Path) -> None:
    for n in range(MAX_SHOWN + 30):
        (tmp_path / f"f{n:03}.txt").write_text("x")
    found = complete_paths("f", tmp_path)
    assert len(found.paths) == MAX_SHOWN and found.cut
    assert found.paths[0] == "f000.txt"
    assert complete_paths("f07", tmp_path).paths == [f"f07{n}.txt" for n in range(10)]
    assert complete_paths("missing/", tmp_path).paths == []


def test_the_at_word_is_the_one_at_the_cursor() -> None:
    assert at_token("look at @src/ma") == "src/ma"
    assert at_token("@") == ""
    assert at_token("mail me@example.com") is None  # an @ inside a word is no path
    assert at_token("@notes.txt and more") is None
