"""The one connection every repository shares: parameterised reads and write transactions.

Writes that read-then-write run inside ``BEGIN IMMEDIATE`` so two processes on one database
serialise on SQLite's write lock (with ``busy_timeout``) instead of failing with
``database is locked``; an asyncio lock keeps this process's own transactions from nesting.

One case ``busy_timeout`` does not cover: the connection is shared by this process's tasks, and
while one of them is between the steps of a read (its statement holds a read snapshot), SQLite
refuses another task's ``BEGIN IMMEDIATE`` at once (``SQLITE_BUSY_SNAPSHOT``, "database is
locked") if a second process committed since that snapshot — the busy handler is never called,
as waiting could deadlock. The read ends at its next step, so the ``BEGIN`` is tried again a
few milliseconds later, for up to :data:`BUSY_RETRY_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from tui_chat.core.clock import SYSTEM_CLOCK, Clock

BUSY_RETRY_SECONDS = 30.0
"""How long a ``BEGIN`` refused as busy is tried again (as long as ``busy_timeout`` waits)."""


def is_busy(exc: BaseException) -> bool:
    """Whether SQLite refused for a lock another connection or statement holds."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    return isinstance(exc, sqlite3.OperationalError) and (
        name.startswith("SQLITE_BUSY") or "database is locked" in str(exc)
    )


class Sql:
    """Runs parameterised SQL on one open connection."""

    def __init__(self, db: aiosqlite.Connection, clock: Clock = SYSTEM_CLOCK) -> None:
        """Share ``db`` (opened by :func:`tui_chat.store.database.connect`); every repository
        on it reads the time from ``clock``."""
        self.connection = db
        self.clock = clock
        """Where the repositories read the time (row stamps, lease expiries)."""
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction holding SQLite's write lock from the start."""
        async with self._lock:
            try:
                await self._begin()
            except asyncio.CancelledError:
                # BEGIN was queued to the connection's thread and runs all the same: left
                # open, every later transaction would fail ("within a transaction").
                await self._undo_begin_holding_the_lock()
                raise
            try:
                yield self.connection
            except BaseException:
                await self.connection.execute("ROLLBACK")
                raise
            try:
                await self.connection.execute("COMMIT")
            except sqlite3.Error:
                if self.connection.in_transaction:  # a failed COMMIT leaves it open
                    await self.connection.execute("ROLLBACK")
                raise

    async def _begin(self) -> None:
        """``BEGIN IMMEDIATE``, tried again while SQLite refuses it as busy (bounded)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BUSY_RETRY_SECONDS
        pause = 0.002
        while True:
            try:
                await self.connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(pause)  # the reads under way take their next step
            pause = min(pause * 2, 0.05)

    async def _undo_begin_holding_the_lock(self) -> None:
        """Wait for :meth:`_undo_begin` even if cancelled again meanwhile (at shutdown).

        Leaving earlier would free the lock while the BEGIN may still stand: the next
        transaction's BEGIN would reach the connection's thread before the ROLLBACK.
        """
        undo = asyncio.ensure_future(self._undo_begin())
        while not undo.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(undo)
        undo.result()

    async def _undo_begin(self) -> None:
        """Roll back a BEGIN whose caller was cancelled (the thread runs calls in order)."""
        await self.connection.execute("SELECT 1")
        if self.connection.in_transaction:
            await self.connection.execute("ROLLBACK")

    async def one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        """The first row of a query, if any (the queries asking for one read one or a few)."""
        rows = await self.all(sql, params)
        return rows[0] if rows else None

    async def all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Every row of a query, in one trip to the connection's thread (a cursor's execute,
        fetch and close are three: a request's build reads some twenty times)."""
        rows = await self.connection.execute_fetchall(sql, params)
        return list(rows)
