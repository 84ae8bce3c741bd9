"""The imports repository (migration 11): which file each imported conversation was made from,
and the rows an export restores beyond its messages (summary versions, the active one, where a
fork came from).

A file is known by the SHA-256 of its bytes: importing the same file again is noticed (the
engine refuses unless forced) for as long as the conversation it made exists.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.store.sql import Sql

SUMMARY_FIELDS = (
    "version",
    "strategy",
    "text",
    "segments",
    "fields",
    "covers_to_message_id",
    "covered_messages",
    "source_tokens",
    "summary_tokens",
    "trigger",
    "instructions",
    "summarizer",
    "identifiers_kept",
    "identifiers_total",
    "status",
    "error",
    "created_at",
    "completed_at",
    "call_model",
    "call_input_tokens",
    "call_cache_read_tokens",
    "call_cache_write_tokens",
    "call_output_tokens",
    "call_cost_usd",
    "compaction_block",
    "ledger",
)
"""The columns a restored version is written with (besides its conversation and parent)."""

_JSON = frozenset({"segments", "fields", "compaction_block", "ledger"})


class Imports:
    """The ``imports`` table and the restoring writes of an import."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def find(self, sha256: str) -> tuple[str, str] | None:
        """``(conversation id, imported at)`` of the conversation a file with this hash made
        (the newest one still there), or ``None``."""
        row = await self._sql.one(
            "SELECT i.conversation_id, i.imported_at FROM imports i "
            "JOIN conversations c ON c.id = i.conversation_id "
            "WHERE i.sha256 = ? ORDER BY i.imported_at DESC LIMIT 1",
            (sha256,),
        )
        return (str(row[0]), str(row[1])) if row else None

    async def record(self, conversation_id: str, sha256: str) -> None:
        """Remember that ``conversation_id`` was imported from a file with this hash."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT OR REPLACE INTO imports (conversation_id, sha256, imported_at) "
                "SELECT id, ?, ? FROM conversations WHERE id = ?",
                (sha256, self._sql.clock.now(), conversation_id),
            )

    async def restore_summaries(
        self,
        conversation_id: str,
        versions: Sequence[Mapping[str, Any]],
        parents: Sequence[int | None],
        active: int | None,
    ) -> None:
        """Write summary versions in one transaction, oldest first.

        Args:
            conversation_id: The imported conversation.
            versions: Each version's :data:`SUMMARY_FIELDS` (message ids already this
                conversation's; JSON columns as values).
            parents: Each version's parent as an index into ``versions`` (``None``: none).
            active: The index of the version in force (``None``: none).
        """
        ids: list[int] = []
        names = ", ".join(SUMMARY_FIELDS)
        marks = ", ".join("?" for _ in SUMMARY_FIELDS)
        async with self._sql.transaction() as db:
            for version, parent in zip(versions, parents, strict=True):
                values = [
                    json.dumps(version[f], ensure_ascii=False)
                    if f in _JSON and version[f] is not None
                    else version[f]
                    for f in SUMMARY_FIELDS
                ]
                cursor = await db.execute(
                    f"INSERT INTO summaries (conversation_id, parent_id, {names}) "
                    f"VALUES (?, ?, {marks})",
                    (conversation_id, ids[parent] if parent is not None else None, *values),
                )
                assert cursor.lastrowid is not None
                ids.append(cursor.lastrowid)
            if active is not None:
                await db.execute(
                    "UPDATE conversations SET active_summary_id = ? WHERE id = ?",
                    (ids[active], conversation_id),
                )

    async def restore_fork(
        self, conversation_id: str, parent_id: str | None, parent_message_id: int | None
    ) -> None:
        """Record where an imported conversation was forked from (a parent that is not in
        this database is recorded as gone, like a deleted one)."""
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?",
                (parent_message_id, parent_id),
            ) as cursor:
                here = await cursor.fetchone() is not None
            await db.execute(
                "INSERT OR REPLACE INTO forks "
                "(conversation_id, parent_id, parent_message_id, created_at) VALUES (?, ?, ?, ?)",
                (
                    conversation_id,
                    parent_id if here else None,
                    parent_message_id if here else None,
                    self._sql.clock.now(),
                ),
            )
