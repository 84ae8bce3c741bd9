"""The drafts repository: the unsent text of each conversation's composer (migration 4).

A draft is kept per conversation so it survives switching conversations, quitting and
reopening; an empty draft is no row at all. Drafts leave with their conversation.
"""

from __future__ import annotations

from tui_chat.core.models import utc_now
from tui_chat.store.rows import clean_text
from tui_chat.store.sql import Sql


class Drafts:
    """The ``drafts`` table: at most one draft per conversation."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def get(self, conversation_id: str) -> str:
        """The conversation's draft (``""`` when there is none)."""
        row = await self._sql.one(
            "SELECT text FROM drafts WHERE conversation_id = ?", (conversation_id,)
        )
        return str(row[0]) if row else ""

    async def set(self, conversation_id: str, text: str) -> None:
        """Keep ``text`` as the draft; blank text removes the draft.

        A conversation deleted meanwhile (by another process) keeps no draft.
        """
        async with self._sql.transaction() as db:
            if not text.strip():
                await db.execute("DELETE FROM drafts WHERE conversation_id = ?", (conversation_id,))
                return
            await db.execute(
                "INSERT INTO drafts (conversation_id, text, updated_at) "
                "SELECT id, ?, ? FROM conversations WHERE id = ? "
                "ON CONFLICT(conversation_id) DO UPDATE SET "
                "text = excluded.text, updated_at = excluded.updated_at",
                (clean_text(text), utc_now(), conversation_id),
            )
