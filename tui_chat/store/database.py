"""Opening the SQLite database: pragmas, permissions, migrations, refusal of newer files."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import aiosqlite

from tui_chat.files import make_private_dirs
from tui_chat.store.access import Access, read_only_uri
from tui_chat.store.errors import StoreError
from tui_chat.store.migrations import LATEST_VERSION, MIGRATIONS

BUSY_TIMEOUT_MS = 30_000
"""How long a write waits for another process's transaction before SQLite gives up (a
summary commit can queue behind a long import or a soak of sends on a loaded machine)."""


def _private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist yet."""
    make_private_dirs(path.parent)  # folders tui-chat creates above it are 0700 too
    with contextlib.suppress(OSError):  # a directory we do not own
        path.parent.chmod(0o700)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)


def _tighten(path: Path) -> None:
    """Take group and other bits away; never add any (a 0400 file stays read-only)."""
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(f"{path}{suffix}")
        if candidate.exists():
            with contextlib.suppress(OSError):
                mode = candidate.stat().st_mode & 0o777
                if mode & 0o077:
                    candidate.chmod(mode & 0o700)


NOT_DAMAGE = ("SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_FULL", "SQLITE_READONLY")
"""Errors at open that say the disk or the folder refused, not that the file is damaged."""


async def read_schema_version(db: aiosqlite.Connection, path: Path) -> int:
    """Read ``user_version``; a file that is not SQLite gives a clear :class:`StoreError`."""
    try:
        async with db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        # Touch the schema too: a corrupted header only shows up on a real read.
        async with db.execute("SELECT count(*) FROM sqlite_master") as cursor:
            await cursor.fetchone()
    except sqlite3.DatabaseError as exc:
        if str(getattr(exc, "sqlite_errorname", "")).startswith(NOT_DAMAGE):
            raise  # the disk or the folder refused (Store.open reads it another way)
        raise StoreError(
            f"{path} is not a usable tui-chat database ({exc}); it was left untouched. "
            "Move it aside or restore a backup (tui-chat backup makes one)."
        ) from None
    return int(row[0]) if row else 0


async def connect(path: Path | str, access: Access | None = None) -> aiosqlite.Connection:
    """Open (creating if needed) and migrate the database at ``path``.

    The file is checked before anything is written: a file from a newer tui-chat or a file
    that is not a database raises :class:`StoreError` and is left byte-for-byte untouched.
    With a read-only ``access`` (see :func:`tui_chat.store.access.probe`) the file is opened
    for reading only; writes then fail with SQLite's ``SQLITE_READONLY``.
    """
    memory = str(path) == ":memory:"
    read_only = access is not None and access.read_only
    if not memory:
        path = Path(path).expanduser()
        existed = path.exists() and path.stat().st_size > 0
        if not existed and not read_only:
            _private_file(path)
    target = read_only_uri(Path(path)) if read_only else str(path)
    db = await aiosqlite.connect(target, isolation_level=None, uri=read_only)
    try:
        db.row_factory = sqlite3.Row
        await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = await read_schema_version(db, Path(str(path)))
        if version > LATEST_VERSION:
            raise StoreError(
                f"{path} was written by a newer tui-chat (schema {version}; this version knows "
                f"up to {LATEST_VERSION}). It was left untouched: upgrade tui-chat to open it."
            )
        if read_only and access is not None and version < LATEST_VERSION:
            raise StoreError(
                f"{path} needs an upgrade (schema {version} to {LATEST_VERSION}) but "
                f"{access.reason}; {access.fix}"
            )
        if not memory and not read_only:
            async with db.execute("PRAGMA journal_mode = WAL") as cursor:
                await cursor.fetchone()
        await db.execute("PRAGMA foreign_keys = ON")
        await db.execute("PRAGMA synchronous = NORMAL")
        if not read_only:
            await migrate(db, version)
        if not memory and not read_only:
            _tighten(Path(str(path)))
    except BaseException:
        await db.close()
        raise
    return db


async def migrate(db: aiosqlite.Connection, current: int) -> None:
    """Apply every migration after ``current``, each in its own transaction."""
    for number in range(current + 1, LATEST_VERSION + 1):
        await db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the write lock.
            async with db.execute("PRAGMA user_version") as cursor:
                row = await cursor.fetchone()
            if row is not None and int(row[0]) >= number:
                await db.execute("COMMIT")
                continue
            for statement in _statements(MIGRATIONS[number - 1]):
                await db.execute(statement)
            await db.execute(f"PRAGMA user_version = {number}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    """Split a migration script into complete statements (triggers contain semicolons)."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out
