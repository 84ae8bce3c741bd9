"""The conversations repository: create, find, list, change and delete conversations."""

from __future__ import annotations

import uuid
from typing import Any

from tui_chat.core.models import Conversation, ConversationInfo
from tui_chat.store.errors import NotFound
from tui_chat.store.owners import new_owner, owner_is_dead
from tui_chat.store.rows import (
    CONVERSATION_COLUMNS,
    clean_text,
    conversation_from,
    qualified,
    to_json,
)
from tui_chat.store.sql import Sql

IMPORTING = "importing:"
"""``archived_at`` of a conversation being imported, followed by its owner (store/owners.py)."""

_UPDATABLE = frozenset({"title", "model", "system_prompt", "settings", "archived_at"})


class Conversations:
    """The ``conversations`` table (deleting one removes everything in it)."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def create(
        self,
        *,
        title: str,
        model: str,
        system_prompt: str = "",
        settings: dict[str, Any] | None = None,
        conversation_id: str | None = None,
        created_at: str | None = None,
        importing: bool = False,
    ) -> Conversation:
        """Create a conversation and return it.

        ``importing`` creates it hidden (archived) and marked with this process as its owner
        until :meth:`imported`: a process killed mid-import leaves nothing the list shows, and
        :meth:`remove_dead_imports` deletes what it left at the next open.
        """
        now = created_at or self._sql.clock.now()
        cid = conversation_id or uuid.uuid4().hex[:12]
        async with self._sql.transaction() as db:
            await db.execute(
                f"INSERT INTO conversations ({CONVERSATION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (
                    cid,
                    clean_text(title),
                    model,
                    clean_text(system_prompt),
                    to_json(settings or {}),
                    now,
                    now,
                    f"{IMPORTING}{new_owner()}" if importing else None,
                ),
            )
        return await self.get(cid)

    async def imported(self, conversation_id: str) -> None:
        """An import finished: the conversation is shown (see :meth:`create`)."""
        async with self._sql.transaction() as db:
            await db.execute(
                "UPDATE conversations SET archived_at = NULL WHERE id = ? AND archived_at LIKE ?",
                (conversation_id, f"{IMPORTING}%"),
            )

    async def remove_dead_imports(self) -> int:
        """Delete the conversations of imports whose process died; returns how many."""
        rows = await self._sql.all(
            "SELECT id, archived_at FROM conversations WHERE archived_at LIKE ?",
            (f"{IMPORTING}%",),
        )
        dead = [str(r[0]) for r in rows if owner_is_dead(str(r[1]).removeprefix(IMPORTING))]
        for conversation_id in dead:
            await self.delete(conversation_id)
        return len(dead)

    async def get(self, conversation_id: str) -> Conversation:
        """The conversation with this exact id. Raises :class:`NotFound`."""
        row = await self._sql.one(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        )
        if row is None:
            raise NotFound(f"no conversation {conversation_id!r}")
        return conversation_from(row)

    async def revision(self, conversation_id: str) -> int:
        """The conversation's revision: it changes with every write that can change its next
        request (migration 13's triggers), in this process or another. ``-1`` when the
        conversation is gone."""
        row = await self._sql.one(
            "SELECT revision FROM conversations WHERE id = ?", (conversation_id,)
        )
        return -1 if row is None else int(row[0])

    async def resolve(self, ref: str) -> Conversation:
        """Find a conversation by id, unique id prefix, or ``last`` (most recently updated)."""
        ref = ref.strip()
        if ref == "last":
            row = await self._sql.one(
                f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE archived_at IS NULL "
                "ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            )
            if row is None:
                raise NotFound("there are no conversations yet")
            return conversation_from(row)
        if not ref:
            raise NotFound(
                "an empty conversation id matches nothing: give an id, a unique prefix or `last`"
            )
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = await self._sql.all(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations "
            "WHERE id = ? OR id LIKE ? ESCAPE '\\' LIMIT 3",
            (ref, escaped + "%"),
        )
        exact = [r for r in rows if r["id"] == ref]
        if exact:
            return conversation_from(exact[0])
        if not rows:
            raise NotFound(f"no conversation matches {ref!r}")
        if len(rows) > 1:
            raise NotFound(f"{ref!r} matches several conversations; give more of the id")
        return conversation_from(rows[0])

    async def all(
        self, *, include_archived: bool = False, limit: int | None = None, offset: int = 0
    ) -> list[ConversationInfo]:
        """Conversations newest first, with message and token totals.

        The totals are kept on write (migration 7), so this reads one row per conversation
        listed, however long their histories are.

        Args:
            include_archived: List archived conversations too.
            limit: At most this many (a page); ``None`` for all.
            offset: Skip this many first (the pages before).
        """
        where = "" if include_archived else "WHERE c.archived_at IS NULL"
        sql = (
            f"SELECT {qualified(CONVERSATION_COLUMNS, 'c')}, "
            "IFNULL(t.messages, 0) AS n, IFNULL(t.tokens, 0) AS t "
            "FROM conversations c LEFT JOIN conversation_totals t ON t.conversation_id = c.id "
            f"{where} ORDER BY c.updated_at DESC, c.rowid DESC"
        )
        params: tuple[Any, ...] = ()
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params = (-1 if limit is None else limit, offset)
        rows = await self._sql.all(sql, params)
        return [ConversationInfo(conversation_from(r), r["n"], r["t"]) for r in rows]

    async def update(self, conversation_id: str, **changes: Any) -> Conversation:
        """Change title, model, system_prompt, settings or archived_at."""
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))}")
        if not changes:
            return await self.get(conversation_id)
        values = {
            k: (to_json(v) if k == "settings" else clean_text(v) if isinstance(v, str) else v)
            for k, v in changes.items()
        }
        assignments = ", ".join(f"{k} = ?" for k in values)
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                f"UPDATE conversations SET {assignments}, updated_at = ? WHERE id = ?",
                (*values.values(), self._sql.clock.now(), conversation_id),
            )
            if cursor.rowcount == 0:
                raise NotFound(f"no conversation {conversation_id!r}")
        return await self.get(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        """Delete a conversation and everything in it (the only delete there is)."""
        async with self._sql.transaction() as db:
            await db.execute(
                "UPDATE conversations SET active_summary_id = NULL WHERE id = ?",
                (conversation_id,),
            )
            await db.execute("DELETE FROM anchors WHERE conversation_id = ?", (conversation_id,))
            await db.execute("DELETE FROM summaries WHERE conversation_id = ?", (conversation_id,))
            await db.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
            cursor = await db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            if cursor.rowcount == 0:
                raise NotFound(f"no conversation {conversation_id!r}")
