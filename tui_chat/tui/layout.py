"""Who gets the width: the chat column first, the side panels with what it can spare.

The conversation list and the summary timeline are side panels of fixed preferred widths. In a
narrow terminal (or beside the keys panel) they give way: the panel opened last keeps its place
(shrunk down to :data:`PANEL_MIN_WIDTH` when needed), one opened earlier is hidden until there
is room again, and the chat column never gets narrower than :data:`CHAT_MIN_WIDTH`.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import Horizontal
from textual.widget import Widget

CHAT_MIN_WIDTH = 40
"""Columns the chat column (messages, composer, gauge) always keeps."""
PANEL_MIN_WIDTH = 24
"""A side panel is not shown narrower than this."""


def fit_panels(body_width: int, wanted: Sequence[tuple[str, int]]) -> dict[str, int]:
    """The panels shown and their widths.

    Args:
        body_width: Columns of the row holding the panels and the chat column.
        wanted: ``(panel id, preferred width)`` of every open panel, most recently opened
            first.

    Returns:
        The width of each panel that is shown; an open panel missing from it gives way.
    """
    room = body_width - CHAT_MIN_WIDTH
    shown: dict[str, int] = {}
    for name, preferred in wanted:
        if preferred <= room:
            shown[name] = preferred
            room -= preferred
        elif not shown and room >= PANEL_MIN_WIDTH:
            shown[name] = room
            room = 0
    return shown


class PanelRow(Horizontal):
    """The row of side panels and the chat column, applying :func:`fit_panels` whenever its
    width changes.

    A panel opened or closed is fitted at once. A width changed by a layout (the terminal
    resized, the keys panel shown or hidden) is fitted after that layout: on the row's
    ``Resize`` and after every layout of the screen in which the row's width is not the one
    last fitted. Textual does not send ``Resize`` on every path: its scroll fast path arranges
    the whole screen but resizes only the widgets the scroll exposed, and a later full layout
    finds the width already taken and sends nothing; the panels stayed fitted to the old width
    and the chat column squeezed.

    Args:
        panels: Ids of the children that are side panels, with their preferred widths.
        fallback: Id of the widget that takes the focus from a panel giving way.
        id: The widget id.
    """

    DEFAULT_CSS = """
    PanelRow { height: 1fr; }
    """

    def __init__(self, panels: dict[str, int], *, fallback: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self._preferred = dict(panels)
        self._fallback = fallback
        self._open: list[str] = []  # most recently opened first
        self._fitted_width: int | None = None  # the width of the last fit

    def is_shown(self, panel_id: str) -> bool:
        """True when the panel is open and has room."""
        return self._panel(panel_id).display

    def open(self, panel_id: str) -> bool:
        """Open a panel (it takes precedence over the others).

        Returns:
            True when it has room to show.
        """
        if panel_id in self._open:
            self._open.remove(panel_id)
        self._open.insert(0, panel_id)
        self.fit()
        return self.is_shown(panel_id)

    def close(self, panel_id: str) -> None:
        """Close a panel."""
        if panel_id in self._open:
            self._open.remove(panel_id)
        self.fit()

    def fit(self) -> None:
        """Show the open panels that fit, at their widths; hide the others (again and again
        the same for the same width and open panels)."""
        width = self._width()
        self._fitted_width = width
        shown = fit_panels(width, [(p, self._preferred[p]) for p in self._open])
        for panel_id in self._preferred:
            panel = self._panel(panel_id)
            if panel_id in shown:
                panel.styles.width = shown[panel_id]
                panel.display = True
            elif panel.display:
                if panel.has_focus_within:
                    self.screen.query_one(f"#{self._fallback}").focus()
                panel.display = False

    def on_mount(self) -> None:
        """Check the width after every layout of the screen (see the class)."""
        self.screen.screen_layout_refresh_signal.subscribe(self, self._refit)

    def on_resize(self) -> None:
        """The terminal or the keys panel changed the row's width: fit again."""
        self._refit()

    def _refit(self, _screen: object = None) -> None:
        """Fit again if the row's width is not the one last fitted."""
        if self._width() != self._fitted_width:
            self.fit()

    def _width(self) -> int:
        """The row's width as laid out now (the terminal's before the first layout)."""
        return self.size.width or self.app.size.width

    def _panel(self, panel_id: str) -> Widget:
        return self.query_one(f"#{panel_id}")
