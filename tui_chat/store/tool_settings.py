"""The tools' settings kept across sessions: "always allow" and servers switched off.

``tool_approvals`` holds each approval a person gave for good: one tool of a server, or the
whole server (``tool`` is ``''``); revoking deletes the row. ``conversation_tools_off`` holds
the servers whose tools a conversation does not send; rows leave with their conversation.
"""

from __future__ import annotations

from tui_chat.store.sql import Sql


class ToolSettings:
    """The ``tool_approvals`` and ``conversation_tools_off`` tables."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def approvals(self) -> list[tuple[str, str]]:
        """Every standing approval, ``(server, tool)`` (``tool`` ``''``: the whole server)."""
        rows = await self._sql.all("SELECT server, tool FROM tool_approvals ORDER BY server, tool")
        return [(str(r[0]), str(r[1])) for r in rows]

    async def approve(self, server: str, tool: str = "") -> None:
        """Allow ``tool`` of ``server`` (or the whole server) from now on, in every session."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT OR IGNORE INTO tool_approvals (server, tool, granted_at) VALUES (?, ?, ?)",
                (server, tool, self._sql.clock.now()),
            )

    async def revoke(self, server: str, tool: str = "") -> bool:
        """Take an approval back; whether there was one."""
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "DELETE FROM tool_approvals WHERE server = ? AND tool = ?", (server, tool)
            )
            return (cursor.rowcount or 0) > 0

    async def off(self, conversation_id: str) -> frozenset[str]:
        """The servers switched off in a conversation."""
        rows = await self._sql.all(
            "SELECT server FROM conversation_tools_off WHERE conversation_id = ?",
            (conversation_id,),
        )
        return frozenset(str(r[0]) for r in rows)

    async def set_on(self, conversation_id: str, server: str, on: bool) -> None:
        """Switch a server's tools on or off in a conversation."""
        async with self._sql.transaction() as db:
            if on:
                await db.execute(
                    "DELETE FROM conversation_tools_off WHERE conversation_id = ? AND server = ?",
                    (conversation_id, server),
                )
            else:
                await db.execute(
                    "INSERT OR IGNORE INTO conversation_tools_off (conversation_id, server) "
                    "SELECT id, ? FROM conversations WHERE id = ?",
                    (server, conversation_id),
                )
