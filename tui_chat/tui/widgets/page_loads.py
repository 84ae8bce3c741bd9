"""The chat pane's pages loaded and mounted: a slice of messages a frame, ahead of held keys.

A page of 50 Markdown documents composed and laid out at once held every key and frame for
0.4-1.1 s. A page is read at once and mounted :attr:`PageLoads.SLICE` messages a frame, the
nearest the view first, the place of the view kept at each (:mod:`~.kept_place`); it starts
loading while the keys are still :attr:`PageLoads.AHEAD` screens from the window's edge, and a
key at the edge waits for the next slice, not for the whole page.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, Protocol

from textual.actions import SkipAction
from textual.containers import VerticalScroll
from textual.layout import DockArrangeResult
from textual.worker import Worker

from tui_chat.core.models import Message
from tui_chat.tui.after_frame import after_frame, next_frame
from tui_chat.tui.widgets.kept_place import KeptPlace
from tui_chat.tui.widgets.key_hold import KeyHold
from tui_chat.tui.widgets.message_pins import MessagePins
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.pages import Pages, mark_left_out

__all__ = ["PageLoads", "Paged", "mark_last", "new_views", "scroll_into_view"]

Load = Callable[[], Coroutine[Any, Any, bool]]


class Paged(Protocol):
    """The window of the pane as its loads see it (the chat pane is one)."""

    conversation_id: str | None
    has_older: bool
    has_newer: bool
    pages: Pages
    pins: MessagePins
    branch_marks: dict[int, str]

    @property
    def views(self) -> list[MessageView]:
        """The mounted message widgets, oldest first."""
        ...

    async def load_older(self) -> bool:
        """Mount the page before the oldest mounted message (under the pane's page lock)."""
        ...

    async def load_newer(self) -> bool:
        """Mount the page after the newest mounted message (under the pane's page lock)."""
        ...


class PageLoads:
    """The loads of one chat pane's pages.

    Args:
        pane: The scrolling pane the messages are mounted in.
        window: Its window of messages (the chat pane passes itself as both).
        place: The place of its view, kept while a slice is laid out.
        keys: The hold of its keys on full collections.
        limit: Most message widgets mounted at once (read at each mount).
    """

    SLICE: ClassVar[int] = 10
    """Messages of a page mounted a frame."""
    AHEAD: ClassVar[float] = 2.0
    """Screens from the window's edge at which the next page starts loading (scrolling or
    moving the selection towards it), so held keys find it mounted."""

    def __init__(
        self,
        pane: VerticalScroll,
        window: Paged,
        place: KeptPlace,
        keys: KeyHold,
        limit: Callable[[], int],
    ) -> None:
        self._pane = pane
        self._window = window
        self._place = place
        self._keys = keys
        self._limit = limit
        self.loading = False
        """A page is being read or mounted."""
        self._due = False
        """A load of the next page is started and has not ended (its worker may not run)."""
        self._slice_in = asyncio.Event()
        """Set (and replaced) when a slice of a page is mounted, or a load ends."""

    @property
    def busy(self) -> bool:
        """A load runs or is started."""
        return self.loading or self._due

    async def older(self) -> bool:
        """Mount the page before the oldest mounted message (the caller holds the page lock).

        Returns:
            True when messages were added.
        """
        window = self._window
        views = window.views
        if not window.has_older or not views or window.conversation_id is None:
            return False
        self.loading = True
        try:
            first = views[0]
            page, more = await window.pages.before(window.conversation_id, first.message_id)
            window.has_older = more or bool(page)
            if not page:
                return False
            # Nearest the view first: the newest of the page, then older slices above it.
            for end in range(len(page), 0, -self.SLICE):
                if end < len(page) and not await self._next_slice(first):
                    return True  # the window changed: what is left stays unread
                part = page[max(end - self.SLICE, 0) : end]
                if end <= self.SLICE:
                    window.has_older = more
                first = await self._mount(part, before=first)
            return True
        finally:
            self.loading = False
            self._sliced()

    async def newer(self) -> bool:
        """Mount the page after the newest mounted message (the bottom was pruned; the caller
        holds the page lock).

        Returns:
            True when messages were added.
        """
        window = self._window
        views = window.views
        if not window.has_newer or not views or window.conversation_id is None:
            return False
        self.loading = True
        try:
            last = views[-1]
            page, more = await window.pages.after(window.conversation_id, last.message_id)
            window.has_newer = more or bool(page)
            if not page:
                mark_last(window.views, window.has_newer)
                return False
            for start in range(0, len(page), self.SLICE):
                if start and not await self._next_slice(last):
                    return True
                if start + self.SLICE >= len(page):
                    window.has_newer = more
                last = await self._mount(page[start : start + self.SLICE])
            return True
        finally:
            self.loading = False
            self._sliced()

    async def _mount(self, part: list[Message], before: MessageView | None = None) -> MessageView:
        """Mount ``part`` above ``before`` (or at the bottom), pruning the other end past the
        limit, the place of the view kept; returns its view at the far end."""
        pane, window = self._pane, self._window
        place = self._place.top()  # kept while the slice is laid out, whenever that is
        views = new_views(part, window)
        await pane.mount_all(views, before=before)
        overflow = len(window.views) - self._limit()
        if before is not None:
            if overflow > 0:
                await pane.remove_children(window.views[-overflow:])
                window.has_newer = True
                mark_last(window.views, window.has_newer)
        else:
            if overflow > 0:
                await pane.remove_children(window.views[:overflow])
                window.has_older = True
            mark_last(window.views, window.has_newer)
            pane.release_anchor()  # the end of a pruned window is not the chat's end
        self._place.hold(place, page=views[0])  # keys held past the edge scroll into it
        self._sliced()
        return views[0] if before is not None else views[-1]

    async def _next_slice(self, edge: MessageView) -> bool:
        """Wait for a frame between two slices of a page (keys and frames come between);
        ``False``: the window no longer ends at ``edge`` (replaced meanwhile)."""
        if not await next_frame(self._pane):
            return False
        return edge.parent is self._pane

    def _sliced(self) -> None:
        """A slice came in (or a load ended): whoever waits for one goes on."""
        self._slice_in.set()
        self._slice_in = asyncio.Event()

    async def slice_in(self, load: Load) -> None:
        """Until the next slice of a page is mounted, or the load ends (started if none
        runs): a key at the window's edge waits for it, not for the whole page."""
        slice_in = self._slice_in
        if self._start(load):
            await slice_in.wait()

    def _start(self, load: Load) -> bool:
        """Start ``load`` in a worker unless a load runs or is started; ``False``: none
        runs (nothing to wait for)."""
        if self.busy:
            return True
        if self._window.conversation_id is None or not self._window.views:
            return False
        self._due = True
        towards = -1 if load == self._window.load_older else 1

        async def run() -> bool:
            try:
                return await load()
            finally:
                self._due = False
                self._sliced()
                after_frame(self._pane, self.at_edge, towards)  # the next page, if near

        # (Typed: mypy does not infer the result through Textual's ``WorkType`` union.)
        _worker: Worker[bool] = self._pane.run_worker(run, group="page", exit_on_error=False)
        return True

    def at_edge(self, towards: int = 0) -> None:
        """Load the next page if the view is at the top (or the bottom) with more beyond it:
        keys held while a page loaded scrolled there without a change to see. ``towards``
        the older messages (-1: a key up, or a page loaded up) or the newer ones (1): the
        page that way already :attr:`AHEAD` screens from its edge, so held keys find it in."""
        pane, window = self._pane, self._window
        if self.busy or window.conversation_id is None or not window.views:
            return
        near = self.AHEAD * pane.scrollable_content_region.height
        top = near if towards < 0 else 0.0
        bottom = near if towards > 0 else 0.0
        if pane.scroll_y <= top and window.has_older:
            self._start(window.load_older)
        elif window.has_newer and pane.scroll_y >= pane.max_scroll_y - bottom and pane.max_scroll_y:
            self._start(window.load_newer)

    # Scrolled at once, without animation: each press of a held key moves from where the last
    # one left the view (200 presses queued at once moved one page: each started from the
    # same place), and the edge is seen as soon as it is reached.

    def scroll_by(self, lines: float) -> None:
        """Scroll ``lines`` (a page key); past an edge with more beyond, owed to that page."""
        pane, window = self._pane, self._window
        if not pane.allow_vertical_scroll:
            raise SkipAction()
        self._keys.pressed()
        target = pane.scroll_y + lines
        if target < 0 and window.has_older:  # past an edge: taken up once the page is in
            self._place.owe(target)
        elif target > pane.max_scroll_y and window.has_newer:
            self._place.owe(target - pane.max_scroll_y)
        pane.scroll_to(y=target, animate=False, immediate=True)
        self.at_edge(-1 if lines < 0 else 1)


def scroll_into_view(
    pane: VerticalScroll, arranged: DockArrangeResult | None, view: MessageView
) -> None:
    """Scroll ``view`` into view at once, as ``scroll_to_widget`` does, with its place taken
    from the pane's arrangement (the screen's map holds only what is on screen after a
    scroll: the message above the view was looked for in a map rebuilt of every widget)."""
    if arranged is None:
        return
    for placement in arranged.placements:
        if placement.widget is view:
            if placement.region.size:
                pane.scroll_to_region(
                    placement.region.grow(view.styles.margin),
                    spacing=arranged.scroll_spacing,
                    animate=False,
                    immediate=True,
                )
            return


def new_views(page: list[Message], window: Paged) -> list[MessageView]:
    """A view for each message of ``page``, pinned ones and where branches part marked."""
    pinned, marks = window.pins.ids, window.branch_marks
    return [MessageView(m, pinned=m.id in pinned, mark=marks.get(m.id, "")) for m in page]


def mark_last(views: list[MessageView], has_newer: bool) -> None:
    """Mark the last message of the window (when it is the conversation's last) and the ones
    the next request leaves out."""
    for view in views:
        view.set_last(False)
    if views and not has_newer:
        views[-1].set_last(True)
    mark_left_out(views)
