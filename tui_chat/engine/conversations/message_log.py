"""The messages of the conversations: pages of them, the whole history, pins and search.

:class:`MessageLog` is the use-case service the front ends reach as ``service.messages``.
"""

from __future__ import annotations

from tui_chat.core.models import Message, SearchHit
from tui_chat.engine.conversations.branches import Branches
from tui_chat.store.repository import Store


class MessageLog:
    """Reading, pinning and searching the messages of one store.

    Args:
        store: The open store.
        branches: The branches (a message the branches of a conversation share is one hit).
    """

    def __init__(self, store: Store, branches: Branches) -> None:
        self._store = store
        self._branches = branches

    async def page(
        self,
        conversation_id: str,
        *,
        before_id: int | None = None,
        after_id: int | None = None,
        limit: int = 50,
    ) -> list[Message]:
        """A page of messages, oldest first: the newest ``limit`` before ``before_id``, or
        with ``after_id`` the oldest ``limit`` after it (paging forward)."""
        if after_id is not None:
            return await self._store.messages.history(
                conversation_id, after_id=after_id, before_id=before_id, limit=limit
            )
        return await self._store.messages.history(
            conversation_id, before_id=before_id, limit=limit, newest=True
        )

    async def history(self, conversation_id: str) -> list[Message]:
        """Every message of a conversation, oldest first."""
        return await self._store.messages.history(conversation_id)

    async def count(self, conversation_id: str) -> int:
        """How many messages a conversation holds."""
        count, _ = await self._store.messages.stats(conversation_id)
        return count

    async def pin(self, message_id: int, note: str = "") -> None:
        """Pin a message so it is always sent verbatim."""
        await self._store.anchors.pin(message_id, note)

    async def unpin(self, message_id: int) -> bool:
        """Unpin a message; False when it was not pinned."""
        await self._store.messages.get(message_id)  # NotFound for an unknown message
        return await self._store.anchors.unpin(message_id)

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        """Ids of a conversation's pinned messages."""
        return await self._store.anchors.pinned_ids(conversation_id)

    async def search(
        self, query: str, conversation_id: str | None = None, limit: int = 50
    ) -> list[SearchHit]:
        """Full-text search across conversations (or within one); a message the branches of
        a conversation share is one hit."""
        if conversation_id is not None:
            return await self._store.search.find(
                query, conversation_id=conversation_id, limit=limit
            )
        hits = await self._store.search.find(query, limit=2 * limit)
        return await self._branches.distinct_hits(hits, limit)
