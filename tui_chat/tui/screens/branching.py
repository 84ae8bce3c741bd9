"""What the chat screen does at a chosen message: the fork, compact-up-to and delete requests
the chat pane posts (``widgets/message_actions.py``), and sending an edited prompt as a fork.

:class:`Branches` is a part of the chat screen (``screen.branches``); the requests reach it
through :meth:`Branches.routes`. An edit's text and files are put in the composer by the draft
(:class:`~tui_chat.tui.screens.drafting.Drafting`), which sends it here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from tui_chat.tui.screens.message_deleting import MessageDeleting
from tui_chat.tui.text import one_line
from tui_chat.tui.widgets.message_actions import (
    CompactUptoRequested,
    DeleteRequested,
    ForkRequested,
)

if TYPE_CHECKING:
    from textual.worker import Worker

    from tui_chat.core.attachments import Attachment
    from tui_chat.tui.screens.chat_screen import ChatScreen


class Branches:
    """Forks, edited prompts sent as forks, compact up to here, and deleting a message.

    Args:
        screen: The chat screen: it opens the fork and shows what is left.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen
        self.deleting = MessageDeleting(screen)
        """Deleting the selected message (asks first)."""

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The chat pane's requests at the selected message."""
        return {
            ForkRequested: self._fork,
            CompactUptoRequested: self._compact_upto,
            DeleteRequested: self._delete,
        }

    def send_edit(self, message_id: int, text: str, files: list[Attachment]) -> Worker[None]:
        """Fork before the edited prompt, open the fork and send the prompt to it (a worker
        named ``send_edit``: while it runs, a prompt typed waits for it)."""
        return self._screen.run_worker(
            partial(self._send_edit, message_id, text, files), name="send_edit", exit_on_error=False
        )

    async def _send_edit(self, message_id: int, text: str, files: list[Attachment]) -> None:
        screen = self._screen
        fork, _ = await screen.app.service.branches.fork_for_edit(message_id)
        # What was typed since enter belongs to the fork, not to the original's draft.
        typed = screen.composer.text
        screen.composer.clear()
        await screen.open_conversation(fork.id)
        if typed and not screen.composer.text:
            screen.composer.load_text(typed)
            screen.composer.move_cursor(screen.composer.document.end)
        screen.notify("Edited as a new branch (‹ › on the prompt; f5 then [ / ] switch back).")
        screen.app.send_reply(fork.id, text, files)

    def _compact_upto(self, request: CompactUptoRequested) -> None:
        """Compact every whole turn up to the message's turn (in the background)."""
        screen = self._screen
        if screen.conversation is not None:
            screen.notify(f"Compacting up to message #{request.message_id}…", timeout=2)
            screen.app.compact_upto(screen.conversation.id, request.message_id)

    async def _delete(self, request: DeleteRequested) -> None:
        """Ask before deleting the message (the dialog is open once this returns)."""
        await self.deleting.ask(request.message_id)

    async def _fork(self, request: ForkRequested) -> None:
        """Fork at the message and open the fork."""
        screen = self._screen
        if screen.conversation is None:
            return
        fork = await screen.app.service.branches.fork(screen.conversation.id, request.message_id)
        await screen.open_conversation(fork.id)
        screen.notify(f"New branch “{one_line(fork.title, 50)}”; f5 then [ / ] switch back.")
