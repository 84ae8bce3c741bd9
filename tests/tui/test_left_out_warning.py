"""The "prompt left out" warning under the gauge: one line at most, dismissed by a click or the
palette, and gone once the prompt was sent again."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import from_palette, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen


def _warning_rows(screen: MainScreen) -> list[str]:
    gauge = screen.gauge
    lines = [str(line) for line in gauge.render().wrap(gauge.content_size.width)]
    first = next((i for i, line in enumerate(lines) if line.startswith("⚠")), len(lines))
    return lines[first:]  # the warnings come last: every row they take


async def _failed_then_answered(pilot: object, screen: MainScreen, fake: FakeAnthropic) -> None:
    fake.push_error(529)
    await pilot.press(*"the failing prompt about harbour tides", "enter")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    await pilot.press(*"another question", "enter")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]


async def test_the_left_out_warning_is_one_line_and_can_be_dismissed(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await _failed_then_answered(pilot, screen, fake_anthropic)
        await until(pilot, lambda: bool(_warning_rows(screen)))
        rows = _warning_rows(screen)
        assert len(rows) == 1 and "left out" in rows[0]  # before: two rows at 80 columns
        height = screen.gauge.content_size.height
        await pilot.click(screen.gauge, offset=(2, height - 1))  # the warning's line
        await until(pilot, lambda: not _warning_rows(screen))
        assert screen.gauge.content_size.height == height - 1  # its row is given back
        await pilot.press(*"third", "enter")
        await settle(pilot)
        assert not _warning_rows(screen)  # the same warning stays dismissed


async def test_the_palette_hides_the_warning_and_resending_the_prompt_ends_it(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        await _failed_then_answered(pilot, screen, fake_anthropic)
        await until(pilot, lambda: bool(_warning_rows(screen)))
        await from_palette(pilot, "Hide warnings")
        await until(pilot, lambda: not _warning_rows(screen))
        screen.gauge.dismissed.clear()  # shown again: now send the prompt anew
        await screen.refresh_gauge()
        await until(pilot, lambda: bool(_warning_rows(screen)))
        await pilot.press(*"the failing prompt about harbour tides", "enter")
        await settle(pilot)
        await screen.refresh_gauge()
        await pilot.pause()
        assert not _warning_rows(screen)
        assert screen.breakdown is not None
        assert not any("left out" in w for w in screen.breakdown.warnings)
