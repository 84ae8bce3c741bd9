"""Copy as Markdown and a range of messages (issue 20 items 4 and 5), mixed into the chat pane
that holds the selection: ``shift+up``/``shift+down`` extend a range from the selected message,
``v`` (navigation mode) marks its start so ``j``/``k`` extend it, ``m`` copies the range (or the
selected message) as the Markdown export writes it. The keyboard way to copy when the
terminal's mouse selection is not there (Textual's selection copies with ``ctrl+c``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.engine.transfer import message_markdown

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tui_chat.core.models import Message
    from tui_chat.tui.widgets.chat_pane import ChatPane
    from tui_chat.tui.widgets.message_view import MessageView

__all__ = ["MessageRange"]

RANGE_CLASS = "-in-range"
"""The class of the message widgets inside the range."""


class MessageRange:
    """The range's two ends (the anchor and the selection), its keys and the copy."""

    _anchor: int | None = None
    """Id of the message the range started at (``None``: no range)."""
    _marking: bool = False
    """``v`` was pressed: every move extends the range until it is copied or ``v`` again."""
    _extended_to: int | None = None
    """Where the last range key moved the selection (that move keeps the range)."""

    if TYPE_CHECKING:
        selected: int | None
        conversation_id: str | None

        @property
        def views(self) -> list[MessageView]:
            """The mounted message widgets (the chat pane's)."""

        def select_default(self) -> None:
            """Select the newest message if nothing is selected (the chat pane's)."""

    @property
    def range_ids(self) -> tuple[int, int] | None:
        """The first and last id of the range (``None``: no range)."""
        if self._anchor is None or self.selected is None:
            return None
        return min(self._anchor, self.selected), max(self._anchor, self.selected)

    async def action_extend_previous(self) -> None:
        """Extend the range to the message above."""
        await self._extend(self._pane.action_select_previous)

    async def action_extend_next(self) -> None:
        """Extend the range to the message below."""
        await self._extend(self._pane.action_select_next)

    def action_mark(self) -> None:
        """Start a range at the selected message (the moves that follow extend it); again:
        drop it."""
        if self._marking or self._anchor is not None:
            self._drop_range()
            self._pane.notify("Range dropped.")
            return
        self.select_default()
        if self.selected is None:
            return
        self._anchor, self._marking = self.selected, True
        self._show_range()
        self._pane.notify("Range started: move with j/k (or up/down), m copies it, v drops it.")

    async def action_copy_markdown(self) -> None:
        """Copy the range, or else the selected message, as Markdown."""
        pane = self._pane
        self.select_default()
        span = self.range_ids or (None if self.selected is None else (self.selected, self.selected))
        if span is None or self.conversation_id is None:
            pane.notify("Select a message first.", severity="warning")
            return
        messages = await self._read(self.conversation_id, *span)
        pinned = pane._pinned
        text = "\n\n".join(message_markdown(m, m.id in pinned) for m in messages)
        pane.app.copy_to_clipboard(text)
        what = (
            f"message #{messages[0].id}"
            if len(messages) == 1
            else f"{len(messages)} messages (#{messages[0].id}–#{messages[-1].id})"
        )
        pane.notify(f"Copied {what} as Markdown ({len(text):,} characters).")
        self._drop_range()

    # -- keeping the range --------------------------------------------------------------------

    def on_chat_pane_selected(self, event: ChatPane.Selected) -> None:
        """The selection moved (the pane's own message, handled after the move): a range
        key's move or a move while marking extends the range; any other move drops it."""
        if self._anchor is None:
            return
        if self._marking or event.message_id in (self._extended_to, self._anchor):
            self._show_range()
        else:
            self._drop_range()

    async def _extend(self, move: Callable[[], Awaitable[None]]) -> None:
        self.select_default()
        if self._anchor is None:
            self._anchor = self.selected
        await move()
        self._extended_to = self.selected
        self._show_range()

    def _drop_range(self) -> None:
        self._anchor, self._marking = None, False
        self._show_range()

    def _show_range(self) -> None:
        span = self.range_ids
        for view in self.views:
            inside = span is not None and span[0] <= view.message_id <= span[1]
            view.set_class(inside, RANGE_CLASS)

    async def _read(self, conversation_id: str, first: int, last: int) -> list[Message]:
        """The range's messages as stored, a page at a time (its ends may be paged out)."""
        source = self._pane._source
        out: list[Message] = []
        after = first - 1
        while page := await source.messages(conversation_id, after_id=after, limit=200):
            out += [m for m in page if m.id <= last]
            if page[-1].id >= last:
                break
            after = page[-1].id
        return out

    @property
    def _pane(self) -> ChatPane:
        return self  # type: ignore[return-value]
