"""Keeping the chat pane's place while pages are mounted and laid out.

A page mounted above the view pushes what the user reads down, and its layout comes late:
Textual builds each Markdown document's blocks once the widget is in and lays them out on a
later frame, so one scroll made right after the mount is wrong when the layout comes. The
place is kept instead: the message at the top of the view stays at the same row, applied again
on every change of the pane's virtual size, until the pane follows the end of the chat or shows
another window. A scroll of the user's (a key, the wheel, a selection) moves the place to what
the view then shows; nothing is timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.layout import DockArrangeResult

from tui_chat.tui.widgets.message_view import MessageView


class Arranged(Protocol):
    """A pane that remembers its arrangement as the screen last laid it out (the chat pane)."""

    @property
    def arranged(self) -> DockArrangeResult | None:
        """The arrangement of its children in the last layout or scroll of the screen."""
        ...


class PageEdges(Arranged, Protocol):
    """The pages of the pane whose place is kept: whether more lie beyond the window at either
    end, the load of the next one, and its arrangement (the chat pane is one)."""

    has_older: bool
    has_newer: bool

    def page_at_edge(self) -> None:
        """Load the next page if the view is at the top (or bottom) with more beyond it."""
        ...


Place = tuple[MessageView, float]
"""A message and its row in the view: lines from the top of the view to its first line."""


def placed(pane: Arranged) -> Iterator[tuple[MessageView, Region]]:
    """Each message of the pane with its region in the pane's content, oldest first, as on
    screen (``scroll_y`` is read against that layout, not against one still to come).

    Read from the pane's arrangement, not from the screen's map of widgets: after a scroll
    only the widgets on screen are in the map, and asking for any other (the oldest message,
    above the view) rebuilt the map of every widget mounted (every Markdown block of up to
    150 messages), at each press of a held key."""
    arranged = pane.arranged
    for placement in arranged.placements if arranged is not None else ():
        if isinstance(view := placement.widget, MessageView) and view.parent is not None:
            yield view, placement.region


class KeptPlace:
    """The place of one chat pane: a message and its row in the view.

    Args:
        pane: The scrolling pane of message views whose scroll position is kept.
        edges: Its pages (the chat pane passes itself as both).
    """

    def __init__(self, pane: VerticalScroll, edges: PageEdges) -> None:
        self._pane = pane
        self._edges = edges
        self._place: Place | None = None
        self._owed = 0.0
        """Lines scrolled past the top or bottom (keys held while a page loaded): taken up
        once that page is laid out."""
        self._page: MessageView | None = None
        """The first message of the page the owed lines scroll into, once it is mounted."""
        self._scrolling = False

    def top(self) -> Place | None:
        """The message at the top of the view and its row (negative: it starts above)."""
        pane = self._pane
        y = pane.scroll_y
        for view, region in placed(self._edges):
            if region.height and region.bottom > y:
                return view, region.y - y
        return None

    def owe(self, lines: float) -> None:
        """Lines scrolled past the top (negative) or the bottom of the window, to scroll into
        the page loading there once it is laid out (a key the other way starts again)."""
        self._owed = lines if self._owed * lines < 0 else self._owed + lines

    def hold(self, place: Place | None, page: MessageView | None = None) -> None:
        """Keep ``place`` (taken before a page was mounted) and scroll to it.

        Args:
            place: The message at the top of the view and its row, before the mount.
            page: The first message of a page just mounted: the lines owed scroll into it.
        """
        self._place = place
        if page is not None:
            self._page = page
        self.apply()

    def release(self) -> None:
        """Keep no place and owe nothing (the pane shows another window)."""
        self._place = self._page = None
        self._owed = 0.0

    def apply(self) -> None:
        """Scroll so the kept message is at its row again (the layout changed)."""
        pane = self._pane
        if self._place is None:
            return
        view, row = self._place
        if view.parent is not pane or (pane.is_anchored and not pane._anchor_released):
            self._place = None  # pruned, or the chat follows its end
            return
        regions = dict(placed(self._edges))
        region = regions.get(view, Region())
        if not region.height:
            return  # not laid out yet: the layout to come changes the virtual size
        y = region.y - row
        page, past = self._page, False
        if page is not None and self._laid_out(page, regions):
            y += self._owed  # the page is laid out: the held keys scroll into it
            end = pane.max_scroll_y
            past = (y < 0 and self._edges.has_older) or (y > end and self._edges.has_newer)
            self._owed = (y if y < 0 else y - end) if past else 0.0  # into the next page
            self._page = None
            self._place = view, region.y - min(max(y, 0), end)
        self._scroll(y)
        if past:  # once the load that may be applying this is over
            pane.call_later(self._edges.page_at_edge)

    def _laid_out(self, page: MessageView, regions: dict[MessageView, Region]) -> bool:
        """Whether ``page`` is in the layout (and the pane's height, for lines owed below),
        by the ``regions`` of the messages as laid out."""
        if not regions.get(page, Region()).height:
            return False
        bottom = max((region.bottom for region in regions.values()), default=0)
        return self._owed <= 0 or self._pane.virtual_size.height >= bottom

    def scrolled(self) -> None:
        """The pane scrolled: by the user unless :meth:`apply` did it, so keep the place the
        view shows now."""
        if not self._scrolling and self._place is not None:
            self._place = self.top() or self._place

    def _scroll(self, y: float) -> None:
        self._scrolling = True
        try:
            self._pane.scroll_to(y=y, animate=False, immediate=True)
        finally:
            self._scrolling = False
