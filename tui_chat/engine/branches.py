"""Forks, edited prompts and "compact up to here": the actions that branch or fold history at
a message the user chose.

A fork is a new conversation holding its parent's messages up to a message (the parent is
never touched); editing one of your prompts forks at the message before it, so the edited
prompt is sent there with exactly the history that preceded the original.
"""

from __future__ import annotations

from tui_chat.core.attachments import Attachment, refs
from tui_chat.core.models import Conversation, Fork, Message, Summary
from tui_chat.core.turns import starts_turn
from tui_chat.engine.attachments import load_attachments
from tui_chat.engine.compaction import CompactionError, CompactionWorker
from tui_chat.store.errors import NotFound
from tui_chat.store.repository import Store

FORK_SUFFIX = " (fork)"
EDIT_SUFFIX = " (edited)"


class EditError(ValueError):
    """A message that cannot be edited (only your own prompts can)."""


class Branches:
    """Fork, edit and compact-up-to over one store."""

    def __init__(self, store: Store, worker: CompactionWorker) -> None:
        """Share the service's store and compaction worker.

        Args:
            store: The open store.
            worker: The compaction worker.
        """
        self.store = store
        self.worker = worker

    async def fork(
        self, conversation_id: str, at_message_id: int | None, title: str | None = None
    ) -> Conversation:
        """Fork a conversation after one of its messages.

        Args:
            conversation_id: The parent (left untouched).
            at_message_id: The parent's last message the fork holds (``None``: none).
            title: The fork's title (default: the parent's with " (fork)").

        Returns:
            The fork.

        Raises:
            NotFound: no such conversation, or the message is not one of its.
        """
        parent = await self.store.conversations.get(conversation_id)
        title = " ".join((title or "").split()) or parent.title + FORK_SUFFIX
        fork_id = await self.store.forks.fork(conversation_id, at_message_id, title)
        return await self.store.conversations.get(fork_id)

    async def fork_for_edit(self, message_id: int) -> tuple[Conversation, Message]:
        """Fork before one of your prompts so that an edited version can be sent in its place.

        Args:
            message_id: A user message that opens a turn.

        Returns:
            The fork (holding every message before the prompt) and the original prompt.

        Raises:
            EditError: the message is a reply or a tool result.
            NotFound: no such message.
        """
        message = await self.store.messages.get(message_id)
        if not starts_turn(message.role, message.content):
            raise EditError(
                f"message #{message_id} is not one of your prompts; only those can be edited"
            )
        before = await self.store.messages.history(
            message.conversation_id, before_id=message.id, limit=1, newest=True
        )
        parent = await self.store.conversations.get(message.conversation_id)
        fork = await self.fork(
            parent.id, before[-1].id if before else None, parent.title + EDIT_SUFFIX
        )
        return fork, message

    async def files_of(self, message: Message) -> list[Attachment]:
        """The files attached to a message, read back from the store (to edit its prompt).

        Raises:
            AttachmentError: a referenced file is missing from the store.
        """
        return await load_attachments(self.store, refs(message.content))

    async def parent(self, conversation_id: str) -> Fork | None:
        """Where a conversation was forked from (``None``: it is not a fork)."""
        return await self.store.forks.get(conversation_id)

    async def forks(self) -> dict[str, Fork]:
        """Every fork by its conversation id."""
        return await self.store.forks.all()

    async def compact_upto(
        self, conversation_id: str, message_id: int, instructions: str | None = None
    ) -> Summary:
        """Fold every whole turn up to ``message_id``'s turn into a new version.

        Raises:
            CompactionError: the message is already summarised, not in the conversation, its
                turn has no answer yet, or the summary failed.
        """
        try:
            message = await self.store.messages.get(message_id)
        except NotFound:
            raise CompactionError(f"there is no message #{message_id}") from None
        if message.conversation_id != conversation_id:
            raise CompactionError(f"message #{message_id} is not in this conversation")
        await self.worker.wait(conversation_id)
        return await self.worker.compact(
            conversation_id, trigger="manual", instructions=instructions, upto=message_id
        )
