"""Writes of other processes: another ``tui-chat`` (a ``send`` from a script, a second window)
writing the same database.

SQLite's ``PRAGMA data_version`` changes when another connection commits to the file and never
for this connection's own commits, so reading it is a cheap way to ask "did anyone else write
since I last looked?" — a front end polls it and reloads what it shows only when it changed.
"""

from __future__ import annotations

from tui_chat.store.repository import Store


class OutsideWrites:
    """Tells whether another process wrote the database since the last look.

    Args:
        store: The open store.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._seen: int | None = None

    async def changed(self) -> bool:
        """True when another process committed since the previous call (and at the first
        call: what was read before it may already be out of date)."""
        version = await self._store.data_version()
        seen, self._seen = self._seen, version
        return version != seen
