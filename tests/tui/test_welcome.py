"""The first start: an empty chat shows a short welcome (what to type, f1, the gauge, ctrl+p)
that goes with the first message; the help screen opens on "Getting started"."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.containers import Grid, VerticalScroll
from textual.widgets import Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.help import HelpScreen


def _welcome(app: object) -> Static | None:
    found = list(app.main_screen.query("#welcome"))  # type: ignore[attr-defined]
    return found[0] if found else None


async def test_an_empty_chat_welcomes_and_the_first_message_ends_it(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)  # the first start: no conversation yet
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        welcome = _welcome(app)
        assert welcome is not None
        await until(pilot, lambda: welcome.display)
        text = str(welcome.visual)
        for words in ("enter", "f1", "ctrl+p", "gauge"):
            assert words in text, text
        assert welcome.region.height > 0 and welcome.region.bottom <= screen.composer.region.y
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: not welcome.display)
        await settle(pilot)
        assert not welcome.display


async def test_a_chat_with_messages_has_no_welcome(service: ChatService, tmp_path: Path) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False, turns=6)
    app = make_app(service, demo.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await settle(pilot)
        welcome = _welcome(app)
        assert welcome is not None and not welcome.display


async def test_help_opens_on_getting_started_before_the_keys(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        help_screen = await on_screen(pilot, HelpScreen)
        scroll = help_screen.query_one(VerticalScroll)
        first = scroll.children[0]
        assert isinstance(first, Static) and not isinstance(first, Grid)
        text = str(first.visual)
        assert text.startswith("Getting started") and "ctrl+p" in text and "gauge" in text
        assert isinstance(scroll.children[1], Grid)  # the keys come after


async def test_the_welcome_goes_with_the_first_message_not_with_its_reply(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    """The first prompt hides the welcome at once, while its reply streams: left for the
    reply's end, the welcome's going moved the whole chat after the reply's last word."""
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        welcome = _welcome(app)
        assert welcome is not None
        await until(pilot, lambda: welcome.display)
        gate = threading.Event()  # the reply stops after its first words until the test looked
        fake_anthropic.push_hang(600, after_chunks=1, text="one two three four five six", gate=gate)
        await pilot.press(*"hello", "enter")
        try:
            await until(pilot, lambda: screen.streaming_id is not None)
            assert not welcome.display
        finally:
            gate.set()
        await until(pilot, lambda: screen.streaming_id is None)
        assert not welcome.display
