"""The forks repository: copy a conversation up to a message into a new one that remembers
where it came from.

A fork holds copies of its parent's messages up to and including the fork point (same turns,
texts, counts, times; attachments are shared, being stored once by hash), the pins among them,
and every completed summary version whose coverage lies inside the fork point, with the parent
links between those versions, so the fork's timeline starts with the same history. The parent is
not touched.
"""

from __future__ import annotations

import json
import uuid

import aiosqlite

from tui_chat.core.family import Branch, Family
from tui_chat.core.models import Fork
from tui_chat.store.errors import NotFound
from tui_chat.store.rows import clean_text
from tui_chat.store.sql import Sql

_SUMMARY_RESET = ("id", "conversation_id", "parent_id", "covers_to_message_id")
"""Summary columns a copied version gets new values for (leases are cleared too)."""


async def _columns(db: aiosqlite.Connection, table: str) -> list[str]:
    """The table's columns today (later migrations may have added some)."""
    async with db.execute(f"PRAGMA table_info({table})") as cursor:
        return [str(row[1]) for row in await cursor.fetchall()]


async def _ids(db: aiosqlite.Connection, sql: str, params: tuple[object, ...]) -> list[int]:
    async with db.execute(sql, params) as cursor:
        return [int(row[0]) for row in await cursor.fetchall()]


async def _remap_ledgers(db: aiosqlite.Connection, fork_id: str, messages: dict[int, int]) -> None:
    """Point the copied versions' identifier ledgers at the fork's own messages."""
    async with db.execute(
        "SELECT id, ledger FROM summaries WHERE conversation_id = ?", (fork_id,)
    ) as cursor:
        rows = list(await cursor.fetchall())
    for summary_id, raw in rows:
        try:
            entries = json.loads(raw or "[]")
        except ValueError:
            continue
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("ids"), list):
                entry["ids"] = [messages[i] for i in entry["ids"] if i in messages]
        await db.execute(
            "UPDATE summaries SET ledger = ? WHERE id = ?",
            (json.dumps(entries, ensure_ascii=False, separators=(",", ":")), summary_id),
        )


def _fork_from(row: aiosqlite.Row) -> Fork:
    return Fork(row[0], row[1], row[2], row[3])


class Forks:
    """The ``forks`` table and the copy that makes a fork."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def fork(self, conversation_id: str, at_message_id: int | None, title: str) -> str:
        """Make a fork holding ``conversation_id``'s messages up to ``at_message_id``.

        Args:
            conversation_id: The parent.
            at_message_id: Its last message the fork holds (``None``: none of them).
            title: The fork's title.

        Returns:
            The fork's id.

        Raises:
            NotFound: the conversation does not exist or the message is not one of its.
        """
        fork_id = uuid.uuid4().hex[:12]
        now = self._sql.clock.now()
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT model, system_prompt, settings, active_summary_id FROM conversations "
                "WHERE id = ?",
                (conversation_id,),
            ) as cursor:
                parent = await cursor.fetchone()
            if parent is None:
                raise NotFound(f"no conversation {conversation_id!r}")
            upto = 0
            if at_message_id is not None:
                owner = await _ids(
                    db,
                    "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?",
                    (at_message_id, conversation_id),
                )
                if not owner:
                    raise NotFound(f"message #{at_message_id} is not in this conversation")
                upto = at_message_id
            await db.execute(
                "INSERT INTO conversations (id, title, model, system_prompt, settings, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (fork_id, clean_text(title), parent[0], parent[1], parent[2], now, now),
            )
            messages = await self._copy_messages(db, conversation_id, fork_id, upto)
            summaries = await self._copy_summaries(db, conversation_id, fork_id, upto, messages)
            pinned = await _ids(
                db,
                "SELECT message_id FROM anchors WHERE conversation_id = ? AND message_id <= ?",
                (conversation_id, upto),
            )
            for old in pinned:
                await db.execute(
                    "INSERT INTO anchors (message_id, conversation_id, note, pinned_at) "
                    "SELECT ?, ?, note, pinned_at FROM anchors WHERE message_id = ?",
                    (messages[old], fork_id, old),
                )
            active = await self._active(db, parent[3], summaries)
            if active is not None:
                await db.execute(
                    "UPDATE conversations SET active_summary_id = ? WHERE id = ?",
                    (active, fork_id),
                )
            await db.execute(
                "INSERT INTO forks (conversation_id, parent_id, parent_message_id, created_at) "
                "VALUES (?, ?, ?, ?)",
                (fork_id, conversation_id, at_message_id, now),
            )
        return fork_id

    async def _copy_messages(
        self, db: aiosqlite.Connection, source: str, fork_id: str, upto: int
    ) -> dict[int, int]:
        """Copy the messages up to ``upto`` in one statement; old id -> new id."""
        old = await _ids(
            db,
            "SELECT id FROM messages WHERE conversation_id = ? AND id <= ? ORDER BY id",
            (source, upto),
        )
        if not old:
            return {}
        columns = [c for c in await _columns(db, "messages") if c not in ("id", "conversation_id")]
        names = ", ".join(columns)
        await db.execute(
            f"INSERT INTO messages (conversation_id, {names}) SELECT ?, {names} FROM messages "
            "WHERE conversation_id = ? AND id <= ? ORDER BY id",
            (fork_id, source, upto),
        )
        # Inside one write transaction new rowids follow the SELECT's order.
        new = await _ids(
            db, "SELECT id FROM messages WHERE conversation_id = ? ORDER BY id", (fork_id,)
        )
        # A reply still streaming in the parent is not streaming in the fork.
        await db.execute(
            "UPDATE messages SET status = 'incomplete' "
            "WHERE conversation_id = ? AND status = 'streaming'",
            (fork_id,),
        )
        return dict(zip(old, new, strict=True))

    async def _copy_summaries(
        self,
        db: aiosqlite.Connection,
        source: str,
        fork_id: str,
        upto: int,
        messages: dict[int, int],
    ) -> dict[int, int]:
        """Copy the completed versions covering no more than ``upto``; old id -> new id."""
        async with db.execute(
            "SELECT id, parent_id, covers_to_message_id FROM summaries "
            "WHERE conversation_id = ? AND status = 'completed' AND covers_to_message_id <= ? "
            "ORDER BY id",
            (source, upto),
        ) as cursor:
            rows = list(await cursor.fetchall())
        columns = [c for c in await _columns(db, "summaries") if c not in _SUMMARY_RESET]
        names = ", ".join(columns)
        copied: dict[int, int] = {}
        for summary_id, parent_id, covers_to in rows:
            if covers_to not in messages:
                continue
            cursor = await db.execute(
                f"INSERT INTO summaries (conversation_id, parent_id, covers_to_message_id, "
                f"{names}) SELECT ?, ?, ?, {names} FROM summaries WHERE id = ?",
                (fork_id, copied.get(parent_id), messages[covers_to], summary_id),
            )
            assert cursor.lastrowid is not None
            copied[summary_id] = cursor.lastrowid
        if copied:
            await db.execute(
                "UPDATE summaries SET lease_owner = NULL, lease_expires_at = NULL "
                "WHERE conversation_id = ?",
                (fork_id,),
            )
        if "ledger" in columns:
            await _remap_ledgers(db, fork_id, messages)
        return copied

    async def _active(
        self, db: aiosqlite.Connection, active: int | None, copied: dict[int, int]
    ) -> int | None:
        """The fork's version in force: the parent's, or its nearest ancestor inside the fork."""
        seen: set[int] = set()
        while active is not None and active not in seen:
            if active in copied:
                return copied[active]
            seen.add(active)
            found = await _ids(
                db, "SELECT IFNULL(parent_id, 0) FROM summaries WHERE id = ?", (active,)
            )
            active = found[0] or None if found else None
        return None

    async def get(self, conversation_id: str) -> Fork | None:
        """Where a conversation was forked from (``None``: it is not a fork)."""
        row = await self._sql.one(
            "SELECT conversation_id, parent_id, parent_message_id, created_at FROM forks "
            "WHERE conversation_id = ?",
            (conversation_id,),
        )
        return _fork_from(row) if row else None

    async def all(self) -> dict[str, Fork]:
        """Every fork by its conversation id."""
        rows = await self._sql.all(
            "SELECT conversation_id, parent_id, parent_message_id, created_at FROM forks"
        )
        return {str(r[0]): _fork_from(r) for r in rows}

    # -- families (branches of one conversation) ------------------------------------------

    async def family_id(self, conversation_id: str) -> str:
        """The family a conversation belongs to (its own id when it is no branch)."""
        row = await self._sql.one(
            "SELECT family_id FROM forks WHERE conversation_id = ?", (conversation_id,)
        )
        return str(row[0]) if row and row[0] else conversation_id

    async def family(self, conversation_id: str) -> Family:
        """Every branch of a conversation's family, in one query (oldest first).

        Raises:
            NotFound: no such conversation.
        """
        family_id = await self.family_id(conversation_id)
        rows = await self._sql.all(
            "SELECT c.id, c.title, f.parent_id, IFNULL(f.shared, 0), f.parent_message_id, "
            "IFNULL(t.messages, 0), c.created_at, c.updated_at, c.archived_at IS NOT NULL, "
            "(SELECT v.conversation_id FROM family_views v WHERE v.family_id = ?1) "
            "FROM conversations c LEFT JOIN forks f ON f.conversation_id = c.id "
            "LEFT JOIN conversation_totals t ON t.conversation_id = c.id "
            "WHERE c.id = ?1 OR c.id = ?2 "
            "OR c.id IN (SELECT conversation_id FROM forks WHERE family_id = ?1) "
            "ORDER BY c.created_at, c.id",
            (family_id, conversation_id),
        )
        if not any(str(r[0]) == conversation_id for r in rows):
            raise NotFound(f"no conversation {conversation_id!r}")
        branches = tuple(
            Branch(
                str(r[0]),
                str(r[1]),
                None if r[2] is None else str(r[2]),
                int(r[3]),
                None if r[4] is None else int(r[4]),
                int(r[5]),
                str(r[6]),
                str(r[7]),
                bool(r[8]),
            )
            for r in rows
        )
        return Family(family_id, branches, None if rows[0][9] is None else str(rows[0][9]))

    async def families(self) -> tuple[dict[str, str], dict[str, str]]:
        """Every branch's family (conversation id -> family id; a conversation missing from
        it is its own family), and the branch each family shows (family id -> conversation
        id). Two queries, whatever the number of families."""
        rows = await self._sql.all(
            "SELECT conversation_id, family_id FROM forks WHERE family_id IS NOT NULL"
        )
        views = await self._sql.all("SELECT family_id, conversation_id FROM family_views")
        return {str(r[0]): str(r[1]) for r in rows}, {str(r[0]): str(r[1]) for r in views}

    async def show(self, conversation_id: str) -> None:
        """Make a conversation the branch its family shows when opened."""
        family_id = await self.family_id(conversation_id)
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO family_views (family_id, conversation_id, viewed_at) "
                "VALUES (?, ?, ?) ON CONFLICT (family_id) DO UPDATE SET "
                "conversation_id = excluded.conversation_id, viewed_at = excluded.viewed_at",
                (family_id, conversation_id, self._sql.clock.now()),
            )

    async def has_branches(self, family_id: str) -> bool:
        """Whether a family has a branch besides its first conversation."""
        return (
            await self._sql.one("SELECT 1 FROM forks WHERE family_id = ?", (family_id,)) is not None
        )

    async def shown(self, family_id: str) -> str | None:
        """The branch recorded as the one a family shows, if any."""
        row = await self._sql.one(
            "SELECT conversation_id FROM family_views WHERE family_id = ?", (family_id,)
        )
        return str(row[0]) if row else None

    async def messages_at(self, conversation_id: str, positions: list[int]) -> dict[int, int]:
        """The ids of a conversation's messages at these positions (1 = its first), in one
        query; a position past its end is missing from the answer."""
        wanted = sorted({p for p in positions if p >= 1})
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = await self._sql.all(
            f"SELECT position, id FROM (SELECT id, row_number() OVER (ORDER BY id) AS position "
            f"FROM messages WHERE conversation_id = ?) WHERE position IN ({marks})",
            (conversation_id, *wanted),
        )
        return {int(r[0]): int(r[1]) for r in rows}

    async def first_own(self, family_id: str) -> dict[str, int]:
        """Each branch's first message of its own (where it parts from its parent), for a
        whole family in one query: branch id -> message id."""
        rows = await self._sql.all(
            "SELECT m.conversation_id, m.id FROM (SELECT conversation_id, id, row_number() "
            "OVER (PARTITION BY conversation_id ORDER BY id) AS position FROM messages "
            "WHERE conversation_id IN (SELECT conversation_id FROM forks WHERE family_id = ?)) m "
            "JOIN forks f ON f.conversation_id = m.conversation_id "
            "WHERE m.position = f.shared + 1",
            (family_id,),
        )
        return {str(r[0]): int(r[1]) for r in rows}
