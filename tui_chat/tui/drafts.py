"""Drafts in the TUI: the composer's text is kept per conversation, in the database.

Every change of the composer is noted; notes are written after a pause in typing, before
another conversation is shown, and when the app closes — so a draft survives switching
conversations, quitting and reopening. Sending clears the composer, which clears the draft.
"""

from __future__ import annotations

from typing import Protocol


class DraftStore(Protocol):
    """Where drafts live (``service.drafts`` is one)."""

    async def get(self, conversation_id: str) -> str:
        """The conversation's draft (``""`` for none)."""
        ...

    async def set(self, conversation_id: str, text: str) -> None:
        """Keep ``text`` as the draft (blank removes it)."""
        ...


class DraftKeeper:
    """Notes of the composer's text, written to a :class:`DraftStore` in batches.

    Args:
        store: Where drafts are kept.
    """

    def __init__(self, store: DraftStore) -> None:
        self._store = store
        self._pending: dict[str, str] = {}

    def note(self, conversation_id: str, text: str) -> None:
        """Remember the latest text of a conversation's composer (written by :meth:`flush`)."""
        self._pending[conversation_id] = text

    async def flush(self) -> None:
        """Write every noted draft (a note is dropped only once it is written)."""
        for conversation_id, text in list(self._pending.items()):
            await self._store.set(conversation_id, text)
            if self._pending.get(conversation_id) == text:
                del self._pending[conversation_id]

    async def get(self, conversation_id: str) -> str:
        """A conversation's draft, noted changes included."""
        if conversation_id in self._pending:
            return self._pending[conversation_id]
        return await self._store.get(conversation_id)
