"""A symlink says where it points, a FIFO is named as one (and never read), a lease left by a clock
far ahead does not block senders for ever, directories tui-chat creates are 0700, ``send -c ""`` is
refused, and ``show``/``list`` print on a non-UTF-8 stdout.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import sample_files
from tests.reliability.helpers import cli_env, execute, rows, run_cli, write_config
from tests.seam import engine_of
from tui_chat.core.attachments import AttachmentError
from tui_chat.engine.files import read_attachment


def test_a_symlink_is_attached_saying_where_it_points(tmp_path: Path) -> None:
    real = tmp_path / "secret" / "real.png"
    real.parent.mkdir()
    real.write_bytes(sample_files.png(4, 3))
    link = tmp_path / "harmless.png"
    link.symlink_to(real)
    attachment = read_attachment(link)
    assert attachment.name == f"harmless.png (→ {real.resolve()})"


def test_a_fifo_is_named_as_one_and_never_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(AttachmentError, match="it is a FIFO") as refused:
        read_attachment(fifo)  # no writer: a blocking open would hang here
    assert "does not exist" not in str(refused.value)


async def test_a_lease_from_a_clock_far_ahead_is_taken_once_it_stops_changing(
    make_service: Any,
) -> None:
    service = await make_service()
    conversation = await service.conversations.new()
    db = Path(service.db_path)
    execute(
        db,
        "INSERT INTO send_leases (conversation_id, owner, expires_at) VALUES (?, ?, ?)",
        (conversation.id, "another-host:4242:cafebabe", time.time() + 3600),
    )
    lock = engine_of(service).session.send_lock
    lock.lease_seconds, lock.poll_seconds = 0.5, 0.05
    events: list[Any] = []
    outcome = await asyncio.wait_for(service.send(conversation.id, "hello?", events.append), 60)
    assert outcome.error is None
    waiting = [e for e in events if type(e).__name__ == "SendWaiting"]
    assert len(waiting) == 1
    assert "process 4242 on another-host" in waiting[0].holder  # who holds it, and that
    assert "clock is ahead" in waiting[0].holder  # its expiry cannot be right
    assert rows(db, "SELECT count(*) AS n FROM send_leases")[0]["n"] == 0  # released


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow  # a real process
def test_folders_tui_chat_creates_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        home = tmp_path / "a" / "b" / "home"
        done = run_cli(home, "list")
        assert done.returncode == 0, done.stderr
        for folder in (tmp_path / "a", tmp_path / "a" / "b", home, home / "data"):
            assert _mode(folder) == 0o700, folder
        db = tmp_path / "x" / "y" / "chat.db"
        done = run_cli(home, "--db", str(db), "list")
        assert done.returncode == 0, done.stderr
        for folder in (tmp_path / "x", tmp_path / "x" / "y"):
            assert _mode(folder) == 0o700, folder
    finally:
        os.umask(old)


def _imported(home: Path, tmp_path: Path, text: str) -> None:
    source = tmp_path / "c.json"
    source.write_text(
        json.dumps({"title": text, "messages": [{"role": "user", "content": text}]}),
        encoding="utf-8",
    )
    assert run_cli(home, "import", str(source)).returncode == 0


@pytest.mark.slow  # a real process
def test_send_to_an_empty_conversation_id_is_refused(isolated_env: Path, tmp_path: Path) -> None:
    write_config(isolated_env)
    _imported(isolated_env, tmp_path, "the last one")
    done = run_cli(isolated_env, "send", "-c", "", "hello")
    assert done.returncode == 1
    assert "empty conversation id" in done.stderr
    db = isolated_env / "data" / "tui-chat.db"
    assert rows(db, "SELECT count(*) AS n FROM messages")[0]["n"] == 1  # nothing was stored


@pytest.mark.slow  # a real process
def test_show_and_list_print_on_a_non_utf8_stdout(isolated_env: Path, tmp_path: Path) -> None:
    import subprocess

    from tests.reliability.helpers import ROOT, cli_argv

    write_config(isolated_env)
    _imported(isolated_env, tmp_path, "café naïve")
    env = {**cli_env(isolated_env), "PYTHONIOENCODING": "ascii", "LC_ALL": "C"}
    for args in (("list",), ("show", "last")):
        done = subprocess.run(cli_argv(*args), env=env, capture_output=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr
        assert b"caf\\xe9" in done.stdout


@pytest.mark.slow  # a real process
def test_a_fifo_as_the_config_file_is_one_clear_line(isolated_env: Path) -> None:
    config = isolated_env / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    os.mkfifo(config)
    done = run_cli(isolated_env, "list", timeout=60)  # it hung before
    assert done.returncode == 1
    assert "not a regular file" in done.stderr and str(config) in done.stderr


def test_a_summary_full_of_escapes_is_never_activated() -> None:
    from tui_chat.core.summary_check import SummaryRejected, check_summary
    from tui_chat.core.tokens import TokenCounter

    counter = TokenCounter()
    hostile = (
        "Summary of the session \x1b[2J\x1b[H\x1b]0;pwned\x07"
        + "\\x1b[31m\\u001b[0m\\n\\t" * 40
        + " the parser lives in src/parser.py"
    )
    with pytest.raises(SummaryRejected, match="escape sequences"):
        check_summary(hostile, 2_000, counter)
    fine = 'We fixed the parser: `print("a\\nb")` now prints two lines; tests pass in CI.'
    assert check_summary(fine, 2_000, counter).text == fine
