"""Pinning the chat pane's messages: a pinned message is always sent verbatim.

:class:`MessagePins` is a part of the chat pane (``pane.pins``, the ``pins.`` actions of its
letters): it holds the ids pinned in the conversation shown, which the pane marks on the
messages it mounts, and tells the screen when they change (:class:`PinsChanged`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message as TextualMessage

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_chat.tui.widgets.pages import MessageSource
    from tui_chat.tui.widgets.window import MessageWindow

__all__ = ["MessagePins", "PinsChanged"]


class PinsChanged(TextualMessage):
    """A message of the chat pane was pinned or unpinned (what the next request sends changed)."""


class MessagePins:
    """The pins of the conversation shown.

    Args:
        host: The chat pane (it says what happened and posts :class:`PinsChanged`).
        window: The pane's mounted messages and selection.
        source: Where pins are read and written.
    """

    def __init__(self, host: Widget, window: MessageWindow, source: MessageSource) -> None:
        self._host = host
        self._window = window
        self._source = source
        self.ids: set[int] = set()
        """Ids of the pinned messages of the conversation shown."""

    async def read(self, conversation_id: str) -> None:
        """Read the pins of a conversation about to be shown."""
        self.ids = await self._source.pinned_ids(conversation_id)

    async def pin(self, pinned: bool | None = None) -> None:
        """Pin the selected message (the newest when nothing is selected), or unpin it
        (``pinned`` ``None``: the other way round from now, for a selected one only); the
        screen hears :class:`PinsChanged` (the request changed)."""
        host, window = self._host, self._window
        view = window.selected_view
        if view is None and pinned is None:
            host.notify("Select a message first (f5 or tab, then ↑/↓).", severity="warning")
            return
        if view is None and (views := window.views):
            view = views[-1]
        if view is None:
            return
        message_id, pinned = view.message_id, not view.pinned if pinned is None else pinned
        if pinned:
            await self._source.pin(message_id)
            self.ids.add(message_id)
            host.notify(f"Pinned message #{message_id}: it is always sent verbatim.")
        elif await self._source.unpin(message_id):
            self.ids.discard(message_id)
            host.notify(f"Unpinned message #{message_id}.")
        else:
            host.notify(f"Message #{message_id} is not pinned.", severity="warning")
            return
        view.set_pinned(pinned)
        host.post_message(PinsChanged())

    async def action_toggle(self) -> None:
        """Pin the selected message, or unpin it if it is pinned."""
        await self.pin()
