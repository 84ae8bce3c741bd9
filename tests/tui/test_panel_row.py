"""The side panels are fitted to the row's width after every layout, whichever path it took.

The row fitted its panels on open, on close and on its ``Resize`` event. Textual does not
always send that event when a layout changes the row's width: its scroll fast path
(``Compositor.reflow_visible``) arranges the whole screen as it is now but resizes only the
widgets a scroll newly exposed, and the compositor's full map, rebuilt lazily when something
asks for a widget off the visible map, takes the new widths without telling anyone. The next
full layout then finds the row's width unchanged and sends no ``Resize``. A keys panel mounted
beside both side panels (120 columns, then 81 for the row), followed by a scroll before the
keys panel's own layout request, left the panels fitted to 120 columns: 34 + 46 of 81, and the
chat column squeezed to its CSS minimum for good (once, on a loaded machine).
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import HelpPanel, Static

from tests.tui.helpers import until
from tui_chat.tui.layout import CHAT_MIN_WIDTH, PanelRow

WIDTH, HEIGHT = 120, 12
PANELS = {"left": 34, "right": 46}


class Row(App[None]):
    CSS = "#center { width: 1fr; }"

    def compose(self) -> ComposeResult:
        with PanelRow(PANELS, fallback="center", id="row"):
            yield Static("list", id="left")
            with Vertical(id="center"):
                yield Static("chat", id="chat")
            yield Static("timeline", id="right")

    def on_mount(self) -> None:
        self.query_one(PanelRow).fit()


def _widths(app: App[None]) -> dict[str, int]:
    """The columns the row, the chat column and each shown panel have on screen."""
    return {
        name: widget.region.width
        for name in ("row", "left", "center", "right")
        if (widget := app.query_one(f"#{name}")).display
    }


async def test_panels_are_refitted_when_a_layout_narrows_the_row_without_a_resize() -> None:
    app = Row()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        row = app.query_one(PanelRow)
        assert row.open("right") and row.open("left")
        await until(
            pilot, lambda: _widths(app) == {"row": 120, "left": 34, "center": 40, "right": 46}
        )
        await pilot.pause()  # nothing left pending
        screen = app.screen
        assert not screen._layout_widgets  # laid out: a scroll now takes the fast path
        screen._refresh_layout(scroll=True)  # a scroll: the compositor keeps a visible map
        screen.mount(HelpPanel())  # the keys panel (39 columns at 120), in the DOM at once
        screen._refresh_layout(scroll=True)  # a scroll before the keys panel asks for a layout
        assert screen._compositor.full_map  # a region asked for off the visible map
        # The keys panel's layout follows; the row (81 columns) gives the earlier panel's room
        # to the chat column.
        await until(
            pilot,
            lambda: _widths(app) == {"row": 81, "left": 34, "center": 47},
            state=lambda: _widths(app),
        )
        assert _widths(app)["center"] >= CHAT_MIN_WIDTH
