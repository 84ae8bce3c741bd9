"""``kill -9`` during an import leaves nothing behind, with real processes.

While an import runs its conversation is hidden (the list and ``last`` never show a partial
one); a process killed mid-import leaves a conversation and attached files that the next open
removes. ``doctor --repair`` removes attached files nothing refers to.
"""

from __future__ import annotations

import base64
import hashlib
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes import sample_files
from tests.reliability.helpers import cli_argv, cli_env, execute, rows, run_cli, write_config
from tui_chat.engine.transfer.transfer import EXPORT_FORMAT

pytestmark = pytest.mark.slow  # real processes

MESSAGES = 60_000


def _db(home: Path) -> Path:
    return home / "data" / "tui-chat.db"


def _big_export(path: Path) -> None:
    image = sample_files.png(64, 48, filler=2 * 1024 * 1024)
    sha = hashlib.sha256(image).hexdigest()
    ref = {
        "type": "attachment",
        "kind": "image",
        "name": "wiring.png",
        "media_type": "image/png",
        "size": len(image),
        "sha256": sha,
    }
    messages = [
        {"role": "user", "content": [ref, {"type": "text", "text": "what is this?"}]},
        {"role": "assistant", "content": "a wiring diagram"},
    ]
    for i in range(MESSAGES // 2):
        messages.append({"role": "user", "content": f"question {i} about the parser"})
        messages.append({"role": "assistant", "content": f"answer {i}: see src/parser_{i}.py"})
    path.write_text(
        json.dumps(
            {
                "format": EXPORT_FORMAT,
                "conversation": {"title": "big import"},
                "messages": messages,
                "attachments": [
                    {
                        "sha256": sha,
                        "media_type": "image/png",
                        "size": len(image),
                        "data": base64.b64encode(image).decode("ascii"),
                    }
                ],
            }
        )
    )


def _count(home: Path, sql: str) -> int:
    if not _db(home).exists():
        return 0
    try:
        return int(rows(_db(home), sql)[0][0])
    except Exception:  # the schema is still being created
        return 0


def test_a_killed_import_is_never_shown_and_is_removed_at_the_next_open(
    isolated_env: Path, tmp_path: Path
) -> None:
    home = isolated_env
    write_config(home)
    assert run_cli(home, "list").returncode == 0  # the database exists before the import
    source = tmp_path / "big.json"
    _big_export(source)
    process = subprocess.Popen(
        cli_argv("import", str(source)),
        env=cli_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        # Killed once its conversation and file are stored, while its messages are written.
        while _count(home, "SELECT count(*) FROM attachments") == 0:
            assert process.poll() is None, "the import ended before it could be killed"
            assert time.monotonic() < deadline, "the import never stored its file"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(60)
        # Mid-import the conversation was hidden from the list and from `last`.
        assert _count(home, "SELECT count(*) FROM conversations") == 1
        assert _count(home, "SELECT count(*) FROM conversations WHERE archived_at IS NULL") == 0
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(60)
    assert _count(home, "SELECT count(*) FROM attachments") == 1
    # The next open removes what the killed import left: conversation, messages, file.
    listed = run_cli(home, "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
    assert _count(home, "SELECT count(*) FROM conversations") == 0
    assert _count(home, "SELECT count(*) FROM messages") == 0
    assert _count(home, "SELECT count(*) FROM attachments") == 0


def test_doctor_repair_removes_files_nothing_refers_to(isolated_env: Path) -> None:
    home = isolated_env
    write_config(home)
    assert run_cli(home, "list").returncode == 0
    execute(
        _db(home),
        "INSERT INTO attachments (sha256, media_type, size, data, created_at) "
        "VALUES ('0123', 'image/png', 3, x'010203', '2026-01-01T00:00:00Z')",
    )
    repaired = run_cli(home, "doctor", "--repair")
    assert "1 attached file(s) nothing refers to removed" in repaired.stderr, repaired.stderr
    assert _count(home, "SELECT count(*) FROM attachments") == 0
