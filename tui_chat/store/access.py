"""Where the database can be written, and what a failed write means for the user.

A healthy database in a read-only folder (or a read-only file) is opened read-only: history,
search and exports work, and the first change says which path is read-only and what to do.
A full disk, a folder given as the database and an unreadable path each get one line naming
the path — never "damaged", which is only said of a file SQLite finds corrupt.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tui_chat.store.errors import StoreError


@dataclass(frozen=True, slots=True)
class Access:
    """How a database file can be opened."""

    read_only: bool
    """True when tui-chat may read the file but not change it."""
    reason: str = ""
    """Why it is read-only (names the path)."""
    fix: str = ""
    """What the user can do to make it writable."""


def probe(path: Path) -> Access:
    """Find out whether ``path`` (an existing file or a new one) can be written.

    Raises:
        StoreError: ``path`` is a directory.
    """
    if path.is_dir():
        raise StoreError(
            f"{path} is a directory, not a database file; pass a file path "
            f"(e.g. --db {path / 'tui-chat.db'})"
        )
    if not path.exists():
        return Access(read_only=False)
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return Access(
            read_only=True,
            reason=f"its folder {folder} is read-only",
            fix=f"make the folder writable (chmod u+w {folder}) or copy the database to a "
            "writable place and pass --db",
        )
    if not os.access(path, os.W_OK):
        return Access(
            read_only=True,
            reason=f"the file {path} is read-only",
            fix=f"make it writable (chmod u+w {path})",
        )
    return Access(read_only=False)


FULL_BYTES = 1024 * 1024
"""Below this much free space a disk that refused a write is said to be full."""


def disk_full(folder: Path) -> bool:
    """Whether the disk holding ``folder`` has (almost) no space left."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < FULL_BYTES


def unwritable(path: Path, exc: BaseException) -> Access:
    """The access of a database that could not be opened for writing (``exc``): a full disk
    or a failing one. Reading it is still possible."""
    folder = path.parent
    if disk_full(folder):
        return Access(
            read_only=True,
            reason=f"the disk holding {folder} is full",
            fix="free some space on it and try again",
        )
    return Access(
        read_only=True,
        reason=f"{folder} cannot be written ({exc})",
        fix="check that disk (space, permissions, errors) and try again",
    )


SHM_BYTES = 32 * 1024
"""The smallest shared-memory file SQLite makes (a shorter one was cut off by a full disk)."""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def no_shared_memory(path: Path) -> bool:
    """Whether SQLite cannot create the WAL's shared-memory file beside ``path`` (a read-only
    folder or a full disk) and no whole one is there."""
    if _size(Path(f"{path}-shm")) >= SHM_BYTES:
        return False
    return not os.access(path.parent, os.W_OK) or disk_full(path.parent)


def wal_pending(path: Path) -> bool:
    """Whether ``path`` has a WAL holding transactions (an empty one holds none)."""
    return _size(Path(f"{path}-wal")) > 0


def read_only_uri(path: Path) -> str:
    """An SQLite URI opening ``path`` for reading only.

    Where SQLite cannot create the WAL's shared-memory file (a read-only folder, a full disk)
    and no WAL is present, the file is opened ``immutable``: nobody can write it there either.
    (With a WAL present, :mod:`tui_chat.store.snapshot` reads a private copy instead.)
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if no_shared_memory(path) and not wal_pending(path):
        uri += "&immutable=1"
    return uri


def explain(exc: BaseException, path: Path | str, access: Access | None = None) -> str | None:
    """One line for a database error the user can act on; ``None`` for any other error.

    Args:
        exc: The error (``sqlite3.Error`` or ``OSError``).
        path: The database file.
        access: How the file was opened, when known.
    """
    if isinstance(exc, OSError):
        return f"cannot use {path}: {exc.strerror or exc}"
    if not isinstance(exc, sqlite3.Error):
        return None
    name = str(getattr(exc, "sqlite_errorname", ""))
    if name.startswith("SQLITE_READONLY") or "readonly database" in str(exc):
        known = access if access is not None and access.read_only else probe(Path(path))
        reason = known.reason or f"{path} is read-only"
        fix = known.fix or f"make {path} and its folder writable"
        return f"cannot save to {path}: {reason}; reading still works. To save changes, {fix}"
    if name == "SQLITE_FULL" or (name.startswith("SQLITE_IOERR") and disk_full(Path(path).parent)):
        return (
            f"cannot save to {path}: the disk is full; this change was not saved and what was "
            "saved before is intact. Free some space and try again"
        )
    if name.startswith("SQLITE_IOERR"):
        return (
            f"cannot write to {path} ({exc}): the disk may be full, read-only or failing; "
            "what was saved before is intact. Free some space or check the disk and try again"
        )
    if name.startswith("SQLITE_CANTOPEN"):
        return f"cannot open {path} ({exc}): check that it and its folder exist and are yours"
    return None
