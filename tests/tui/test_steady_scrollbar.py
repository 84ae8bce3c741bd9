"""The chat's scrollbar thumb is drawn where the view is after every layout.

An anchored container is moved by Textual's compositor while it lays the screen out: it writes
the container's offset and its scrollbar's position past their reactives (no refresh). At
start-up the chat was laid out before the composer and the gauge took their height and again
after, so the view moved two rows in a layout that did not repaint the bar: the thumb stayed
two rows up until something else repainted it, and the main screen's snapshot drew one of two
thumbs from run to run.
"""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from tui_chat.tui.widgets.steady_scrollbar import SteadyScroll

WIDTH, HEIGHT = 30, 12


class Chat(App[None]):
    def compose(self) -> ComposeResult:
        yield SteadyScroll(*(Static(f"line {n}") for n in range(40)))


def _thumb_rows(lines: list[str], column: int) -> list[int]:
    return [n for n, row in enumerate(lines) if row[column : column + 1].strip()]


def _drawn_thumb(app: App[None], pane: SteadyScroll) -> list[int]:
    """The rows of the scrollbar's column showing a thumb glyph, as the compositor has the
    screen (its cached renders: what the terminal was sent)."""
    console = Console(width=WIDTH, height=HEIGHT, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True))
    return _thumb_rows(console.export_text().splitlines(), pane.vertical_scrollbar.region.x)


def _fresh_thumb(pane: SteadyScroll) -> list[int]:
    """The same for the scrollbar drawn afresh from the pane's offset now."""
    bar = pane.vertical_scrollbar
    width, height = bar.region.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(bar.render())  # the thumb at the bar's figures (not its cached lines)
    return [bar.region.y + n for n in _thumb_rows(console.export_text().splitlines(), 0)]


async def test_the_thumb_is_drawn_where_the_compositor_moved_the_view() -> None:
    app = Chat()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        pane = app.query_one(SteadyScroll)
        pane.anchor()
        await pilot.pause()
        assert _drawn_thumb(app, pane) == _fresh_thumb(pane)
        before = _drawn_thumb(app, pane)
        # What the compositor does to an anchored container whose end moved (textual's
        # _compositor.py): the offset and the bar's stored position, no reactive.
        moved = pane.scroll_y - 3.5
        pane.set_reactive(SteadyScroll.scroll_y, moved)
        pane.vertical_scrollbar._reactive_position = moved
        await pilot.pause()
        assert _fresh_thumb(pane) != before  # the thumb has somewhere else to be
        assert _drawn_thumb(app, pane) == _fresh_thumb(pane)
