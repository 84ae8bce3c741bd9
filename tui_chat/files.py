"""Writing a user-named file (exports, backups) without ever clobbering or half-writing one.

One rule for every file tui-chat writes at a path the user chose:

* an existing path (a file, a directory, a symlink even a dangling one) is refused unless
  ``force`` is given;
* the bytes go to a temporary file in the same directory, which is fsynced and then renamed
  onto the path, so the path holds either the old file or the complete new one;
* a symlink at the final component is never followed: with ``force`` the link itself is
  replaced, its target is left alone;
* ``force`` replaces regular files (and symlinks) only: a character device or a FIFO is written
  into, as ``cat > /dev/null`` would (a FIFO only while a reader has it open), and a socket or
  a block device is refused, so ``-o /dev/null --force`` never turns ``/dev/null`` into a file;
* the file is created 0600 (it holds conversations);
* on any failure (full disk, read-only directory, interrupted write) the temporary file is
  removed and the old file is intact.

Like :mod:`tui_chat.paths`, this module sits outside the layers and imports nothing of
tui-chat, so the store (backups) and the engine (exports) both use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


class TargetExistsError(FileExistsError):
    """The path already exists and ``force`` was not given."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EEXIST, "already exists", str(path))
        self.path = path

    def __str__(self) -> str:
        return f"{self.path} already exists; it was not changed"


class NotARegularFileError(OSError):
    """``force`` was given for a path that is neither a regular file nor a symlink, and it
    cannot be written into (a socket, a block device, a FIFO nobody reads)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EINVAL, why, str(path))
        self.path = path

    def __str__(self) -> str:
        kept = "it was not changed (--force replaces regular files only)"
        return f"{self.path} {self.strerror}; {kept}"


def _kind(mode: int) -> str | None:
    """What a special file is (``None`` for a regular file, a symlink or a directory)."""
    for test, name in (
        (stat.S_ISCHR, "character device"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return None


def check_target(path: Path, *, force: bool = False) -> None:
    """Refuse ``path`` early (before any work) when it exists and ``force`` is not given.

    Args:
        path: The file to be written.
        force: Allow replacing an existing file or symlink.

    Raises:
        TargetExistsError: ``path`` exists (as anything, a dangling symlink included).
        IsADirectoryError: ``path`` is a directory (even with ``force``).
        NotARegularFileError: ``force`` for a socket or a block device (never replaced).
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not force:
        raise TargetExistsError(path)
    kind = _kind(info.st_mode)
    if kind in ("socket", "block device"):
        raise NotARegularFileError(path, f"is a {kind}")


def _open_special(path: Path) -> int | None:
    """A descriptor to write into ``path`` when it is a character device or a FIFO (``None``
    for anything else). A FIFO is opened without waiting: with no reader it is refused."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    kind = _kind(info.st_mode)
    if kind not in ("character device", "FIFO"):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise NotARegularFileError(path, "is a FIFO no process is reading") from None
        raise _naming(exc, path) from exc
    os.set_blocking(fd, True)
    return fd


def _pour(source: Path, fd: int, path: Path) -> None:
    """Copy ``source`` into the open special file ``fd`` (``path`` names it in errors)."""
    try:
        with source.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
    except OSError as exc:
        raise _naming(exc, path) from exc


@contextlib.contextmanager
def replacing(path: Path, *, force: bool = False) -> Iterator[Path]:
    """Yield a private temporary file beside ``path``; move it onto ``path`` on success.

    The caller fills the yielded file by any means (``os.write``, SQLite's backup API, …).
    When the ``with`` block ends normally the file is fsynced and renamed onto ``path``
    (refusing an existing one unless ``force``); when it raises, the file is removed.

    Args:
        path: The final file.
        force: Replace an existing file or symlink (never following the link).

    Yields:
        The temporary file's path (created empty, mode 0600).

    With ``force``, a character device or a FIFO at ``path`` is written into instead (the
    temporary file is then made in the system's temporary folder, and removed).

    Raises:
        TargetExistsError: ``path`` exists and ``force`` is not given (checked before and
            again, atomically, when the file is put in place).
        NotARegularFileError: ``force`` for a socket, a block device or an unread FIFO.
        OSError: Creating, writing, syncing or renaming failed; nothing is left behind.
    """
    check_target(path, force=force)
    special = _open_special(path) if force else None
    if special is not None:
        try:
            yield from _into_special(path, special)
        finally:
            os.close(special)
        return
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from exc
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        _fsync_file(temporary)
        if force:
            os.replace(temporary, path)
        else:
            _move_no_clobber(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if isinstance(exc, OSError) and not isinstance(exc, TargetExistsError):
            raise _naming(exc, path) from exc
        raise
    _fsync_directory(path.parent)


def _into_special(path: Path, fd: int) -> Iterator[Path]:
    """The body of :func:`replacing` for a device or FIFO: fill a private temporary file, then
    pour it into ``fd``; the temporary file is removed whatever happens."""
    handle, name = tempfile.mkstemp(prefix="tui-chat-", suffix=".tmp")
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        _pour(temporary, fd, path)
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _naming(exc: OSError, path: Path) -> OSError:
    """The same error about ``path`` (a full disk's ``write`` names no file at all)."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def write_file(path: Path, data: bytes | str, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` by the rule above (UTF-8 for ``str``).

    Args:
        path: The file to write.
        data: Its complete contents.
        force: Replace an existing file or symlink (never following the link).

    Raises:
        TargetExistsError: ``path`` exists and ``force`` is not given.
        OSError: Writing failed (e.g. ``ENOSPC``); ``path`` is unchanged and no file is left.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, force=force) as temporary:
        fd = os.open(temporary, os.O_WRONLY | os.O_NOFOLLOW)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)


def _move_no_clobber(temporary: Path, path: Path) -> None:
    """Put ``temporary`` at ``path`` unless something appeared there meanwhile.

    ``link`` fails with ``EEXIST`` atomically; on file systems without hard links the check
    and rename are two steps (a race only with another writer of the same path).
    """
    try:
        os.link(temporary, path, follow_symlinks=False)
    except FileExistsError:
        raise TargetExistsError(path) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        check_target(path)
        os.rename(temporary, path)
        return
    temporary.unlink()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; some platforms cannot open a directory (then it is skipped)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and every missing folder above it 0700 (``mkdir(parents=True)`` makes
    the parents 0755 under the usual umask); folders already there are left as they are."""
    missing: list[Path] = []
    cursor = path
    while not cursor.exists() and cursor != cursor.parent:
        missing.append(cursor)
        cursor = cursor.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):  # the umask may have taken bits away: never add any
            folder.chmod(0o700)
