"""Deleting messages of a conversation (the rows themselves: no soft delete to filter).

In one transaction with the delete: every summary version of the conversation whose coverage
reaches a deleted message is marked stale (it still holds what was deleted: regenerating it
writes a fresh version); branches that shared a deleted message with this conversation part
just before it (a branch's ``shared`` counts its parent's messages in order); its pins go
(``anchors``). The search index, the conversation's totals and its revision follow through
the triggers every write has.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from tui_chat.store.sql import Sql

STALE = "covers deleted message(s) {ids}: regenerate to summarise the conversation as it is"
"""Why a version is stale (the ids filled in)."""


async def _position(db: aiosqlite.Connection, conversation_id: str, message_id: int) -> int:
    """How many of the conversation's messages come up to and with ``message_id``."""
    async with db.execute(
        "SELECT count(*) FROM messages WHERE conversation_id = ? AND id <= ?",
        (conversation_id, message_id),
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def _part_branches(db: aiosqlite.Connection, conversation_id: str, first: int) -> None:
    """Branches sharing message ``first`` (or later) with ``conversation_id`` part before it:
    its children, and the conversation itself where it is a branch of another."""
    keep = await _position(db, conversation_id, first) - 1  # messages still shared
    await db.execute(
        "UPDATE forks SET shared = ?, parent_message_id = (SELECT id FROM messages "
        "WHERE conversation_id = forks.parent_id ORDER BY id LIMIT 1 OFFSET ?) "
        "WHERE parent_id = ? AND shared > ?",
        (keep, max(keep - 1, 0), conversation_id, keep),
    )
    await db.execute(
        "UPDATE forks SET shared = ?, parent_message_id = (SELECT id FROM messages "
        "WHERE conversation_id = forks.parent_id ORDER BY id LIMIT 1 OFFSET ?) "
        "WHERE conversation_id = ? AND parent_id IS NOT NULL AND shared > ?",
        (keep, max(keep - 1, 0), conversation_id, keep),
    )
    await db.execute(
        "UPDATE forks SET parent_message_id = NULL WHERE shared = 0 AND "
        "(parent_id = ? OR conversation_id = ?)",
        (conversation_id, conversation_id),
    )


async def delete_messages(sql: Sql, conversation_id: str, ids: Sequence[int]) -> list[int]:
    """Delete the messages ``ids`` of a conversation. Returns the versions marked stale."""
    if not ids:
        return []
    first = min(ids)
    marks = ", ".join("?" for _ in ids)
    shown = ", ".join(f"#{i}" for i in sorted(ids))
    async with sql.transaction() as db:
        await _part_branches(db, conversation_id, first)
        async with db.execute(
            "SELECT version FROM summaries WHERE conversation_id = ? AND status != 'failed' "
            "AND covers_to_message_id >= ? ORDER BY version",
            (conversation_id, first),
        ) as cursor:
            stale = [int(row[0]) for row in await cursor.fetchall()]
        await db.execute(
            "UPDATE summaries SET stale = ? WHERE conversation_id = ? AND status != 'failed' "
            "AND covers_to_message_id >= ?",
            (STALE.format(ids=shown), conversation_id, first),
        )
        await db.execute(
            f"DELETE FROM anchors WHERE conversation_id = ? AND message_id IN ({marks})",
            (conversation_id, *ids),
        )
        await db.execute(
            f"DELETE FROM messages WHERE conversation_id = ? AND id IN ({marks})",
            (conversation_id, *ids),
        )
    return stale
