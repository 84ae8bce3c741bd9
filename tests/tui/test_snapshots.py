"""Snapshot tests at 120x36: main screen, timeline, inspector, context preview, help, no key.

Deterministic: messages are imported with fixed times, the store's clock is pinned while the
demo is made, the app's clock is fixed, times are shown in UTC and the cursor does not
blink. Update with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown

from tests.seam import TestClock, open_service
from tests.tui.conftest import FIXED_NOW, SIZE, _write_config
from tests.tui.helpers import ready
from tests.tui.seed import START, seed_demo
from tui_chat.config import Config, load_config
from tui_chat.tui.app import ChatApp
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer

SnapCompare = Callable[..., bool]


def _seed(config: Config, folder: Path) -> None:
    async def run() -> None:
        service = await open_service(config, clock=_pinned_clock())
        try:
            await seed_demo(service, folder)
        finally:
            await service.close()

    asyncio.run(run())


def _pinned_clock() -> TestClock:
    """The store's clock while the demo is made: an hour after the seed's start, a second
    later at each row stamped."""
    return TestClock(start=START + timedelta(hours=1), tick=timedelta(seconds=1))


@pytest.fixture
def demo_config(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A demo database (summarised offline) and a config with a key that is never used."""
    _write_config(isolated_env)
    _seed(load_config(), tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-snapshot-never-sent")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    return load_config()


@pytest.fixture
def no_key_demo_config(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Config:
    """A demo database and a config without a key."""
    _write_config(isolated_env)
    config = load_config()
    _seed(config, tmp_path)
    return config


def _app(config: Config) -> ChatApp:
    return ChatApp(config, clock=lambda: FIXED_NOW, cursor_blink=False)


QUIET_FRAMES = 25
"""Frames in a row the chat must keep its size and place before a snapshot is taken (25 of
Pilot's 4 ms idle slices: the five 20 ms ones this was set for; five short ones let a snapshot
be taken with the scrollbar's thumb one step off, at load in a CI run)."""


def _documents_built(pane: ChatPane) -> bool:
    """Every message's Markdown parsed and its blocks mounted (Textual parses in a thread and
    notes the lines it has parsed once the blocks are in)."""
    for document in pane.query(Markdown):
        lines = document.source.splitlines()
        parsed = len(lines) - (1 if lines and lines[-1] else 0)
        if document._last_parsed_line != parsed:
            return False
    return True


async def _ready(pilot: Pilot[Any]) -> None:
    """The panels are filled, the gauge is drawn and the chat has stopped moving.

    Textual parses each message's Markdown in a thread and mounts its blocks later, so on a
    loaded machine the chat's height (and the scrollbar's thumb) can still change after the
    gauge is drawn: wait until no worker runs and the chat's size, scroll and scrollbar (which
    takes the pane's figures on a later frame) stay the same for :data:`QUIET_FRAMES` frames
    in a row.
    """
    app = pilot.app
    assert isinstance(app, ChatApp)
    await ready(pilot)  # the gauge counted and the list filled (start-up's panels)
    pane = app.main_screen.query_one(ChatPane)
    last: object = None
    quiet = 0
    for _ in range(5_000):  # a bound: a chat that never settles fails its snapshot, not hangs
        if quiet >= QUIET_FRAMES:
            break
        await app.workers.wait_for_complete()
        await pilot.pause()
        bar = pane.vertical_scrollbar  # what the thumb is drawn from, set a frame after the pane
        now = (
            pane.size,
            pane.virtual_size,
            pane.scroll_y,
            len(pane.children),
            (bar.size, bar.window_size, bar.window_virtual_size, bar.position),
        )
        # The thumb is drawn from the bar's figures: they must be the pane's own (a loaded
        # run drew it from figures a layout later replaced, a fraction of a cell off).
        drawn_from_the_pane = bar.window_virtual_size == pane.virtual_size.height and (
            bar.position == int(pane.scroll_y * 8) / 8
        )
        steady = now == last and drawn_from_the_pane and _documents_built(pane)
        quiet = quiet + 1 if steady else 0
        last = now


def _typing(text: str) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        pilot.app.query_one(Composer).load_text(text)
        await pilot.pause()

    return run_before


def test_main_screen(snap_compare: SnapCompare, demo_config: Config) -> None:
    assert snap_compare(_app(demo_config), terminal_size=SIZE, run_before=_ready)


def test_timeline_open(snap_compare: SnapCompare, demo_config: Config) -> None:
    assert snap_compare(_app(demo_config), press=["ctrl+t"], terminal_size=SIZE, run_before=_ready)


def test_summary_inspector(snap_compare: SnapCompare, demo_config: Config) -> None:
    assert snap_compare(
        _app(demo_config), press=["ctrl+t", "enter"], terminal_size=SIZE, run_before=_ready
    )


def test_context_preview(snap_compare: SnapCompare, demo_config: Config) -> None:
    assert snap_compare(
        _app(demo_config),
        press=["ctrl+o"],
        terminal_size=SIZE,
        run_before=_typing("what was the rollback plan?"),
    )


def test_help(snap_compare: SnapCompare, demo_config: Config) -> None:
    assert snap_compare(_app(demo_config), press=["f1"], terminal_size=SIZE, run_before=_ready)


def test_no_key(snap_compare: SnapCompare, no_key_demo_config: Config) -> None:
    assert snap_compare(_app(no_key_demo_config), terminal_size=SIZE, run_before=_ready)
