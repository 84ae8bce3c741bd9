"""The one safe writer: no clobbering, no symlink following, 0600, nothing left on failure."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from tui_chat import files
from tui_chat.files import TargetExistsError, replacing, write_file


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_is_written_whole_and_private(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    write_file(target, "héllo\n" * 10_000)
    assert target.read_text(encoding="utf-8") == "héllo\n" * 10_000
    assert _mode(target) == 0o600
    assert _listing(tmp_path) == ["out.md"]


def test_existing_file_is_refused_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_text("old")
    target.chmod(0o644)
    with pytest.raises(TargetExistsError) as raised:
        write_file(target, "new")
    assert str(target) in str(raised.value)
    assert target.read_text() == "old" and _listing(tmp_path) == ["out.md"]


def test_force_replaces_and_makes_the_file_private(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_text("old old old")
    target.chmod(0o644)
    write_file(target, b"new", force=True)
    assert target.read_bytes() == b"new" and _mode(target) == 0o600
    assert _listing(tmp_path) == ["out.md"]


def test_a_symlink_is_refused_and_with_force_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.md"
    link.symlink_to(victim)
    with pytest.raises(TargetExistsError):
        write_file(link, "export")
    write_file(link, "export", force=True)
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "export"


def test_a_dangling_symlink_counts_as_existing(tmp_path: Path) -> None:
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(TargetExistsError):
        write_file(link, "x")
    assert not (tmp_path / "nowhere").exists()


def test_a_directory_is_refused_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    for force in (False, True):
        with pytest.raises(IsADirectoryError):
            write_file(tmp_path / "dir", "x", force=force)
    assert _listing(tmp_path) == ["dir"]


def _full_disk_after(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    written = 0

    def write(fd: int, data: bytes | memoryview) -> int:
        nonlocal written
        if written >= limit:
            raise OSError(errno.ENOSPC, "No space left on device")
        chunk = bytes(data[: max(1, min(len(data), limit - written))])
        written += len(chunk)
        return real_write(fd, chunk)

    monkeypatch.setattr(files.os, "write", write)


@pytest.mark.parametrize("force", [False, True])
def test_full_disk_leaves_nothing_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: bool
) -> None:
    target = tmp_path / "out.md"
    if force:
        target.write_text("the old export, complete")
    _full_disk_after(4096, monkeypatch)
    with pytest.raises(OSError) as raised:
        write_file(target, "x" * 100_000, force=force)
    assert raised.value.errno == errno.ENOSPC
    if force:
        assert target.read_text() == "the old export, complete"
        assert _listing(tmp_path) == ["out.md"]
    else:
        assert _listing(tmp_path) == []


def test_failed_fsync_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(files.os, "fsync", fsync)
    target = tmp_path / "out.md"
    target.write_text("old")
    with pytest.raises(OSError):
        write_file(target, "new", force=True)
    assert target.read_text() == "old" and _listing(tmp_path) == ["out.md"]


def test_a_path_created_meanwhile_is_not_clobbered(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    with pytest.raises(TargetExistsError), replacing(target) as temporary:
        temporary.write_text("mine")
        target.write_text("someone else's")  # appears between the check and the rename
    assert target.read_text() == "someone else's"
    assert _listing(tmp_path) == ["out.md"]


def test_an_error_inside_the_block_removes_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.db"
    with pytest.raises(RuntimeError), replacing(target) as temporary:
        temporary.write_text("half")
        raise RuntimeError("backup failed")
    assert _listing(tmp_path) == []


def test_replacing_takes_an_sqlite_backup(tmp_path: Path) -> None:
    source = sqlite3.connect(tmp_path / "live.db")
    source.execute("CREATE TABLE t (x)")
    source.execute("INSERT INTO t VALUES (42)")
    source.commit()
    target = tmp_path / "backup.db"
    with replacing(target) as temporary:
        copy = sqlite3.connect(temporary)
        source.backup(copy)
        copy.close()
    source.close()
    assert _mode(target) == 0o600
    assert sqlite3.connect(target).execute("SELECT x FROM t").fetchone() == (42,)
    assert _listing(tmp_path) == ["backup.db", "live.db"]


def test_a_read_only_directory_fails_cleanly(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            write_file(locked / "out.md", "x")
    finally:
        locked.chmod(0o700)
    assert _listing(locked) == []
