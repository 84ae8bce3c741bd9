"""The store: one database file behind one repository per aggregate.

``store.conversations``, ``store.messages``, ``store.summaries`` (with the compaction leases),
``store.anchors`` and ``store.search`` share one connection and one write lock; the facade
itself only opens and closes the file, and holds what belongs to the database as a whole
(backup, integrity check, token calibration). All SQL lives in this package.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

from tui_chat.core.clock import SYSTEM_CLOCK, Clock
from tui_chat.files import replacing
from tui_chat.store import search_index
from tui_chat.store.access import Access, probe
from tui_chat.store.anchors import Anchors
from tui_chat.store.attachments import Attachments
from tui_chat.store.compaction_support import CompactionSupport
from tui_chat.store.conversations import Conversations
from tui_chat.store.drafts import Drafts
from tui_chat.store.errors import StoreError
from tui_chat.store.file_ids import FileIds
from tui_chat.store.forks import Forks
from tui_chat.store.imports import Imports
from tui_chat.store.messages import Messages
from tui_chat.store.model_catalog import ModelCatalogStore
from tui_chat.store.opening import Snapshot, open_database
from tui_chat.store.search import Search
from tui_chat.store.send_leases import SendLeases
from tui_chat.store.sql import Sql
from tui_chat.store.summaries import Summaries
from tui_chat.store.tool_settings import ToolSettings
from tui_chat.store.usage import UsageLedger


class Store:
    """Async access to one tui-chat database file."""

    conversations: Conversations
    """Conversations: create, resolve, list, change, delete."""
    messages: Messages
    """Messages: append, complete a reply, read, page, the request's raw tail."""
    summaries: Summaries
    """Summary versions, compaction leases, activation."""
    anchors: Anchors
    """Pinned messages."""
    search: Search
    """Full-text search and recall."""
    compaction_support: CompactionSupport
    """Models whose endpoint refused on-demand compaction."""
    model_catalog: ModelCatalogStore
    """The endpoint's model list as last read (window, output limit, capabilities)."""
    file_ids: FileIds
    """The Files API: which endpoints take uploads, each file's ``file_id`` there."""
    send_leases: SendLeases
    """One sender per conversation at a time, across processes."""
    attachments: Attachments
    """Attached files, stored once by content hash."""
    forks: Forks
    """Forks and where they came from."""
    drafts: Drafts
    """The unsent draft of each conversation."""
    tool_settings: ToolSettings
    """Tools: standing approvals, servers switched off per conversation."""
    imports: Imports
    """Which file each import came from; what an import restores beyond messages."""
    usage: UsageLedger
    """The API's usage summed by day and model, over every conversation (``usage``)."""
    access: Access
    """Whether the file is writable (and if not, why and what to do)."""

    def __init__(
        self, db: aiosqlite.Connection, path: Path | str, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        """Wrap an open connection; use :meth:`open` instead."""
        self.path = path
        self.clock = clock
        """Where every repository reads the time (row stamps, lease expiries)."""
        self._sql = Sql(db, clock)
        self.conversations = Conversations(self._sql)
        self.messages = Messages(self._sql)
        self.summaries = Summaries(self._sql)
        self.anchors = Anchors(self._sql, self.messages)
        self.search = Search(self._sql, self.messages)
        self.compaction_support = CompactionSupport(self._sql)
        self.model_catalog = ModelCatalogStore(self._sql)
        self.file_ids = FileIds(self._sql)
        self.send_leases = SendLeases(self._sql)
        self.attachments = Attachments(self._sql)
        self.usage = UsageLedger(self._sql)
        self.forks = Forks(self._sql)
        self.drafts = Drafts(self._sql)
        self.tool_settings = ToolSettings(self._sql)
        self.imports = Imports(self._sql)
        self.access = Access(read_only=False)
        self._snapshot: Snapshot | None = None  # the private copy read (store/opening.py)

    @classmethod
    async def open(cls, path: Path | str, *, clock: Clock = SYSTEM_CLOCK) -> Store:
        """Open, creating and migrating as needed. Raises :class:`StoreError`.

        ``clock`` is where every repository reads the time (the system's unless a test
        injects another).

        A database in a read-only folder or file opens read-only (:attr:`access` says why).
        A writable one is tidied first: replies left ``streaming`` by a process that died end
        ``incomplete``, and a dropped search index stops blocking message writes.
        """
        access = Access(read_only=False) if str(path) == ":memory:" else probe(Path(path))
        db, access, snapshot = await open_database(path, access)
        store = cls(db, path, clock)
        store.access = access
        store._snapshot = snapshot
        await store.model_catalog.preload()
        if not access.read_only:
            try:
                await store._tidy()
            except BaseException:
                await store.close()
                raise
        return store

    async def _tidy(self) -> None:
        """Best-effort repairs at open; damage they run into is reported by the commands
        that need those pages (and by ``doctor``), not here, and a disk that refuses the
        write (full, failing) leaves them for a later open: reading needs none of them."""
        try:
            await search_index.bypass_if_missing(self._sql)
            await self.send_leases.settle_orphans()
            if await self.conversations.remove_dead_imports():  # killed mid-import
                await self.attachments.remove_unreferenced()
        except sqlite3.DatabaseError as exc:
            if not str(getattr(exc, "sqlite_errorname", "")).startswith(
                ("SQLITE_CORRUPT", "SQLITE_BUSY", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY")
            ):
                raise

    async def data_version(self) -> int:
        """SQLite's ``data_version``: it changes when another connection commits to the file
        (never for this connection's own commits)."""
        row = await self._sql.one("PRAGMA data_version")
        return int(row[0]) if row else 0

    async def close(self) -> None:
        """Close the connection (checkpointing the WAL)."""
        await self._sql.connection.close()
        if self._snapshot is not None:
            self._snapshot.close()

    @property
    def connection(self) -> aiosqlite.Connection:
        """The underlying connection, for tests and low-level checks (pragmas)."""
        return self._sql.connection

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction holding SQLite's write lock from the start."""
        async with self._sql.transaction() as db:
            yield db

    async def calibration(self, model: str) -> tuple[float, int]:
        """``(ratio, samples)`` of real/estimated input tokens for a model (1.0, 0 if none)."""
        row = await self._sql.one(
            "SELECT ratio, samples FROM calibration WHERE model = ?", (model,)
        )
        return (float(row[0]), int(row[1])) if row else (1.0, 0)

    async def set_calibration(self, model: str, ratio: float, samples: int) -> None:
        """Store a model's calibration."""
        async with self._sql.transaction() as db:
            await db.execute(
                "INSERT INTO calibration (model, ratio, samples) VALUES (?, ?, ?) "
                "ON CONFLICT(model) DO UPDATE SET ratio = excluded.ratio, "
                "samples = excluded.samples",
                (model, ratio, samples),
            )

    async def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when healthy)."""
        try:
            rows = await self._sql.all("PRAGMA integrity_check")
        except sqlite3.DatabaseError as exc:  # damage bad enough to stop the check itself
            return f"failed: {exc}"
        return "; ".join(str(r[0]) for r in rows)

    async def backup(self, target: Path, *, force: bool = False) -> None:
        """Copy the database to ``target`` with SQLite's online backup API.

        The rule of :mod:`tui_chat.files`: an existing ``target`` is refused unless ``force``;
        the copy is made in a temporary file beside it, synced and renamed; on failure
        nothing is left behind and an old ``target`` is intact.
        """
        target = Path(target).expanduser()
        try:
            with replacing(target, force=force) as temporary:
                async with aiosqlite.connect(str(temporary)) as dest:
                    await self._sql.connection.backup(dest)
        except sqlite3.Error as exc:  # writing the copy failed (e.g. a full disk)
            raise StoreError(
                f"cannot write the backup {target} ({exc}); nothing was left behind"
                + (" and the old file is intact" if force and target.exists() else "")
            ) from exc

    async def search_index(self) -> str:
        """``ok``, or what is wrong with the full-text index and how to fix it."""
        return await search_index.check(self._sql)

    async def rebuild_search_index(self) -> int:
        """Rebuild the full-text index from the messages (never changed); returns their number."""
        return await search_index.rebuild(self._sql)
