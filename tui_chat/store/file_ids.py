"""The Files API's ids of attached files, per endpoint (migration 15).

An attachment is uploaded once per endpoint (its base URL) and content hash; later requests
name the ``file_id`` kept here. Whether an endpoint takes uploads at all is kept beside it, so
an endpoint without the Files API is asked once, not at every send. An id whose file is no
longer stored (no message and no draft refers to it: its conversations were deleted) is
*unreferenced*: the engine deletes it at the endpoint, then forgets it here.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui_chat.store.rows import clean_text
from tui_chat.store.sql import Sql


class FileIds:
    """The ``file_endpoints`` and ``file_ids`` tables."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def supported(self, endpoint: str) -> bool | None:
        """Whether ``endpoint`` takes uploads: ``None`` when it was never asked."""
        row = await self._sql.one(
            "SELECT supported FROM file_endpoints WHERE endpoint = ?", (endpoint,)
        )
        return bool(row[0]) if row else None

    async def note_support(self, endpoint: str, supported: bool, reason: str = "") -> None:
        """Record whether ``endpoint`` takes uploads (the newest answer wins)."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO file_endpoints (endpoint, supported, reason, noted_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE SET "
                "supported = excluded.supported, reason = excluded.reason, "
                "noted_at = excluded.noted_at",
                (endpoint, int(supported), clean_text(reason), self._sql.clock.now()),
            )

    async def refusing(self) -> list[tuple[str, str]]:
        """The endpoints noted as taking no upload, with the reason (``doctor`` lists them)."""
        rows = await self._sql.all(
            "SELECT endpoint, reason FROM file_endpoints WHERE supported = 0 ORDER BY endpoint"
        )
        return [(str(endpoint), str(reason or "")) for endpoint, reason in rows]

    async def ask_again(self) -> int:
        """Forget which endpoints took no upload, so the next send asks each again (``doctor
        --repair``: a gateway fixed since); returns how many were forgotten."""
        async with self._sql.transaction() as db:
            cursor = await db.execute("DELETE FROM file_endpoints WHERE supported = 0")
            return int(cursor.rowcount or 0)

    async def known(self, endpoint: str, hashes: Iterable[str]) -> dict[str, str]:
        """The ``file_id`` of each of ``hashes`` already uploaded to ``endpoint``."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        marks = ", ".join("?" for _ in wanted)
        rows = await self._sql.all(
            f"SELECT sha256, file_id FROM file_ids WHERE endpoint = ? AND sha256 IN ({marks})",
            (endpoint, *wanted),
        )
        return {str(sha): str(file_id) for sha, file_id in rows}

    async def remember(self, endpoint: str, sha256: str, file_id: str) -> None:
        """Keep the ``file_id`` a file was uploaded as."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO file_ids (endpoint, sha256, file_id, uploaded_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(endpoint, sha256) DO UPDATE SET file_id = excluded.file_id, "
                "uploaded_at = excluded.uploaded_at",
                (endpoint, sha256, file_id, self._sql.clock.now()),
            )

    async def forget(self, endpoint: str, file_ids: Iterable[str]) -> None:
        """Drop ids the endpoint no longer knows (the files are uploaded again when next sent)."""
        async with self._sql.transaction() as db:
            await db.executemany(
                "DELETE FROM file_ids WHERE endpoint = ? AND file_id = ?",
                [(endpoint, file_id) for file_id in file_ids],
            )

    async def unreferenced(self, endpoint: str) -> list[str]:
        """The ids uploaded to ``endpoint`` whose file is no longer stored, oldest first."""
        rows = await self._sql.all(
            "SELECT file_id FROM file_ids WHERE endpoint = ? AND sha256 NOT IN "
            "(SELECT sha256 FROM attachments) ORDER BY uploaded_at, file_id",
            (endpoint,),
        )
        return [str(row[0]) for row in rows]
