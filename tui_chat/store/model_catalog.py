"""The endpoint's model list as last read (migration 12).

``GET /v1/models`` gives each model's ``max_input_tokens``, ``max_tokens`` and
``capabilities``. The list is kept per endpoint (the base URL, ``""`` for the default), read
at start so a model's limits are known offline, and replaced whole when it is read again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from tui_chat.store.sql import Sql


class ModelCatalogStore:
    """The ``model_catalog`` table: one row per model an endpoint listed."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql
        self.read: dict[str, tuple[list[dict[str, Any]], str | None]] = {}
        """Every endpoint's list as read when the store opened (see :meth:`preload`)."""

    async def preload(self) -> None:
        """Read every endpoint's list once at open, so a model's limits are known at once
        (offline too). A database too old to have the table (opened read-only) has none."""
        try:
            rows = await self._sql.all("SELECT DISTINCT endpoint FROM model_catalog")
        except sqlite3.OperationalError:
            return
        self.read = {str(row[0]): await self.get(str(row[0])) for row in rows}

    async def get(self, endpoint: str) -> tuple[list[dict[str, Any]], str | None]:
        """The models ``endpoint`` listed, in its order, and when (``[], None``: never read)."""
        rows = await self._sql.all(
            "SELECT data, fetched_at FROM model_catalog WHERE endpoint = ? ORDER BY position",
            (endpoint,),
        )
        models: list[dict[str, Any]] = []
        for row in rows:
            try:
                data = json.loads(row[0])
            except ValueError:
                continue  # a damaged row is read again at the next refresh
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                models.append(data)
        return models, (str(rows[0][1]) if rows else None)

    async def replace(self, endpoint: str, models: Sequence[dict[str, Any]]) -> str:
        """Keep ``models`` as ``endpoint``'s list (the old one is dropped); returns the time."""
        now = self._sql.clock.now()
        async with self._sql.transaction() as db:
            await db.execute("DELETE FROM model_catalog WHERE endpoint = ?", (endpoint,))
            await db.executemany(
                "INSERT OR REPLACE INTO model_catalog "
                "(endpoint, model, position, data, fetched_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (endpoint, str(m["id"]), i, json.dumps(m, sort_keys=True), now)
                    for i, m in enumerate(models)
                ],
            )
        return now
