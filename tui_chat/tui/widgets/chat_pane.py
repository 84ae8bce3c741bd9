"""The chat pane: a bounded window of message widgets over the conversation in SQLite.

Textual containers are not virtualised, so only a window of at most :attr:`ChatPane.MAX_MOUNTED`
messages is mounted. Older pages are fetched from the :class:`MessageSource` (the engine) when
the user scrolls or moves the selection past the top, newer ones the same way at the bottom of a
window that was pruned there; when the window grows too large the other end is pruned.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

from textual.binding import BindingType
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.worker import Worker

from tui_chat.core.models import Message
from tui_chat.tui.actions import bindings
from tui_chat.tui.failures import report_failure
from tui_chat.tui.widgets.kept_place import KeptPlace
from tui_chat.tui.widgets.key_hold import KeyHold
from tui_chat.tui.widgets.message_actions import MessageActions
from tui_chat.tui.widgets.message_pins import MessagePins, PinsChanged
from tui_chat.tui.widgets.message_range import MessageRange
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.navigation import NavigationMode
from tui_chat.tui.widgets.page_loads import PageLoads, mark_last, new_views, scroll_into_view
from tui_chat.tui.widgets.pages import MessageSource, Pages
from tui_chat.tui.widgets.reply_keys import ReplyKeys
from tui_chat.tui.widgets.steady_scrollbar import SteadyScroll

__all__ = ["ChatPane", "MessageSelected", "PinsChanged"]

LOAD_TRIES = 3
"""Loads a key at the window's edge starts, at most, for the message beyond it (one ends
without it when a load the other way was running, or fails)."""


@dataclass
class MessageSelected(TextualMessage):
    """The chat pane's selection moved to another message."""

    pane: ChatPane
    message_id: int | None

    @property
    def control(self) -> ChatPane:
        """The chat pane."""
        return self.pane


class ChatPane(SteadyScroll, NavigationMode, can_focus=True):
    """Messages of one conversation, newest at the bottom, with a keyboard selection.

    What the keys do at the selection is in the pane's parts, named by the actions of its
    letters (``command('range.mark')``, see :class:`~.navigation.NavigationMode`): the
    message's actions (:class:`~.message_actions.MessageActions`), the range
    (:class:`~.message_range.MessageRange`), the pins (:class:`~.message_pins.MessagePins`)
    and the reply's keys (:class:`~.reply_keys.ReplyKeys`). Each takes the pane as its
    :class:`~.window.MessageWindow`.

    Args:
        source: Where messages and pins are read.
        id: The widget id.
    """

    MAX_MOUNTED: ClassVar[int] = 150
    """Most message widgets mounted at once."""

    DEFAULT_CSS = """
    ChatPane {
        layout: stream;
        height: 1fr;
        padding: 0 1;
        scrollbar-gutter: stable;
        border-title-align: center;
        border-title-color: $text-accent;
        &.-navigating { border-top: heavy $accent; }
        & > MessageView.-in-range { background: $accent 15%; border-left: outer $accent; }
    }
    """

    # Priority: each key acts when it arrives, before the next one is routed.
    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("chat", priority=True),
        *bindings("navigation", priority=True),
    ]

    NAVIGATION_TITLE: ClassVar[str] = (
        "NAVIGATION · letters are commands · i, enter or esc: back to typing"
    )

    selected: reactive[int | None] = reactive(None, init=False)
    """Id of the selected message (``None``: nothing selected)."""
    new_below: reactive[bool] = reactive(False, init=False)
    """A streaming reply grew below a view scrolled up, away from it (the marker shows)."""

    def __init__(self, source: MessageSource, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._source = source
        self.pages = Pages(source)
        """Reads the pages (their sizes: :class:`Pages`)."""
        self.conversation_id: str | None = None
        self.has_older = False
        self.has_newer = False
        self.arranged: DockArrangeResult | None = None
        """The arrangement of the messages in the screen's last layout or scroll."""
        self._place = KeptPlace(self, self)
        """What the view shows stays there while pages are mounted and laid out."""
        # Paging from a key press waits for a page the scroll watcher is already loading.
        self._page_lock = asyncio.Lock()
        self.branch_marks: dict[int, str] = {}
        """``‹ n/m ›`` by message id: where branches part (kept by the branch bar)."""
        self.message_actions = MessageActions(self, self)
        """Copy, edit, fork, compact up to and copy the code of the selected message."""
        self.range = MessageRange(self, self, source)
        """A range of messages from the selection, copied as Markdown."""
        self.reply_keys = ReplyKeys(self, self)
        """The selected reply's thinking, web pages and cited messages."""
        self.pins = MessagePins(self, self, source)
        """The pinned messages of the conversation shown, pinned and unpinned here."""
        self._key_hold = KeyHold(self, lambda: self.loads.busy)
        """Full collections wait while keys scroll or move the selection."""
        self.loads = PageLoads(self, self, self._place, self._key_hold, lambda: self.MAX_MOUNTED)
        """Pages loaded a slice a frame, ahead of held keys."""
        self.parts = {
            "message": self.message_actions,
            "range": self.range,
            "reply": self.reply_keys,
            "pins": self.pins,
        }

    def on_blur(self) -> None:
        """Leaving the messages leaves navigation mode and ends a marked range, as leaving an
        editor's pane ends its selection (unless they have the focus again: a dialog over the
        screen or the terminal losing focus keeps both)."""
        if self.screen.focused is not self:
            self.navigating = False
            self.range.drop()

    def on_unmount(self) -> None:
        """Give back the hold of the keys on full collections."""
        self._key_hold.release(collect=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: hand failures to the app's one handler."""
        report_failure(self, event.worker)

    # -- the window -------------------------------------------------------------------------

    @property
    def views(self) -> list[MessageView]:
        """The mounted message widgets, oldest first (read from the children: a query matched
        a selector against each, several times a key press)."""
        return [view for view in self.children if isinstance(view, MessageView)]

    def view_for(self, message_id: int) -> MessageView | None:
        """The mounted widget of a message, if it is in the window: looked for from the end,
        where the streaming reply is (each of its deltas asks; a query matched a selector
        against each of up to :attr:`MAX_MOUNTED` views, 90 times a second)."""
        for view in reversed(self.children):
            if isinstance(view, MessageView) and view.message_id == message_id:
                return view
        return None

    async def show(
        self, conversation_id: str, around: int | None = None, *, newest: Message | None = None
    ) -> None:
        """Show a conversation: its latest page, or the page ending at message ``around``.

        Args:
            conversation_id: The conversation.
            around: A message to show and select (e.g. a search hit).
            newest: Its newest message as another process left it: shown again only if the
                window does not end with it as it is (decided under the page lock: a window
                being replaced meanwhile, by ``home``, ``end`` or a show, is not judged).
        """
        async with self._page_lock:  # a message added meanwhile comes after the new window
            if newest is not None:
                views = self.views
                shown = views[-1].message if views else None
                if self.has_newer or (
                    shown is not None
                    and (shown.id, shown.status, shown.text)
                    == (newest.id, newest.status, newest.text)
                ):
                    return  # paged back (newer pages load when paged to), or up to date
            self.conversation_id = conversation_id
            await self.pins.read(conversation_id)
            before = None if around is None else around + 1
            page, self.has_older = await self.pages.before(
                conversation_id, before, Pages.FIRST_PAGE
            )
            self.has_newer = False
            if around is not None:
                # The hit comes with what follows it (its reply, at least), not as the last line.
                after, self.has_newer = await self.pages.after(
                    conversation_id, around, Pages.AFTER_HIT
                )
                page += after
            await self._replace(page)
        if around is not None and self.view_for(around) is not None:
            self.selected = around
        else:
            self.anchor()

    async def _replace(self, page: list[Message]) -> None:
        """Mount ``page`` in place of the window, nothing selected."""
        self._place.release()
        self.release_anchor()
        await self.remove_children()
        self.set_reactive(ChatPane.selected, None)
        await self.mount_all(new_views(page, self))
        mark_last(self.views, self.has_newer)

    async def load_older(self) -> bool:
        """Mount the page before the oldest mounted message (:mod:`~.page_loads`).

        Returns:
            True when messages were added.
        """
        async with self._page_lock:
            return await self._load_older()

    async def _load_older(self) -> bool:
        return await self.loads.older()

    async def load_newer(self) -> bool:
        """Mount the page after the newest mounted message (the bottom was pruned).

        Returns:
            True when messages were added.
        """
        async with self._page_lock:
            return await self.loads.newer()

    def page_at_edge(self, towards: int = 0) -> None:
        """Load the next page if the view is at the top (or the bottom) with more beyond it,
        or already near it ``towards`` the older messages (-1) or the newer ones (1)."""
        self.loads.at_edge(towards)

    def action_page_up(self) -> None:
        """Scroll a page up; at the top, load the older page."""
        self.loads.scroll_by(-self.scrollable_content_region.height)

    def action_page_down(self) -> None:
        """Scroll a page down; at the bottom of a pruned window, load the newer page."""
        self.loads.scroll_by(self.scrollable_content_region.height)

    async def add_message(self, message: Message) -> MessageView:
        """Append a new message at the bottom (jumping back to the latest page if needed)."""
        if self.has_newer and self.conversation_id is not None:
            await self.show(self.conversation_id)
        async with self._page_lock:  # not while a page replaces or extends the window
            if (existing := self.view_for(message.id)) is not None:
                return existing  # the page read after it was saved holds it already
            view = MessageView(message, pinned=message.id in self.pins.ids)
            await self.mount(view)
            views = self.views
            overflow = len(views) - self.MAX_MOUNTED
            if overflow > 0:
                await self.remove_children(views[:overflow])
                self.has_older = True
            mark_last(self.views, self.has_newer)
        return view

    def follow(self, *, unselect: bool = False) -> None:
        """Scroll to the end and follow the streaming reply (``end``, the marker; after a send
        the selection is dropped too: ``unselect``)."""
        if unselect:
            self.selected = None
        self.anchor()  # at the end at once, and kept there as the chat grows
        self.new_below = False

    def watch_virtual_size(self) -> None:
        """A page's layout came: what the view showed stays there."""
        self._place.apply()

    def text_arrived(self) -> None:
        """A streamed piece of the reply came: below a view the user scrolled up (Textual
        released the anchor: the view stays where it is), the "new text below" marker shows.

        Told by the piece itself, not by the chat growing: scrolling up unfolds the reply's
        head, and a layout of text already shown is not new text.
        """
        if not (self.is_anchored and not self._anchor_released):
            self.new_below = True

    # -- scrolling --------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Page older messages in when the top is reached, newer ones at the bottom.

        Scrolling up shows the folded blocks of a streamed reply again (their place was kept).
        """
        super().watch_scroll_y(old_value, new_value)
        self._place.scrolled()
        if new_value < old_value:
            for view in self.views:
                view.unfold()
        if (new_value <= 0 < old_value) or (new_value > old_value):
            self.page_at_edge()
        if new_value >= self.max_scroll_y:
            self.new_below = False  # back at the end: followed again

    # -- selection --------------------------------------------------------------------------

    @property
    def selected_view(self) -> MessageView | None:
        """The selected message widget, if any."""
        return None if self.selected is None else self.view_for(self.selected)

    def watch_selected(self, old: int | None, new: int | None) -> None:
        """Move the highlight and keep the selected message in view."""
        for message_id, selected in ((old, False), (new, True)):
            if message_id is not None and (view := self.view_for(message_id)) is not None:
                view.set_selected(selected)
                if selected:
                    scroll_into_view(self, self.arranged, view)
        self.range.moved()  # at once: a range key's move is told apart from any other
        self.post_message(MessageSelected(self, new))

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Arrange the messages (Textual caches it), the screen's arrangement remembered."""
        result = super().arrange(size, optimal)
        if not optimal:
            self.arranged = result
        return result

    def on_focus(self) -> None:
        """Select the newest message when the pane gets focus with nothing selected."""
        self.select_default()

    def select_default(self) -> None:
        """Select the newest message if nothing is selected (at once: the keys that follow
        move from it)."""
        if self.selected is None and (views := self.views):
            self.selected = views[-1].message_id

    async def action_select_previous(self) -> None:
        """Select the message above (paging older ones in at the top)."""
        self._key_hold.pressed()
        views = self.views
        if not views:
            return
        ids = [v.message_id for v in views]
        if self.selected not in ids:
            self.selected = ids[-1]
            return
        for _ in range(LOAD_TRIES):
            if ids.index(self.selected) > 0 or not self.has_older:
                break
            # The page's first slice is enough (a load running meanwhile, a scroll's, brings
            # it, or ends first: then one is started).
            await self.loads.slice_in(self.load_older)
            ids = [v.message_id for v in self.views]
            if self.selected not in ids:
                return
        if ids.index(self.selected) > 0:
            self.selected = ids[ids.index(self.selected) - 1]
            self.page_at_edge(-1)

    async def action_select_next(self) -> None:
        """Select the message below (paging newer ones in past a pruned end)."""
        self._key_hold.pressed()
        views = self.views
        if not views:
            return
        ids = [v.message_id for v in views]
        if self.selected not in ids:
            self.selected = ids[-1]
            return
        for _ in range(LOAD_TRIES):
            if ids.index(self.selected) < len(ids) - 1 or not self.has_newer:
                break
            await self.loads.slice_in(self.load_newer)  # or a load running meanwhile
            ids = [v.message_id for v in self.views]
            if self.selected not in ids:
                return
        if ids.index(self.selected) < len(ids) - 1:
            self.selected = ids[ids.index(self.selected) + 1]
            self.page_at_edge(1)

    async def action_select_first(self, select: bool = True) -> None:
        """Select the conversation's first message (its first page is loaded if needed); not
        ``select``: show it from its top, nothing selected (``ctrl+home`` in the composer)."""
        if self.has_older and self.conversation_id is not None:
            # The window is replaced as show() replaces it: not in the middle of a page load
            # (every change of the window takes the page lock in turn).
            async with self._page_lock:
                page, self.has_newer = await self.pages.after(self.conversation_id, 0)
                self.has_older = False
                await self._replace(page)
        self.scroll_home(animate=False, immediate=True)
        if select and (views := self.views):
            self.selected = views[0].message_id

    async def action_select_last(self) -> None:
        """Select the newest message."""
        if self.has_newer and self.conversation_id is not None:
            await self.show(self.conversation_id)
        if views := self.views:
            self.selected = views[-1].message_id
            self.follow()
