"""The API key never lands anywhere, and tui-chat's files are private.

A whole session runs in real processes with a marker key (the paths that echo a second key run in
the test's process) — replies, a gateway that echoes the key back in an error, an SSE error event
and a failing summarizer that quote it, compaction, search, context, exports, import, backup and
doctor — then every file under the tui-chat home (database, WAL, shared memory), every export and
backup, and every byte printed on stdout and stderr are scanned for the key (and for a distinctive
slice of it). tui-chat writes no log file; its only log output goes to stderr, which is scanned.
Files are checked for 0600 and directories for 0700 with a permissive umask (022).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import all_text_files, run_cli, run_here, write_config

pytestmark = pytest.mark.slow  # real processes

KEYS = {
    "anthropic-shaped": "sk-ant-api03-SECRETMARKER-Zq81xV0pLw3e",
    # Not sk-… shaped: only scrubbing of the exact configured value can catch it.
    "plain": "corp-gateway-token-SECRETMARKER-7731",
}


class Session:
    """Runs tui-chat commands in real processes (or, ``here``, in this one with the same umask)
    and keeps everything they printed."""

    def __init__(self, home: Path, base_url: str, key: str, here: bool = False) -> None:
        self.home = home
        self.base_url = base_url
        self.key = key
        self.here = here
        self.printed: list[str] = []

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        previous = os.umask(0o022)
        try:
            if self.here:
                done = run_here(self.home, *args, base_url=self.base_url, key=self.key)
            else:  # its own process, forked with this umask (tests/integration/cli_runner.py)
                done = run_cli(self.home, *args, base_url=self.base_url, key=self.key)
        finally:
            os.umask(previous)
        self.printed.append(f"$ {' '.join(args)}\n{done.stdout}\n{done.stderr}")
        return done


@pytest.mark.parametrize("kind", list(KEYS))
def test_key_is_never_written_or_printed(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path, kind: str
) -> None:
    key = KEYS[kind]
    # The other key runs the paths that echo it only, in this process (what real processes
    # print is scanned with the first key).
    full = kind == "anthropic-shaped"
    fake_anthropic.api_key = key  # the server insists on exactly this key
    write_config(
        isolated_env,
        '[api]\nmax_retries = 0\ntimeout = 20\n[compaction]\npreset = "turns"\n'
        'summarizer = "claude-haiku-4-5"\n',
    )
    session = Session(isolated_env, fake_anthropic.base_url, key, here=not full)
    first = session.run("send", "--new", "--json", "first question about src/app.py")
    assert first.returncode == 0, first.stderr
    cid = json.loads(first.stdout)["conversation_id"]
    # A gateway that echoes the key in its error body, in every error path.
    fake_anthropic.push_error(401, message=f"invalid x-api-key: {key}", target="chat")
    assert session.run("send", "-c", cid, "second").returncode == 1
    fake_anthropic.push_sse_error(after_chunks=1, message=f"upstream rejected {key}")
    assert session.run("retry", cid).returncode == 1
    fake_anthropic.push_error(
        500, message=f"summarizer backend: Authorization: Bearer {key}", target="summary"
    )
    assert session.run("compact", cid).returncode == 1  # recorded as a failed version
    exports = [tmp_path / "out.json", tmp_path / "out.md"]
    backup = tmp_path / "backup.db"
    if full:
        reply = session.run("send", "-c", cid, "turn 4: LIMIT_4 = 28")
        assert reply.returncode == 0
        session.run("compact", cid)  # unless the send's automatic compaction folded it all
        versions = json.loads(session.run("summaries", cid, "--json").stdout)
        assert {v["status"] for v in versions} == {"completed", "failed"}
        for path in exports:
            fmt = path.suffix[1:]
            assert session.run("export", cid, "--format", fmt, "-o", str(path)).returncode == 0
        assert session.run("backup", str(backup)).returncode == 0
        session.run("context", cid, "--json")
        session.run("doctor")
    for args in (("doctor", "--json"), ("show", cid, "--json"), ("summaries", cid, "--json")):
        assert session.run(*args).returncode == 0
    printed = "\n".join(session.printed)
    assert "[redacted]" in printed  # the echoed key was there to leak, and was scrubbed

    slices = {key, key[8:28]}
    written = [*all_text_files(isolated_env), *(p for p in [*exports, backup] if p.exists())]
    places: dict[str, bytes] = {str(path): path.read_bytes() for path in written}
    places["stdout and stderr of every command"] = printed.encode()
    leaks = [where for where, data in places.items() if any(s.encode() in data for s in slices)]
    assert not leaks, f"the key was found in: {leaks}"
    assert any(p.endswith("tui-chat.db") for p in places)


def test_files_are_private_with_a_permissive_umask(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    session = Session(isolated_env, fake_anthropic.base_url, KEYS["plain"])
    fake_anthropic.api_key = KEYS["plain"]
    assert session.run("send", "--new", "hello").returncode == 0
    data = isolated_env / "data"
    out = tmp_path / "export.md"
    backup = tmp_path / "copy.db"
    assert session.run("export", "last", "-o", str(out)).returncode == 0
    assert session.run("backup", str(backup)).returncode == 0
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    database_files = sorted(data.iterdir())
    assert database_files, "no database written"
    for path in [*database_files, out, backup]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # tui-chat never writes a config file of its own (the key lives in the environment).
    assert not (isolated_env / "config").exists()


def test_an_existing_database_readable_by_others_is_tightened(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    session = Session(isolated_env, fake_anthropic.base_url, KEYS["plain"])
    assert session.run("list").returncode == 0
    db = isolated_env / "data" / "tui-chat.db"
    db.chmod(0o644)  # e.g. restored from a backup by hand
    assert session.run("list").returncode == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
