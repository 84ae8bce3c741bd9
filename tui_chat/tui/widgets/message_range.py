"""Copy as Markdown and a range of messages, a part of the chat pane
(it holds the selection): ``shift+up``/``shift+down`` extend a range from the selected message,
``v`` (navigation mode) marks its start so ``j``/``k`` extend it, ``m`` copies the range (or the
selected message) as the Markdown export writes it. The keyboard way to copy when the
terminal's mouse selection is not there (Textual's selection copies with ``ctrl+c``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.engine.transfer import message_markdown

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from textual.widget import Widget

    from tui_chat.core.models import Message
    from tui_chat.tui.widgets.pages import MessageSource
    from tui_chat.tui.widgets.window import MessageWindow

__all__ = ["MessageRange"]

RANGE_CLASS = "-in-range"
"""The class of the message widgets inside the range."""


class MessageRange:
    """The range's two ends (the anchor and the selection), its keys and the copy.

    Args:
        host: The widget that says what happened (notifications) and copies (its app).
        window: The messages shown and the selection (the range's moving end).
        source: Where the range's messages are read (its ends may be paged out).
    """

    def __init__(self, host: Widget, window: MessageWindow, source: MessageSource) -> None:
        self._host = host
        self._window = window
        self._source = source
        self._anchor: int | None = None
        """Id of the message the range started at (``None``: no range)."""
        self._marking = False
        """``v`` was pressed: every move extends the range until it is copied or ``v`` again."""
        self._extending = False
        """A range key is moving the selection (that move keeps the range)."""

    @property
    def range_ids(self) -> tuple[int, int] | None:
        """The first and last id of the range (``None``: no range)."""
        selected = self._window.selected
        if self._anchor is None or selected is None:
            return None
        return min(self._anchor, selected), max(self._anchor, selected)

    def action_mark(self) -> None:
        """Start a range at the selected message (the moves that follow extend it); again:
        drop it."""
        if self._marking or self._anchor is not None:
            self.drop()
            self._host.notify("Range dropped.")
            return
        self._window.select_default()
        if self._window.selected is None:
            return
        self._anchor, self._marking = self._window.selected, True
        self._show_range()
        self._host.notify("Range started: move with j/k (or up/down), m copies it, v drops it.")

    async def action_copy_markdown(self) -> None:
        """Copy the range, or else the selected message, as Markdown."""
        window = self._window
        window.select_default()
        selected, conversation_id = window.selected, window.conversation_id
        span = self.range_ids or (None if selected is None else (selected, selected))
        if span is None or conversation_id is None:
            self._host.notify("Select a message first.", severity="warning")
            return
        messages = await self._read(conversation_id, *span)
        pinned = await self._source.pinned_ids(conversation_id)
        text = "\n\n".join(message_markdown(m, m.id in pinned) for m in messages)
        self._host.app.copy_to_clipboard(text)
        what = (
            f"message #{messages[0].id}"
            if len(messages) == 1
            else f"{len(messages)} messages (#{messages[0].id}–#{messages[-1].id})"
        )
        self._host.notify(f"Copied {what} as Markdown ({len(text):,} characters).")
        self.drop()

    async def action_extend_previous(self) -> None:
        """Extend the range to the message above (``shift+up``)."""
        await self.extend(self._window.action_select_previous)

    async def action_extend_next(self) -> None:
        """Extend the range to the message below (``shift+down``)."""
        await self.extend(self._window.action_select_next)

    async def extend(self, move: Callable[[], Awaitable[None]]) -> None:
        """Extend the range (started at the selected message if there is none) by a move of
        the selection (``shift+up``/``shift+down``)."""
        self._window.select_default()
        if self._anchor is None:
            self._anchor = self._window.selected
        self._extending = True
        try:
            await move()
        finally:
            self._extending = False
        self._show_range()

    def moved(self) -> None:
        """The selection moved (the pane says so as it moves): a range key's move or a move
        while marking extends the range; any other move drops it."""
        if self._anchor is None:
            return
        if self._marking or self._extending or self._window.selected == self._anchor:
            self._show_range()
        else:
            self.drop()

    def drop(self) -> None:
        """End the range (the selection stays)."""
        self._anchor, self._marking = None, False
        self._show_range()

    # -- keeping the range --------------------------------------------------------------------

    def _show_range(self) -> None:
        span = self.range_ids
        for view in self._window.views:
            inside = span is not None and span[0] <= view.message_id <= span[1]
            view.set_class(inside, RANGE_CLASS)

    async def _read(self, conversation_id: str, first: int, last: int) -> list[Message]:
        """The range's messages as stored, a page at a time (its ends may be paged out)."""
        out: list[Message] = []
        after = first - 1
        while page := await self._source.page(conversation_id, after_id=after, limit=200):
            out += [m for m in page if m.id <= last]
            if page[-1].id >= last:
                break
            after = page[-1].id
        return out
