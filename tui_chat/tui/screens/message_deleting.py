"""Deleting the selected message from the chat screen: ask, delete, show what is left.

The question names what goes (the message, and the other half of a tool call and its
result) and the summary versions that will be stale; ``y`` deletes. The chat, the gauge, the
timeline and the list are then shown afresh, the message before the deleted one selected. A
reply being streamed (or the prompt it answers) is refused with what to do instead.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from tui_chat.engine.conversations import CannotDelete

if TYPE_CHECKING:
    from tui_chat.tui.screens.chat_screen import ChatScreen


class MessageDeleting:
    """The chat screen's deleting of a message (a part the screen holds)."""

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen

    async def ask(self, message_id: int) -> None:
        """Open the confirmation for deleting ``message_id`` (or say why it cannot go)."""
        from tui_chat.tui.screens.prompt import Confirm

        screen = self._screen
        service = screen.app.service
        try:
            going = await service.messages.deletion(message_id)
        except CannotDelete as exc:
            screen.notify(f"{str(exc).capitalize()}.", title="Cannot delete", severity="warning")
            return
        ids = [m.id for m in going]
        others = [f"#{i}" for i in ids if i != message_id]
        conv_id = going[0].conversation_id
        stale = [
            v.version
            for v in await service.summaries.versions(conv_id)
            if v.status == "completed" and v.covers_to_message_id >= min(ids)
        ]
        question = f"Delete message #{message_id}"
        if others:
            question += f" and {', '.join(others)} (its tool call and result go together)"
        question += "? It leaves the next request, exports and search."
        if stale:
            versions = ", ".join(f"v{v}" for v in stale)
            question += f" Summary {versions} will be marked stale (regenerate to refresh)."
        question += " This cannot be undone."
        await screen.app.push_screen(Confirm(question, "Delete"), partial(self._answer, message_id))

    async def _answer(self, message_id: int, yes: bool | None) -> None:
        if not yes:
            return
        screen = self._screen
        service = screen.app.service
        before = [v.message_id for v in screen.chat.views if v.message_id < message_id]
        try:
            deleted = await service.messages.delete(message_id)
        except CannotDelete as exc:
            screen.notify(f"{str(exc).capitalize()}.", title="Cannot delete", severity="warning")
            return
        text = f"Deleted message{'s' if len(deleted.ids) > 1 else ''} "
        text += ", ".join(f"#{i}" for i in deleted.ids) + "."
        if deleted.stale_versions:
            versions = ", ".join(f"v{v}" for v in deleted.stale_versions)
            text += f" Summary {versions} marked stale: regenerate (f4, g) to refresh."
        screen.notify(text, timeout=6)
        around = max((i for i in before if i not in deleted.ids), default=None)
        await screen.open_conversation(deleted.conversation_id, around, draft_stays=True)
