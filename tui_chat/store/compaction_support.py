"""The models whose endpoint refused on-demand compaction (migration 6).

When a ``server`` compaction fails because the model or endpoint does not support it, the
reason is kept per model, so later compactions go straight to the ``claude`` summarizer and
the user is told once, not at every compaction.
"""

from __future__ import annotations

from tui_chat.store.rows import clean_text
from tui_chat.store.sql import Sql


class CompactionSupport:
    """The ``compaction_support`` table: one row per model known not to compact."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def unsupported(self, model: str) -> str | None:
        """Why ``model`` cannot compact on the server, or ``None`` when not known to fail."""
        row = await self._sql.one("SELECT reason FROM compaction_support WHERE model = ?", (model,))
        return str(row[0]) if row else None

    async def remember(self, model: str, reason: str) -> None:
        """Record that ``model`` cannot compact on the server (the newest reason wins)."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO compaction_support (model, reason, noted_at) VALUES (?, ?, ?) "
                "ON CONFLICT(model) DO UPDATE SET reason = excluded.reason, "
                "noted_at = excluded.noted_at",
                (model, clean_text(reason), self._sql.clock.now()),
            )

    async def forget(self, model: str) -> None:
        """Try on-demand compaction again for ``model`` (e.g. after changing the endpoint)."""
        async with self._sql.transaction() as db:
            await db.execute("DELETE FROM compaction_support WHERE model = ?", (model,))
