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


def read_only_uri(path: Path) -> str:
    """An SQLite URI opening ``path`` for reading only.

    In a read-only folder SQLite cannot create the WAL's shared-memory file, so the file is
    opened ``immutable`` (nobody can write it there either) unless a WAL file is present.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    wal = Path(f"{path}-wal")
    if not os.access(path.parent, os.W_OK) and not wal.exists():
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
    if name == "SQLITE_FULL":
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
