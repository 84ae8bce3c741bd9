"""The usage screen (f8 or the palette's "Usage and cost"): cost per day or month and model as a
table and bars; the conversation list shows each conversation's cost.
"""

from __future__ import annotations

from textual.widgets import DataTable, OptionList, Static

from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, from_palette, ready, until
from tui_chat.core.models import Usage
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.usage import UsageScreen

DAYS = ("2026-03-01T10:00:00+00:00", "2026-03-02T10:00:00+00:00", "2026-04-05T10:00:00+00:00")


async def _spend(service: ChatService) -> str:
    """A conversation with replies of two models on three days (two months)."""
    conv = await service.conversations.new(title="costly")
    for n, (day, model) in enumerate(
        zip(DAYS, ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"), strict=True)
    ):
        await engine_of(service).store.messages.add(
            conv.id,
            role="user",
            content=[{"type": "text", "text": f"q{n}"}],
            text=f"q{n}",
            token_count=2,
            created_at=day,
        )
        await engine_of(service).store.messages.add(
            conv.id,
            role="assistant",
            content=[{"type": "text", "text": "a"}],
            text="a",
            token_count=1,
            model=model,
            created_at=day,
            usage=Usage(input_tokens=200_000, output_tokens=10_000 * (n + 1)),
        )
    return conv.id


def _table(app: object) -> list[list[str]]:
    table = app.screen.query_one(DataTable)  # type: ignore[attr-defined]
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def _shown(pilot: ChatPilot, by: str) -> UsageScreen:
    await until(pilot, lambda: isinstance(pilot.app.screen, UsageScreen))
    screen = pilot.app.screen
    assert isinstance(screen, UsageScreen)
    await until(pilot, lambda: screen.report is not None and screen.report.by == by)
    await pilot.pause()
    return screen


async def test_usage_screen_per_day_and_month_with_bars(service: ChatService) -> None:
    conv_id = await _spend(service)
    total = await service.costs.of(conv_id)
    app = make_app(service, conv_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f8")
        screen = await _shown(pilot, "day")
        rows = _table(app)
        assert [r[0] for r in rows] == ["2026-03-01", "2026-03-02", "2026-04-05"]
        assert [r[1] for r in rows] == [
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-sonnet-4-5",
        ]
        chart = str(screen.query_one("#usage-chart", Static).render())
        assert chart.count("\n") == 2 and "█" in chart  # a bar per day
        assert f"${total:.2f}" in str(screen.query_one("#usage-total", Static).render())
        await pilot.press("m")
        await _shown(pilot, "month")
        months = _table(app)
        assert [(r[0], r[1]) for r in months] == [
            ("2026-03", "claude-haiku-4-5"),
            ("2026-03", "claude-sonnet-4-5"),
            ("2026-04", "claude-sonnet-4-5"),
        ]
        assert screen.query_one(DataTable).ordered_columns[0].label.plain == "month"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, UsageScreen))
        await from_palette(pilot, "Usage and cost")
        await _shown(pilot, "day")


async def test_usage_screen_with_nothing_spent_says_so(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f8")
        screen = await _shown(pilot, "day")
        assert "No usage yet" in str(screen.query_one("#usage-total", Static).render())


async def test_the_conversation_list_shows_each_conversations_cost(service: ChatService) -> None:
    conv_id = await _spend(service)
    await service.conversations.new(title="free")  # nothing sent: no figure
    cost = await service.costs.of(conv_id)
    app = make_app(service, conv_id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b")
        options = app.screen.query_one("#conversation-options", OptionList)
        await until(pilot, lambda: options.option_count == 2)
        prompts = {o.id: str(o.prompt) for o in options.options}
        assert f"${cost:.2f}" in prompts[conv_id]
        assert "$" not in next(p for i, p in prompts.items() if i != conv_id)
