"""Pilot tests of the TUI: small terminals, lost keystrokes, scrolling after a
send, failed prompts, and the smaller rough edges (toasts, modals, drafts, unarchive).

Widgets are found by their ids (``#composer``, ``#chat`` …) so these tests describe what a
user sees and types, not how the screen is put together.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import from_palette, notifications, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService

SIZES = [(80, 24), (100, 30), (120, 36), (200, 50)]
CHAT_MIN_WIDTH = 40
"""The chat column never gets narrower than this (terminals at least 80 columns wide)."""

PANELS = [(), ("ctrl+b",), ("ctrl+t",), ("ctrl+b", "ctrl+t")]
"""Every combination of the side panels, as the keys that open them."""

SCREENS = [
    ("help", "f1"),
    ("search", "ctrl+f"),
    ("context preview", "ctrl+o"),
    ("settings", "f3"),
    ("inspector", "f4"),
    ("rename", "f2"),
    ("export", "ctrl+s"),
    ("palette", "ctrl+p"),
]
"""(name, key) of every screen opened from the main screen."""

AnyPilot = Pilot[None]


def _main(app: App[None]) -> Widget:
    return app.screen_stack[0]


def _by_id(app: App[None], widget_id: str) -> Widget:
    return _main(app).query_one(f"#{widget_id}")


def _composer_text(app: App[None]) -> str:
    return str(_by_id(app, "composer").text)


def _alive(app: App[None]) -> None:
    assert app.is_running, "the app exited"
    assert app._exception is None, f"the app crashed: {app._exception!r}"


def _layout_ok(app: App[None], width: int) -> bool:
    """The chat column keeps a usable width and the composer some room."""
    center = _by_id(app, "center")
    composer = _by_id(app, "composer")
    return center.region.width >= min(CHAT_MIN_WIDTH, width) and composer.content_region.width > 0


async def _check_layout(pilot: AnyPilot, width: int) -> None:
    """Once laid out (a panel or screen just opened is fitted in the frames that follow),
    the chat column keeps a usable width and the composer some room."""
    await until(pilot, lambda: _layout_ok(pilot.app, width))


def _footer_misfit(app: App[None], width: int) -> str | None:
    """What is wrong with the footer's f1 and ctrl+q keys at ``width`` (``None``: both shown,
    inside the screen)."""
    keys = {key.key: key for key in app.screen.query(FooterKey)}
    for key in ("f1", "ctrl+q"):
        if key not in keys:
            return f"{key} not in the footer"
        region = keys[key].region
        if not (region.width > 0 and region.right <= width):
            return f"{key} at {region}"
    return None


async def _check_footer(pilot: AnyPilot, width: int) -> None:
    """Once laid out, the footer shows f1 and ctrl+q inside the screen: a panel opened moves
    the focus, and the footer rebuilds its keys for it over the next frames (read at once, the
    old keys could be gone and the new ones not yet placed)."""
    app = pilot.app
    await until(
        pilot, lambda: _footer_misfit(app, width) is None, state=lambda: _footer_misfit(app, width)
    )


def _burst(app: App[None], *keys: str) -> None:
    """Queue key presses at once, as a fast typist does (no pause for screens to open)."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        driver.send_message(event)


async def _send(pilot: AnyPilot, text: str) -> None:
    app = pilot.app
    _by_id(app, "composer").focus()
    await pilot.pause()
    await pilot.press(*text)
    await pilot.press("enter")


# -- 1. small terminals -------------------------------------------------------------------------


FEW_TURNS = 6
"""Turns of the demo the tests of this file seed: its versions, its pin and more than a
screenful at every size. Each screen opened and closed lays the chat out again (twice): the
whole demo's 24 messages made a size of the sweep cost 25-35 s."""


async def _resize(pilot: AnyPilot, size: tuple[int, int]) -> None:
    """Resize the terminal and wait until the main screen is laid out at ``size``."""
    app = pilot.app
    await pilot.resize_terminal(*size)
    await until(pilot, lambda: tuple(_main(app).size) == size)
    await until(pilot, lambda: _main(app).query_one(Footer).region.width == size[0])
    await pilot.pause()


async def _open_everything(
    service: ChatService,
    tmp_path: Path,
    sizes: list[tuple[int, int]],
    panel_sets: list[tuple[str, ...]],
) -> None:
    """At each of ``sizes`` (the app starts at the first, the terminal is resized to the next),
    open each set of side panels, and every screen over one of them (the next set at each
    size: every size and every set has every screen over it once): nothing crashes, the chat
    keeps a usable width and the footer its keys. (A screen covers the panels: over all four
    sets at every size, the sweep took 80 s for four times the same screens.)"""
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=sizes[0]) as pilot:
        await ready(pilot)
        for at, size in enumerate(sizes):
            if tuple(app.size) != size:
                await _resize(pilot, size)
            under = panel_sets[at % len(panel_sets)]
            await _open_at(pilot, size[0], panel_sets, under)


async def _open_at(
    pilot: AnyPilot,
    width: int,
    panel_sets: list[tuple[str, ...]],
    screens_over: tuple[str, ...],
) -> None:
    app = pilot.app
    await until(pilot, lambda: bool(app.screen.query(FooterKey)))  # composed after a resize
    await _check_footer(pilot, width)
    for panels in panel_sets:
        await pilot.press(*panels)
        await pilot.pause()
        _alive(app)
        await _check_layout(pilot, width)
        await _check_footer(pilot, width)
        for name, key in SCREENS if panels == screens_over else ():
            await pilot.press(key)
            await until(pilot, lambda: len(app.screen_stack) > 1)
            await pilot.pause()
            _alive(app)
            await _check_layout(pilot, width)
            await pilot.press("escape")
            await until(pilot, lambda: len(app.screen_stack) == 1)
            _alive(app)
            assert app.screen is _main(app), name
        # The keys panel of the palette docks on the main screen itself.
        app.action_show_help_panel()
        await pilot.pause()
        _alive(app)
        await _check_layout(pilot, width)
        app.action_hide_help_panel()
        await pilot.pause()
        # Close what is open (escape first: a panel may have taken focus).
        for panel_id, key in (("conversations", "ctrl+b"), ("timeline", "ctrl+t")):
            if _by_id(app, panel_id).display:
                await pilot.press(key)
        await pilot.pause()
        _alive(app)


async def test_every_screen_fits_the_narrowest_chat(service: ChatService, tmp_path: Path) -> None:
    """The fast tier's case: 80x24 with both side panels open leaves the chat its least room."""
    await _open_everything(service, tmp_path, [(80, 24)], [("ctrl+b", "ctrl+t")])


@pytest.mark.slow  # a sweep: 4 sizes x 4 panel sets, 8 screens over one set at each size
async def test_every_panel_and_screen_fits_without_a_crash(
    service: ChatService, tmp_path: Path
) -> None:
    """One app, started at the smallest size and resized to each larger one (a fresh start at
    each size is what every other test does, at 100x30, 120x36 and 200x50)."""
    await _open_everything(service, tmp_path, SIZES, PANELS)


async def test_keys_from_the_palette_with_both_panels_does_not_crash(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+t", "ctrl+b")
        await from_palette(pilot, "Keys")
        await until(pilot, lambda: bool(app.screen.query("HelpPanel")))
        await pilot.pause()
        _alive(app)
        await _check_layout(pilot, 120)


@pytest.mark.parametrize("order", [("ctrl+t", "ctrl+b"), ("ctrl+b", "ctrl+t")])
async def test_both_panels_at_80x24_leave_a_usable_chat(
    service: ChatService, order: tuple[str, str]
) -> None:
    app = make_app(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*order)
        await pilot.pause()
        _alive(app)
        await _check_layout(pilot, 80)
        await pilot.press("escape", *"hello")
        _alive(app)
        assert _composer_text(app) == "hello"


# -- 2. keystrokes go somewhere -----------------------------------------------------------------


@pytest.mark.parametrize("panel", ["ctrl+t", "ctrl+b"])
async def test_typing_after_opening_a_panel_reaches_the_composer(
    service: ChatService, tmp_path: Path, panel: str
) -> None:
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await pilot.press(panel)
        assert app.focused is not _by_id(app, "composer")  # the panel took focus
        await pilot.press(*"hello")
        assert _composer_text(app) == "hello"
        assert app.focused is _by_id(app, "composer")


@pytest.mark.parametrize("panel", ["ctrl+t", "ctrl+b", "f5"])
async def test_escape_from_a_panel_returns_to_the_composer(
    service: ChatService, tmp_path: Path, panel: str
) -> None:
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await pilot.press(panel)
        assert app.focused is not _by_id(app, "composer")
        await pilot.press("escape")
        assert app.focused is _by_id(app, "composer")


async def test_typing_after_a_search_jump_goes_to_the_composer_not_to_bindings(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await until(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.press(*"sequences", "enter")
        await until(pilot, lambda: bool(getattr(app.screen, "hits", [])))
        await until(pilot, lambda: getattr(app.focused, "id", None) == "search-results")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await settle(pilot)
        await pilot.press(*"check")
        assert _composer_text(app) == "check"
        assert not any("Copied" in n for n in notifications(app))
        assert app.clipboard == ""


async def test_typing_after_closing_the_inspector_reaches_the_composer(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path, turns=FEW_TURNS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+t", "enter")  # inspect the highlighted version
        await until(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.press("escape")
        await until(pilot, lambda: len(app.screen_stack) == 1)
        await pilot.press(*"abc")
        assert _composer_text(app) == "abc"


async def test_keys_typed_while_a_screen_opens_are_not_lost(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        _burst(app, "ctrl+f", *"needle")
        await until(pilot, lambda: len(app.screen_stack) > 1)
        field = app.screen.query_one("#search-input", Input)
        await until(pilot, lambda: len(field.value + _composer_text(app)) >= len("needle"))
        typed = app.screen.query_one("#search-input", Input).value + _composer_text(app)
        assert typed == "needle"
        assert app.screen.query_one("#search-input", Input).value == "needle"


# -- 3. a new send is scrolled into view --------------------------------------------------------


async def test_a_send_after_selecting_an_old_message_scrolls_to_the_end(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    conversation = await seed_demo(keyed_service, tmp_path, summaries=False)
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("f5", "g", "p", "i")
        await settle(pilot)
        fake_anthropic.push_reply("The newest reply.")
        await pilot.press(*"newest question", "enter")
        await settle(pilot)
        chat = _by_id(app, "chat")
        await until(pilot, lambda: chat.scroll_y >= chat.max_scroll_y - 1)
        views = list(chat.query("MessageView"))
        assert views[-1].region.height > 0  # the reply is on screen
        assert chat.scroll_y >= chat.max_scroll_y - 1
        assert chat.region.contains_region(views[-1].region) or views[-1].region.y < (
            chat.region.bottom
        )


# -- 4. failed prompts are not re-sent silently -------------------------------------------------


async def test_failed_prompts_are_marked_and_left_out_of_the_next_request(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_error(429, retry_after=0)
        await _send(pilot, "first try")
        await settle(pilot)
        fake_anthropic.push_error(529)
        await _send(pilot, "second try")
        await settle(pilot)
        fake_anthropic.push_reply("Answer to the third.")
        await _send(pilot, "third try")
        await settle(pilot)
        body = fake_anthropic.bodies[-1]
        sent = str(body["messages"])
        assert "third try" in sent
        assert "first try" not in sent and "second try" not in sent
        conv_id = screen.conversation_id
        stored = await keyed_service.messages.page(conv_id)
        assert [m.text for m in stored if m.role == "user"] == [
            "first try",
            "second try",
            "third try",
        ]
        # The chat marks both failed turns (prompt and failed reply) as left out.
        views = list(_by_id(app, "chat").query("MessageView"))
        marked = [v for v in views if v.has_class("-left-out")]
        assert [v.message_id for v in marked] == [m.id for m in stored[:4]]
        assert "Left out" in str(marked[0].query_one(".status", Static).visual)
        assert "ctrl+r" not in str(marked[1].query_one(".status", Static).visual)
        # So does the context preview.
        await pilot.press("ctrl+o")
        await until(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.pause()
        shown = " ".join(str(s.visual) for s in app.screen.query(Static))
        assert "left out" in shown


async def test_retry_still_sends_the_failed_last_prompt(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        fake_anthropic.push_error(529)
        await _send(pilot, "only prompt")
        await settle(pilot)
        fake_anthropic.push_reply("Now answered.")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "only prompt" in str(fake_anthropic.bodies[-1]["messages"])
        views = list(_by_id(app, "chat").query("MessageView"))
        assert not any(v.has_class("-left-out") for v in views)
