"""The drafts repository: the unsent text of each conversation's composer (migration 4) and
the files attached to it (migration 11).

A draft is kept per conversation so it survives switching conversations, quitting and
reopening; a draft with neither text nor files is no row at all. The files are reference
blocks (:mod:`tui_chat.core.attachments`) whose bytes are in the ``attachments`` table. Drafts
leave with their conversation.
"""

from __future__ import annotations

import json

from tui_chat.core.models import ContentBlock
from tui_chat.store.rows import clean_text
from tui_chat.store.sql import Sql

_UPSERT = (
    "INSERT INTO drafts (conversation_id, text, files, updated_at) "
    "SELECT id, ?, ?, ? FROM conversations WHERE id = ? "
    "ON CONFLICT(conversation_id) DO UPDATE SET "
    "text = excluded.text, files = excluded.files, updated_at = excluded.updated_at"
)


class Drafts:
    """The ``drafts`` table: at most one draft per conversation."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def get(self, conversation_id: str) -> str:
        """The conversation's draft text (``""`` when there is none)."""
        row = await self._sql.one(
            "SELECT text FROM drafts WHERE conversation_id = ?", (conversation_id,)
        )
        return str(row[0]) if row else ""

    async def files(self, conversation_id: str) -> list[ContentBlock]:
        """The reference blocks of the files attached to the draft, in order."""
        row = await self._sql.one(
            "SELECT files FROM drafts WHERE conversation_id = ?", (conversation_id,)
        )
        refs = json.loads(str(row[0])) if row else []
        return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []

    async def set(self, conversation_id: str, text: str) -> None:
        """Keep ``text`` as the draft's text (its files stay); a blank text with no files
        removes the draft.

        A conversation deleted meanwhile (by another process) keeps no draft.
        """
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT files FROM drafts WHERE conversation_id = ?", (conversation_id,)
            ) as cursor:
                row = await cursor.fetchone()
            files = str(row[0]) if row else "[]"
            if not text.strip() and files == "[]":
                await db.execute("DELETE FROM drafts WHERE conversation_id = ?", (conversation_id,))
                return
            await db.execute(
                _UPSERT, (clean_text(text), files, self._sql.clock.now(), conversation_id)
            )

    async def set_files(self, conversation_id: str, refs: list[ContentBlock]) -> None:
        """Keep ``refs`` as the files attached to the draft (its text stays); no files and a
        blank text remove the draft. The caller stored the files' bytes first."""
        files = json.dumps(refs, ensure_ascii=False) if refs else "[]"
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT text FROM drafts WHERE conversation_id = ?", (conversation_id,)
            ) as cursor:
                row = await cursor.fetchone()
            text = str(row[0]) if row else ""
            if not text.strip() and files == "[]":
                await db.execute("DELETE FROM drafts WHERE conversation_id = ?", (conversation_id,))
                return
            await db.execute(_UPSERT, (text, files, self._sql.clock.now(), conversation_id))
