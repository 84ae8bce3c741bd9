"""The attachments repository: every attached file's bytes, stored once by content hash.

Messages name an attachment by its ``sha256`` in a reference block
(:mod:`tui_chat.core.attachments`); the same file attached twice, or carried into a fork, is
one row here.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui_chat.store.sql import Sql

FETCH = 500
"""Hashes looked up per query."""


class Attachments:
    """The ``attachments`` table."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def put(self, media_type: str, data: bytes, sha256: str) -> bool:
        """Store a file's bytes unless the same content is already there.

        Args:
            media_type: Its MIME type.
            data: The bytes.
            sha256: Their hash (the caller computed it for the reference block).

        Returns:
            True when a new row was written, False when the content was already stored.
        """
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "INSERT INTO attachments (sha256, media_type, size, data, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(sha256) DO NOTHING",
                (sha256, media_type, len(data), data, self._sql.clock.now()),
            )
            return cursor.rowcount > 0

    async def data(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """The stored bytes of these hashes (missing ones are left out)."""
        wanted = sorted(set(hashes))
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), FETCH):
            chunk = wanted[start : start + FETCH]
            marks = ", ".join("?" for _ in chunk)
            rows = await self._sql.all(
                f"SELECT sha256, data FROM attachments WHERE sha256 IN ({marks})", chunk
            )
            found.update({str(r[0]): bytes(r[1]) for r in rows})
        return found

    async def count(self) -> int:
        """How many distinct files are stored."""
        row = await self._sql.one("SELECT count(*) FROM attachments")
        return int(row[0]) if row else 0

    async def remove_unreferenced(self) -> int:
        """Delete the files no message and no draft refers to any more (after a conversation
        is deleted).

        Returns:
            How many files were removed.
        """
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "DELETE FROM attachments WHERE sha256 NOT IN ("
                " SELECT json_extract(b.value, '$.sha256') FROM messages m, json_each(m.content) b"
                " WHERE m.content LIKE '%\"attachment\"%'"
                " AND json_extract(b.value, '$.type') = 'attachment'"
                " AND json_extract(b.value, '$.sha256') IS NOT NULL)"
                " AND sha256 NOT IN ("  # the files attached to a draft are kept too
                " SELECT json_extract(f.value, '$.sha256') FROM drafts d, json_each(d.files) f"
                " WHERE json_extract(f.value, '$.sha256') IS NOT NULL)"
            )
            return cursor.rowcount
