"""What the chat pane's parts read of the pane (:class:`MessageWindow`): the conversation, the
mounted messages and the selection. The parts (:mod:`~.message_actions`, :mod:`~.message_range`,
:mod:`~.message_pins`, :mod:`~.reply_keys`) take it as a constructor argument, so none of them
imports the pane."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tui_chat.tui.widgets.message_view import MessageView

__all__ = ["MessageWindow"]


class MessageWindow(Protocol):
    """The chat pane as its parts see it (:class:`~.chat_pane.ChatPane` is one)."""

    conversation_id: str | None
    """The conversation shown."""
    selected: int | None
    """Id of the selected message (``None``: nothing selected)."""
    navigating: bool
    """Whether letters are commands (navigation mode)."""

    @property
    def views(self) -> list[MessageView]:
        """The mounted message widgets, oldest first."""
        ...

    @property
    def selected_view(self) -> MessageView | None:
        """The selected message widget, if any."""
        ...

    def view_for(self, message_id: int) -> MessageView | None:
        """The mounted widget of a message, if it is in the window."""
        ...

    def select_default(self) -> None:
        """Select the newest message if nothing is selected."""
        ...

    async def action_select_previous(self) -> None:
        """Select the message above (an older page loaded at the top)."""
        ...

    async def action_select_next(self) -> None:
        """Select the message below (a newer page loaded at the bottom)."""
        ...

    async def show(self, conversation_id: str, around: int | None = None) -> None:
        """Show a conversation's latest page, or the page around a message (selected)."""
        ...
