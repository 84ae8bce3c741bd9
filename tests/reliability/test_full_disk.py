"""A full disk (or a read-only folder holding a WAL) is not a broken database.

On a small tmpfs filled to the last byte, with no ``-wal``/``-shm`` beside the database (its
last user closed it) or with a reply left ``streaming`` and its WAL (its last user died):
``list``, ``show``, ``search``, ``export`` and ``backup`` to another disk work, and a change
says the disk is full — never "not a usable tui-chat database". A read-only folder holding a
WAL with no shared-memory file reads what the WAL holds.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.helpers import ROOT, cli_argv, cli_env, run_cli, run_here

pytestmark = pytest.mark.slow  # real processes

CONVERSATION = {
    "title": "full disk",
    "messages": [
        {"role": "user", "content": "where is the zebra?"},
        {"role": "assistant", "content": "the zebra is in zebra.toml"},
    ],
}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root only; skipped where it cannot be mounted)."""
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a small filesystem needs root")
    folder = tmp_path / "small"
    folder.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> None:
    """Write zeros until the filesystem has no byte left."""
    with open(folder / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    assert os.statvfs(folder).f_bavail == 0


def _leave_streaming_reply(db: Path) -> None:
    """A process that stored part of a reply and died: the WAL and shared memory stay."""
    script = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA wal_autocheckpoint = 0')\n"
        'c.execute("INSERT INTO messages (conversation_id, role, content, text, turn, '
        "token_count, status, created_at) SELECT conversation_id, 'assistant', '[]', "
        "'half a reply', turn, 1, 'streaming', created_at FROM messages "
        'ORDER BY id DESC LIMIT 1")\n'
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True, timeout=60)


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("left", ["closed", "streaming"])
def test_a_full_disk_reads_exports_and_backs_up(
    home: Path, small_disk: Path, tmp_path: Path, left: str
) -> None:
    db = small_disk / "tui-chat.db"
    source = tmp_path / "conversation.json"
    source.write_text(json.dumps(CONVERSATION))
    assert run_here(home, "--db", str(db), "import", str(source)).returncode == 0
    if left == "streaming":
        _leave_streaming_reply(db)
        assert Path(f"{db}-wal").exists()
    else:
        assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    _fill(small_disk)

    run = run_cli if left == "streaming" else run_here  # one case in real processes

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run(home, "--db", str(db), *args)

    listed = cli("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [c["title"] for c in json.loads(listed.stdout)] == ["full disk"]
    shown = cli("show", "last", "--json")
    assert shown.returncode == 0, shown.stderr
    texts = [m["text"] for m in json.loads(shown.stdout)["messages"]]
    assert texts[:2] == ["where is the zebra?", "the zebra is in zebra.toml"]
    if left == "streaming":
        assert texts[2] == "half a reply"
    found = cli("search", "zebra", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 2, found.stderr
    exported = cli("export", "last", "-o", str(tmp_path / "out.md"))
    assert exported.returncode == 0, exported.stderr
    assert "zebra.toml" in (tmp_path / "out.md").read_text()
    backed_up = cli("backup", str(tmp_path / "copy.db"))
    assert backed_up.returncode == 0, backed_up.stderr
    copy = sqlite3.connect(tmp_path / "copy.db")
    assert copy.execute("SELECT count(*) FROM messages").fetchone()[0] == len(texts)
    copy.close()
    doctor = cli("doctor")
    assert "not a usable" not in doctor.stdout + doctor.stderr
    # A change says the disk is full, and names the database.
    sent = cli("send", "-c", "last", "hello")
    assert sent.returncode == 1
    line = _one_line(sent.stderr)
    assert str(db) in line and "full" in line, line
    assert "not a usable" not in line and "Move it aside" not in line, line


def test_a_read_only_folder_with_a_wal_and_no_shared_memory_reads_the_wal(
    home: Path, tmp_path: Path
) -> None:
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root without setpriv ignores permission bits")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]
    folder = tmp_path / "data"
    db = folder / "tui-chat.db"
    source = tmp_path / "conversation.json"
    source.write_text(json.dumps(CONVERSATION))
    assert run_here(home, "--db", str(db), "import", str(source)).returncode == 0
    _leave_streaming_reply(db)
    Path(f"{db}-shm").unlink()
    folder.chmod(0o555)
    try:

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [*prefix, *map(str, cli_argv("--db", str(db), *args))],
                env=cli_env(home),
                capture_output=True,
                text=True,
                timeout=120,
                cwd=ROOT,
            )

        shown = cli("show", "last", "--json")
        assert shown.returncode == 0, shown.stderr
        texts = [m["text"] for m in json.loads(shown.stdout)["messages"]]
        assert texts[-1] == "half a reply"  # held only by the WAL
        backed_up = cli("backup", str(tmp_path / "copy.db"))
        assert backed_up.returncode == 0, backed_up.stderr
        sent = cli("send", "-c", "last", "hello")
        assert sent.returncode == 1
        line = _one_line(sent.stderr)
        assert "read-only" in line and "not a usable" not in line, line
    finally:
        folder.chmod(0o700)
    assert sorted(p.name for p in folder.iterdir()) == ["tui-chat.db", "tui-chat.db-wal"]
