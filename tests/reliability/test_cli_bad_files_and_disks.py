"""Bad settings, existing files and symlinks, failed writes, read-only and full disks, a
broken search index and an oversized message, through the ``tui-chat`` command.
What is about a process (a file-size limit, dropped
capabilities, a start-up on what was left) runs in a real one, and each sweep runs one case's
commands in real processes; the other steps run the same command in the test's process
(``run_here``: no start-up to pay).

- 6: an import with invalid settings is refused whole, with one clear line;
- 8: exports and backups never clobber a file, never follow a symlink, are 0600, and leave
  nothing behind when the disk fills up (a real file-size limit on the process);
- 9: a read-only directory or file, a database path that is a directory and a full disk each
  get one line naming the path and what to do; reading still works read-only;
- 10: a dropped or damaged search index does not stop sending; ``doctor`` finds it and
  ``doctor --repair`` rebuilds it from the messages, which stay untouched;
- 11: a message bigger than the usable window is refused before any request, and kept.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.reliability.helpers import (
    ROOT,
    StandaloneFake,
    cli_argv,
    cli_env,
    execute,
    import_conversation,
    rows,
    run_cli,
    run_here,
    write_config,
)

pytestmark = pytest.mark.slow  # real processes


def _db(home: Path) -> Path:
    return home / "data" / "tui-chat.db"


def _import(home: Path, tmp_path: Path, messages: list[dict[str, str]], **extra: object) -> str:
    return import_conversation(home, tmp_path, messages, "hardening", **extra)


TWO_TURNS = [
    {"role": "user", "content": "where is the parser?"},
    {"role": "assistant", "content": "the parser lives in src/parser_main.py"},
    {"role": "user", "content": "and the zebra config?"},
    {"role": "assistant", "content": "zebra settings are in zebra.toml"},
]


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _file_size_limit(limit: int) -> Callable[[], None]:
    """A child's writes past ``limit`` bytes fail (EFBIG), as on a full disk."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _run_limited(
    home: Path, limit: int, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args),
        env=cli_env(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=_file_size_limit(limit),
    )


# -- settings on import ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"preset": "nope", "context_window": -1}, "preset"),
        ({"context_window": -1}, "context_window"),
        ({"no_such_key": 1}, "no_such_key"),
        ("not an object", "settings"),
    ],
)
def test_import_with_invalid_settings_is_refused_whole(
    home: Path, tmp_path: Path, settings: object, named: str
) -> None:
    _import(home, tmp_path, TWO_TURNS)
    exported = run_here(home, "export", "last", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    data = json.loads(exported.stdout)
    data["conversation"]["settings"] = settings
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    before = rows(_db(home), "SELECT count(*) AS n FROM conversations")[0]["n"]
    refuse = run_cli if named == "preset" else run_here  # one case in a real process
    done = refuse(home, "import", str(edited))
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(edited) in line and named in line and "nothing was imported" in line, line
    assert rows(_db(home), "SELECT count(*) AS n FROM conversations")[0]["n"] == before
    # Start-up still works: the last conversation is the one that was there before.
    assert run_cli(home, "show", "last").returncode == 0


def test_a_conversation_with_invalid_settings_still_opens_and_says_how_to_fix_it(
    home: Path, tmp_path: Path
) -> None:
    cid = _import(home, tmp_path, TWO_TURNS)
    # As an import made by an older tui-chat left it.
    execute(
        _db(home),
        "UPDATE conversations SET settings = ? WHERE id = ?",
        (json.dumps({"preset": "nope", "context_window": -1}), cid),
    )
    for args in (("show", cid), ("context", cid), ("list",)):
        done = run_here(home, *args)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    context = run_cli(home, "context", cid)  # a real process says it too
    assert context.returncode == 0 and "Traceback" not in context.stderr, context.stderr
    assert cid in context.stderr and "preset" in context.stderr, context.stderr
    assert f"tui-chat set {cid} preset" in context.stderr, context.stderr
    fixed = run_here(home, "set", cid, "preset", "window")
    assert fixed.returncode == 0, fixed.stderr
    assert run_here(home, "context", cid).stderr == ""


# -- exports and backups ---------------------------------------------------------------------------


@pytest.fixture
def exported_home(isolated_env: Path, tmp_path: Path) -> tuple[Path, str]:
    write_config(isolated_env)
    return isolated_env, _import(isolated_env, tmp_path, TWO_TURNS)


@pytest.mark.parametrize("command", ["export", "backup"])
def test_an_existing_file_is_refused_unless_force(
    exported_home: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = exported_home
    target = tmp_path / "existing.out"
    target.write_text("keep me")
    target.chmod(0o644)
    args = ("export", cid, "-o", str(target)) if command == "export" else ("backup", str(target))
    refused = run_here(home, *args)
    assert refused.returncode == 1
    line = _one_line(refused.stderr)
    assert str(target) in line and "--force" in line, line
    assert target.read_text() == "keep me"
    forced = run_cli(home, *args, "--force")
    assert forced.returncode == 0, forced.stderr
    assert target.read_bytes() != b"keep me" and _mode(target) == 0o600
    if command == "backup":
        assert rows(target, "SELECT count(*) AS n FROM messages")[0]["n"] == 4
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_symlink_is_never_followed(
    exported_home: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    home, cid = exported_home
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.out"
    link.symlink_to(victim)
    args = ("export", cid, "-o", str(link)) if command == "export" else ("backup", str(link))
    assert run_here(home, *args).returncode == 1
    assert victim.read_text() == "precious" and link.is_symlink()
    forced = run_cli(home, *args, "--force")
    assert forced.returncode == 0, forced.stderr
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and _mode(link) == 0o600


@pytest.mark.parametrize("command", ["export", "backup"])
def test_a_failed_write_leaves_nothing_and_keeps_the_old_file(
    home: Path, tmp_path: Path, command: str
) -> None:
    big = "lorem ipsum dolor " * 8_000  # about 140 KB: the output cannot fit under the limit
    cid = _import(home, tmp_path, [{"role": "user", "content": big}])
    out = tmp_path / "out"
    out.mkdir()
    old = out / "old.out"
    old.write_text("the previous export, complete")
    args = ("export", cid, "-o", str(old)) if command == "export" else ("backup", str(old))
    done = _run_limited(home, 96 * 1024, *args, "--force")
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(old) in line, line
    assert old.read_text() == "the previous export, complete"
    assert [p.name for p in out.iterdir()] == ["old.out"]
    # Into a folder that does not exist: one line, nothing created.
    missing = tmp_path / "nowhere" / "new.out"
    args = ("export", cid, "-o", str(missing)) if command == "export" else ("backup", str(missing))
    done = run_here(home, *args)
    assert done.returncode == 1 and str(missing.parent) in _one_line(done.stderr)
    assert not missing.parent.exists()


# -- read-only places, a directory as the database, a full disk ------------------------------------


class _User:
    """Runs tui-chat without the capabilities that let root ignore permission bits.

    As root, ``setpriv`` drops ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` from the
    child, so a 0555 directory or a 0444 file is read-only for it as for any user.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("root without setpriv ignores permission bits")
            self.prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.prefix, *map(str, cli_argv(*args))],
            env=cli_env(self.home),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )


@pytest.fixture
def user_home(isolated_env: Path, tmp_path: Path) -> Iterator[_User]:
    """A home with one imported conversation; permissions are restored at the end."""
    write_config(isolated_env)
    _import(isolated_env, tmp_path, TWO_TURNS)
    try:
        yield _User(isolated_env)
    finally:
        for path in [isolated_env, *isolated_env.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o700 if path.is_dir() else 0o600)


def _reads_still_work(user: _User) -> None:
    listed = user.run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [c["title"] for c in json.loads(listed.stdout)] == ["hardening"]
    shown = user.run("show", "last", "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)["messages"]) == 4
    found = user.run("search", "zebra", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 2, found.stderr


def test_a_read_only_directory_is_not_called_damaged(user_home: _User) -> None:
    data = user_home.home / "data"
    data.chmod(0o555)
    _reads_still_work(user_home)
    done = user_home.run("send", "-c", "last", "hello")
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(data) in line and "read-only" in line, line
    assert "damaged" not in line and "Move it aside" not in line, line


def test_a_read_only_database_file_says_so(user_home: _User) -> None:
    db = _db(user_home.home)
    db.chmod(0o444)
    _reads_still_work(user_home)
    done = user_home.run("send", "-c", "last", "hello")
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(db) in line and "read-only" in line and "chmod" in line, line


def test_a_database_path_that_is_a_directory_is_one_clear_line(
    isolated_env: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "folder.db"
    folder.mkdir()
    for args, run in (
        (("list",), run_cli),
        (("send", "--new", "x"), run_here),
        (("doctor",), run_here),
    ):
        done = run(isolated_env, "--db", str(folder), *args)
        assert done.returncode == 1
        line = _one_line(done.stderr)
        assert str(folder) in line and "is a directory" in line, line


def test_a_full_disk_names_the_database(home: Path, tmp_path: Path) -> None:
    _import(home, tmp_path, TWO_TURNS)
    big = "a full disk " * 20_000
    # Room for the shared-memory file and a little more, not for this message.
    limit = _db(home).stat().st_size + 16 * 1024
    done = _run_limited(home, limit, "send", "-c", "last", "-", stdin=big)
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert str(_db(home)) in line and "full" in line, line
    assert run_here(home, "show", "last").returncode == 0


# -- the search index ------------------------------------------------------------------------------


def _messages(db: Path) -> list[tuple[object, ...]]:
    return [tuple(r) for r in rows(db, "SELECT * FROM messages ORDER BY id")]


@pytest.mark.parametrize("damage", ["dropped", "damaged"])
def test_a_broken_search_index_is_found_and_rebuilt(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, damage: str
) -> None:
    cid = _import(home, tmp_path, TWO_TURNS)
    cli = run_cli if damage == "dropped" else run_here  # one case in real processes
    db = _db(home)
    if damage == "dropped":
        execute(db, "DROP TABLE messages_fts")
    else:
        execute(db, "UPDATE messages_fts_data SET block = x'0102030405060708' WHERE id > 10")
    # Sending does not depend on the index.
    sent = cli(home, "send", "-c", cid, "zebra again?", base_url=standalone_fake.base_url)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.strip() == "Reply to: zebra again?"
    # Search says what is wrong and what to do.
    found = cli(home, "search", "zebra")
    assert found.returncode == 1
    assert "doctor --repair" in _one_line(found.stderr), found.stderr
    doctor = cli(home, "doctor", "--json")
    assert doctor.returncode == 1
    assert "doctor --repair" in json.loads(doctor.stdout)["search_index"]
    before = _messages(db)
    repaired = cli(home, "doctor", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert _messages(db) == before
    assert json.loads(cli(home, "doctor", "--json").stdout)["search_index"] == "ok"
    found = cli(home, "search", "zebra", "--json")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)) == 4  # two imported, the new question, its reply
    # And the rebuilt index follows new messages again.
    cli(home, "send", "-c", cid, "quokka?", base_url=standalone_fake.base_url)
    assert len(json.loads(cli(home, "search", "quokka", "--json").stdout)) == 2


def test_recall_with_a_dropped_index_still_sends(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    cid = _import(home, tmp_path, TWO_TURNS * 5)
    assert run_here(home, "set", cid, "recall", "on").returncode == 0
    compacted = run_here(home, "compact", cid, base_url=standalone_fake.base_url)
    assert compacted.returncode == 0, compacted.stderr
    execute(_db(home), "DROP TABLE messages_fts")
    sent = run_here(home, "send", "-c", cid, "zebra?", base_url=standalone_fake.base_url)
    assert sent.returncode == 0, sent.stderr


# -- a message bigger than the window --------------------------------------------------------------


def test_a_message_bigger_than_the_window_is_refused_and_kept(
    isolated_env: Path, standalone_fake: StandaloneFake
) -> None:
    home = isolated_env
    write_config(
        home,
        "[api]\nmax_retries = 0\ntimeout = 20\n"
        '[models."claude-small"]\ncontext_window = 8000\nmax_output = 1000\n',
    )
    created = run_here(
        home,
        "send",
        "--new",
        "--model",
        "claude-small",
        "hello",
        base_url=standalone_fake.base_url,
    )
    assert created.returncode == 0, created.stderr
    standalone_fake.reset()
    huge = "".join(f"token{n} " for n in range(20_000))
    done = run_cli(home, "send", "-c", "last", "-", stdin=huge, base_url=standalone_fake.base_url)
    assert done.returncode == 1
    line = _one_line(done.stderr)
    assert "7,000" in line and "tokens" in line, line  # the usable window: 8,000 - 1,000
    assert "draft" in line, line
    assert standalone_fake.requests() == []
    # Nothing half-stored; the text is the conversation's draft (the TUI's composer shows it).
    texts = [r["text"] for r in rows(_db(home), "SELECT text FROM messages")]
    assert huge not in texts and len(texts) == 2
    drafts = rows(_db(home), "SELECT text FROM drafts")
    assert [r["text"] for r in drafts] == [huge]
