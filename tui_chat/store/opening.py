"""Opening a database whatever its disk allows: a full disk or a read-only folder still reads.

SQLite reads a WAL database through a shared-memory file beside it (``-shm``), which it
creates at the first open. On a full disk or in a read-only folder it cannot, and every
command failed as if the file were damaged. Here:

- a database that cannot be opened for writing (a full disk, a failing one) is opened for
  reading, and its :class:`~tui_chat.store.access.Access` says why changes cannot be saved;
- without a WAL, such a file is read ``immutable`` (no shared memory needed);
- with a WAL but no shared-memory file, a private copy of both is read (:class:`Snapshot`),
  so what the WAL holds is seen; the copy is removed when the store closes.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from pathlib import Path

import aiosqlite

from tui_chat.store.access import Access, explain, no_shared_memory, unwritable, wal_pending
from tui_chat.store.database import NOT_DAMAGE, connect
from tui_chat.store.errors import StoreError


class Snapshot:
    """A private copy of a database and its WAL in a temporary folder (mode 0700).

    Raises:
        StoreError: the copy could not be made (e.g. the temporary folder's disk is full).
    """

    def __init__(self, path: Path) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="tui-chat-read-")
        self.path = Path(self._folder.name) / path.name
        try:
            for suffix in ("", "-wal"):
                shutil.copyfile(f"{path}{suffix}", f"{self.path}{suffix}")
                Path(f"{self.path}{suffix}").chmod(0o600)
        except OSError as exc:
            self.close()
            raise StoreError(
                f"cannot read {path}: its WAL can only be read from a copy, and the copy in "
                f"{self._folder.name} failed ({exc.strerror or exc}); free some space there "
                "(or set TMPDIR to a disk with room) and try again"
            ) from None

    def close(self) -> None:
        """Remove the copy."""
        with contextlib.suppress(OSError):
            self._folder.cleanup()


async def open_database(
    path: Path | str, access: Access
) -> tuple[aiosqlite.Connection, Access, Snapshot | None]:
    """Open ``path`` (``access`` from :func:`~tui_chat.store.access.probe`).

    Returns:
        The connection, the access it was opened with (read-only when the disk refused
        writes) and the private copy being read, if one was needed.

    Raises:
        StoreError: the file cannot be used, with one line saying why.
    """
    try:
        return await _open(path, access)
    except sqlite3.OperationalError as exc:
        name = str(getattr(exc, "sqlite_errorname", ""))
        if str(path) == ":memory:" or not name.startswith(NOT_DAMAGE):
            raise  # not the disk refusing (e.g. a failed migration): as it is
        if access.read_only:
            raise _refused(exc, path, access) from None
        fallback = unwritable(Path(path), exc)
    try:
        return await _open(path, fallback)
    except sqlite3.OperationalError as exc:
        raise _refused(exc, path, fallback) from None


async def _open(
    path: Path | str, access: Access
) -> tuple[aiosqlite.Connection, Access, Snapshot | None]:
    source = Path(str(path))
    if access.read_only and wal_pending(source) and no_shared_memory(source):
        snapshot = Snapshot(source)
        try:
            return await connect(snapshot.path, access), access, snapshot
        except BaseException:
            snapshot.close()
            raise
    return await connect(path, access), access, None


def _refused(exc: sqlite3.Error, path: Path | str, access: Access) -> StoreError:
    line = explain(exc, path, access)
    if access.read_only and access.reason:
        line = f"cannot open {path}: {access.reason} ({exc}); {access.fix}"
    return StoreError(line or f"cannot open {path} ({exc})")
