"""The anchors repository: pinned messages, always sent, never summarised away."""

from __future__ import annotations

from tui_chat.core.models import Anchor, Message
from tui_chat.store.messages import Messages
from tui_chat.store.rows import MESSAGE_COLUMNS, anchor_from, clean_text, message_from, qualified
from tui_chat.store.sql import Sql


class Anchors:
    """The ``anchors`` table: one optional note per pinned message."""

    def __init__(self, sql: Sql, messages: Messages) -> None:
        """Use the store's shared connection and its messages (a pin names a message)."""
        self._sql = sql
        self._messages = messages

    async def pin(self, message_id: int, note: str = "") -> Anchor:
        """Pin a message (re-pinning updates the note). Raises :class:`NotFound`."""
        message = await self._messages.get(message_id)
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO anchors (message_id, conversation_id, note, pinned_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(message_id) DO UPDATE SET note = excluded.note",
                (message_id, message.conversation_id, clean_text(note), self._sql.clock.now()),
            )
        row = await self._sql.one("SELECT * FROM anchors WHERE message_id = ?", (message_id,))
        assert row is not None
        return anchor_from(row)

    async def unpin(self, message_id: int) -> bool:
        """Unpin a message; False when it was not pinned."""
        async with self._sql.transaction() as db:
            cursor = await db.execute("DELETE FROM anchors WHERE message_id = ?", (message_id,))
            return cursor.rowcount > 0

    async def pinned(self, conversation_id: str) -> list[tuple[Anchor, Message]]:
        """Pinned messages of a conversation in conversation order."""
        rows = await self._sql.all(
            f"SELECT a.message_id, a.note, a.pinned_at, {qualified(MESSAGE_COLUMNS, 'm')} "
            "FROM anchors a JOIN messages m ON m.id = a.message_id "
            "WHERE a.conversation_id = ? ORDER BY m.id",
            (conversation_id,),
        )
        return [(anchor_from(r), message_from(r)) for r in rows]

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        """Ids of the pinned messages of a conversation."""
        rows = await self._sql.all(
            "SELECT message_id FROM anchors WHERE conversation_id = ?", (conversation_id,)
        )
        return {int(r[0]) for r in rows}
