"""``--force`` replaces regular files (and symlinks) only: a character device or a FIFO given to
``export -o`` or ``backup`` is written into, as ``cat > /dev/null`` would, and a socket or a FIFO
nobody reads is refused with one line; the node is never turned into a regular file (as root,
``export -o /dev/null --force`` made ``/dev/null`` a 0600 file). Commands run in the test's
process (``run_here``); the nodes are made in the test's folder, never in ``/dev``.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import threading
from pathlib import Path

import pytest

from tests.reliability.helpers import import_conversation, run_here, write_config

TURN = [
    {"role": "user", "content": "where is the parser?"},
    {"role": "assistant", "content": "the parser lives in src/parser_main.py"},
]


@pytest.fixture
def home_and_id(isolated_env: Path, tmp_path: Path) -> tuple[Path, str]:
    write_config(isolated_env)
    return isolated_env, import_conversation(isolated_env, tmp_path, TURN, "special")


def _args(command: str, cid: str, target: Path) -> tuple[str, ...]:
    if command == "export":
        return ("export", cid, "-o", str(target), "--format", "md", "--force")
    return ("backup", str(target), "--force")


def _mode(path: Path) -> int:
    return path.lstat().st_mode


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_character_device_is_written_into_never_replaced(
    home_and_id: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = home_and_id
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the node /dev/null is
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    done = run_here(home, *_args(command, cid, null))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(_mode(null)) and os.major(null.lstat().st_rdev) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_fifo_is_written_into_while_it_is_read(
    home_and_id: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = home_and_id
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = bytearray()
    opened = threading.Event()

    def read() -> None:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open at once: the reader is there
        opened.set()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        try:
            # Linux reports no hang-up before a first writer came: poll waits for it.
            while poller.poll(60_000):
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    break  # the writer closed it
                received.extend(chunk)
        finally:
            os.close(fd)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(30)
    done = run_here(home, *_args(command, cid, fifo))
    reader.join(60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(_mode(fifo))
    if command == "export":
        assert "src/parser_main.py" in received.decode()
    else:
        assert received.startswith(b"SQLite format 3\x00")


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_fifo_nobody_reads_is_refused_in_one_line(
    home_and_id: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = home_and_id
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = run_here(home, *_args(command, cid, fifo))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "no process is reading" in done.stderr and str(fifo) in done.stderr, done.stderr
    assert stat.S_ISFIFO(_mode(fifo))


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_socket_is_refused_in_one_line(
    home_and_id: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = home_and_id
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        done = run_here(home, *_args(command, cid, path))
    finally:
        server.close()
    assert done.returncode == 1
    assert "is a socket" in done.stderr and "regular files only" in done.stderr, done.stderr
    assert stat.S_ISSOCK(_mode(path))
