"""The gauge against the working budget, and the cache tab of the context preview."""

from __future__ import annotations

from textual.widgets import Static

from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, until
from tui_chat.core.models import Usage
from tui_chat.core.request import Breakdown
from tui_chat.core.request.types import SECTIONS
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.context_preview import ContextPreviewScreen
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.token_gauge import TokenGauge


def _breakdown(**sections: int) -> Breakdown:
    values = dict.fromkeys(SECTIONS, 0) | sections
    total = sum(values.values())
    return Breakdown(
        window=1_000_000,
        max_output=16_384,
        usable=100_000,
        sections=values,
        input_tokens=total,
        calibrated_tokens=total,
        trigger_tokens=100_000,
        warn_tokens=80_000,
        warnings=(),
        budget=100_000,
    )


class TestGauge:
    def test_an_empty_request_is_an_empty_bar_with_the_marker_at_the_budget(self) -> None:
        gauge = TokenGauge()
        bar = str(gauge._bar(_breakdown(system=3), 40))
        assert set(bar[:-1]) == {TokenGauge.BAR_EMPTY} and bar[-1] == "┃"

    def test_the_bar_fills_by_share_of_the_budget(self) -> None:
        gauge = TokenGauge()
        bar = str(gauge._bar(_breakdown(system=1_000, recent=49_000), 40))
        assert bar.count(TokenGauge.BAR_FULL) == 20 and bar.endswith("┃")

    async def test_one_figure_against_the_budget_and_no_second_estimate(
        self, service: ChatService
    ) -> None:
        conversation = await service.conversations.new("gauge")
        await service.conversations.set_setting(conversation.id, "budget", "50000")
        app = make_app(service, conversation.id)
        async with app.run_test(size=SIZE) as pilot:
            screen = await ready(pilot)
            await until(pilot, lambda: screen.gauge.breakdown is not None)
            rendered = str(screen.gauge.render())
            assert "/ 50k budget" in rendered
            assert "compacts at 50k" in rendered
            assert " cal " not in rendered and "≈" not in rendered
            assert "spent $" in rendered


async def test_the_cache_tab_shows_reads_writes_and_misses_per_turn(
    service: ChatService,
) -> None:
    conversation = await service.conversations.new("cache")
    usages = (Usage(900, 40, 2_000, 0), Usage(50, 40, 300, 2_000, 300))
    for number, usage in enumerate(usages):
        for role in ("user", "assistant"):
            await engine_of(service).store.messages.add(
                conversation.id,
                role=role,  # type: ignore[arg-type]
                content=[{"type": "text", "text": f"{role} {number}"}],
                text=f"{role} {number}",
                token_count=5,
                usage=usage if role == "assistant" else None,
            )
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.query_one(Composer).load_text("third")
        await pilot.press("ctrl+o")
        await on_screen(pilot, ContextPreviewScreen)
        await pilot.press("k")
        table = str(app.screen.query_one("#request-cache", Static).visual)
        assert "read" in table and "written" in table and "uncached" in table
        assert table.count("#") >= 2  # one line per reply
        assert table.count("miss") == 1  # the first turn read nothing from the cache
        assert "(1h)" in table  # the second wrote with the 1-hour lifetime
