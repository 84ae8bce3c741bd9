"""Damaged databases, databases from a newer tui-chat, bad config files.

A database that is damaged (interior pages overwritten, truncated, header or magic broken, not
SQLite at all) or was written by a newer schema: every command either works from what is
readable or fails with one clear line saying what to do — and the file stays byte-identical.
A config file with a wrong type, in any TOML spelling: the error names the file, the key and
the line (hypothesis over keys, values and spellings).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import MARKER_KEY, run_cli, run_main, write_config
from tui_chat.config import ConfigError, load_config
from tui_chat.core.presets import SETTING_KEYS
from tui_chat.store.migrations import LATEST_VERSION

PAGE = 4096


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _good_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    """A database of a few hundred KB made through the CLI (import: no API needed)."""
    source = tmp_path / "many.json"
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "pad " * 400}
        for i in range(200)
    ]
    source.write_text(json.dumps({"title": "big", "messages": messages}))
    assert run_main(capsys, "import", str(source)).code == 0
    db = Path(run_main(capsys, "doctor", "--json").json()["database"])
    # Fold the WAL into the main file (still a WAL database, as tui-chat makes them), so the
    # damage below hits real content.
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def _overwrite_interior(data: bytes) -> bytes:
    # Garbage over a run of pages in the middle, page 1 (header, schema root) intact.
    pages = len(data) // PAGE
    start = (pages // 3) * PAGE
    return data[:start] + bytes([0xA5]) * (PAGE * 4) + data[start + PAGE * 4 :]


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "interior-pages": _overwrite_interior,
    "truncated": lambda data: data[: len(data) // 2 + 1234],
    "header-zeroed": lambda data: data[:100] + bytes(60) + data[160:],
    "magic-broken": lambda data: b"SQLite format 2\x00" + data[16:],
    "not-sqlite": lambda data: b"PK\x03\x04" + bytes(range(256)) * 40,
}

READS: list[tuple[str, ...]] = [
    ("list",),
    ("show", "last"),
    ("search", "message 150"),
    ("export", "last", "--format", "json"),
    ("doctor",),
]
WRITES: list[tuple[str, ...]] = [
    ("send", "-c", "last", "hello"),
    ("compact", "last"),
    ("import", "IMPORT"),
]


@pytest.mark.parametrize("damage", [*DAMAGE, "newer-schema"])
def test_damaged_or_newer_database_clear_error_and_untouched(
    cli_home: Path,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    damage: str,
) -> None:
    db = _good_database(capsys, tmp_path)
    if damage == "newer-schema":
        con = sqlite3.connect(db)
        con.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
        con.close()
    else:
        db.write_bytes(DAMAGE[damage](db.read_bytes()))
    before = _digest(db)
    other = tmp_path / "one.json"
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}))
    results: dict[str, int] = {}
    # Damage found at open (every case but interior pages): every command is refused and the
    # file stays byte-identical. Interior damage is found only by the reads that touch it;
    # SQLite still writes to intact pages, so only the reads are held to "untouched" there.
    commands = READS if damage == "interior-pages" else READS + WRITES
    for command in commands:
        args = [str(other) if a == "IMPORT" else a for a in command]
        done = run_main(capsys, *args)
        results[command[0]] = done.code
        assert "Traceback" not in done.err
        if done.code == 0:
            continue
        assert done.code == 1, (command, done.err)
        if command[0] == "doctor" and not done.err:
            assert "integrity" in done.out and "ok" not in done.out.split("integrity")[1][:20]
            continue  # doctor reports the damage in its output
        lines = done.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tui-chat: "), (command, done.err)
        line = lines[0]
        assert str(db) in line, (command, line)
        if damage == "newer-schema":
            assert "newer tui-chat" in line and "upgrade" in line, line
        else:
            assert "backup" in line, line
        assert "untouched" in line or "not changed" in line, line
    assert _digest(db) == before, f"{damage}: the file changed ({results})"
    # The damage is never reported as health.
    assert results["doctor"] == 1
    if damage == "interior-pages":
        doctor = run_main(capsys, "doctor", "--json")
        assert doctor.code == 1 and json.loads(doctor.out)["integrity"] != "ok"
        for command in WRITES:  # still one clear line when they hit the damage
            args = [str(other) if a == "IMPORT" else a for a in command]
            done = run_main(capsys, *args)
            assert done.code in (0, 1) and "Traceback" not in done.err
            assert done.code == 0 or len(done.err.strip().splitlines()) == 1, done.err


# -- config files ---------------------------------------------------------------------------

WRONG: dict[str, tuple[str, str]] = {
    # key: (section, a TOML value of the wrong type)
    "model": ("chat", "5"),
    "system_prompt": ("chat", "[1, 2]"),
    "base_url": ("api", "true"),
    "timeout": ("api", '"slow"'),
    "max_retries": ("api", "2.5"),
    "db_path": ("storage", "{ a = 1 }"),
    "threshold_tokens": ("compaction", '"many"'),
    "ratio": ("compaction", "true"),
    "every_turns": ("compaction", "[3]"),
    "compression_rate": ("compaction", '"0.3x"'),
    "preset": ("compaction", "7"),
    "context_window": ('models."claude-3.5"', '"big"'),
    "max_output": ("models.claude-x", "[1]"),
}


def _filler(section: str) -> list[str]:
    """Two valid tables other than ``section`` (three lines each with the blank line)."""
    tables = {
        "chat": "[chat]\nmodel = 'm'",
        "api": "[api]\nmax_retries = 1",
        "compaction": "[compaction]\nkeep_recent = 4",
    }
    return [t for name, t in tables.items() if not section.startswith(name)][:2]


SPELLINGS: dict[str, Callable[[str, str, str], tuple[str, int]]] = {
    # (section, key, value) -> (config text, line of the key)
    "plain": lambda s, k, v: (f"# tui-chat\n\n[{s}]\n# note\n\n{k} = {v}\n", 6),
    "double-quoted-key": lambda s, k, v: (f'[{s}]\n"{k}" = {v}\n', 2),
    "single-quoted-key": lambda s, k, v: (f"\n[{s}]\n'{k}' = {v}\n", 3),
    "spaced": lambda s, k, v: (f"[ {s} ]   # c\n\n   {k}   =   {v}   # c\n", 3),
    "after-other-tables": lambda s, k, v: (
        "\n\n".join(_filler(s)) + f"\n\n[{s}]\n{k} = {v}\n",
        8,
    ),
    "dotted": lambda s, k, v: (f"# c\n{s}.{k} = {v}\n", 2),
    "inline-table": lambda s, k, v: (f"\n\n{s} = {{ {k} = {v} }}\n", 3),
}


def _check(path: Path, key: str, line: int) -> ConfigError:
    with pytest.raises(ConfigError) as raised:
        load_config(path, env={})
    message = str(raised.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert key in message
    return raised.value


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("key", list(WRONG))
def test_config_error_names_file_key_and_line(tmp_path: Path, key: str, spelling: str) -> None:
    section, value = WRONG[key]
    text, line = SPELLINGS[spelling](section, key, value)
    path = tmp_path / "config.toml"
    path.write_text(text)
    _check(path, key, line)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("[chat]\nmodel = 'm'\n\n[nonsense]\nx = 1\n", "nonsense", 4),
        ("[chat]\nmodle = 'm'\n", "modle", 2),
        ("model = 'top level'\n", "model", 1),
        ("[chat]\nmodel = 'm'\napi = 5\n", "api", 3),
        ("api = 5\n", "api", 1),
        ("[[api]]\ntimeout = 1\n", "api", 1),
        ("[models]\nclaude = 5\n", "claude", 2),
        ("[models.claude-x]\nwindow = 5\n", "window", 2),
        ("[compaction]\nno_such_setting = 1\n", "no_such_setting", 2),
        ("[api]\ntimeout = \n", "line 2", 2),
    ],
    ids=[
        "unknown-section",
        "unknown-key",
        "top-level-key",
        "key-outside-table",
        "section-not-table",
        "array-of-tables",
        "model-not-table",
        "unknown-model-key",
        "unknown-setting",
        "invalid-toml",
    ],
)
def test_config_structure_errors_name_file_and_line(
    tmp_path: Path, text: str, key: str, line: int
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path, env={})
    message = str(raised.value)
    assert message.startswith(f"{path}:") and key in message, message
    assert f"{path}:{line}: " in message or f"line {line}" in message, message


toml_values = st.one_of(
    st.booleans().map(lambda b: "true" if b else "false"),
    st.integers(-(10**6), 10**9).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=10).map(
        lambda t: json.dumps(t, ensure_ascii=False)
    ),
    st.lists(st.integers(0, 9), max_size=3).map(str),
    st.just("{ a = 1 }"),
    st.just("1979-05-27T07:32:00Z"),
)
KEYS: list[tuple[str, str]] = [
    ("chat", "model"),
    ("chat", "system_prompt"),
    ("api", "base_url"),
    ("api", "timeout"),
    ("api", "max_retries"),
    ("storage", "db_path"),
    *(("compaction", key) for key in SETTING_KEYS),
    ("models.claude-x", "context_window"),
    ("models.claude-x", "input_price"),
]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entries=st.lists(
        st.tuples(st.sampled_from(KEYS), toml_values),
        min_size=1,
        max_size=4,
        unique_by=lambda e: e[0],
    ),
    spelling=st.sampled_from(list(SPELLINGS)),
)
def test_any_config_loads_or_names_file_key_and_line(
    tmp_path: Path, entries: list[tuple[tuple[str, str], str]], spelling: str
) -> None:
    # One table per section, keys in order; the first bad key must be the one reported.
    lines: list[str] = ["# generated"]
    where: dict[tuple[str, str], int] = {}
    sections: dict[str, list[tuple[str, str]]] = {}
    for (section, key), value in entries:
        sections.setdefault(section, []).append((key, value))
    for section, items in sections.items():
        lines.append("")
        if spelling == "spaced":
            lines.append(f"[ {section} ]  # table")
        else:
            lines.append(f"[{section}]")
        for key, value in items:
            name = {"double-quoted-key": f'"{key}"', "single-quoted-key": f"'{key}'"}.get(
                spelling, key
            )
            lines.append(f"{name} = {value}")
            where[(section, key)] = len(lines)
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    try:
        load_config(path, env={})
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith(f"{path}:"), message
        reported = [(s, k) for s, k in where if f"[{s}] {k}: " in message]
        assert reported, message
        assert message.startswith(f"{path}:{where[reported[0]]}: "), message


@pytest.mark.slow  # a real process
def test_config_error_through_the_cli_is_one_line(isolated_env: Path) -> None:
    path = write_config(isolated_env, "[api]\n\ntimeout = 'slow'\n")
    for args in (("list",), ("doctor",), ("send", "--new", "x")):
        done = run_cli(isolated_env, *args)
        assert done.returncode == 1
        assert done.stderr.strip() == (
            f"tui-chat: {path}:3: [api] timeout: expected int or float, got str 'slow'"
        )


@pytest.mark.parametrize(
    "value",
    [f'["{MARKER_KEY}"]', f"{{ key = '{MARKER_KEY}' }}", "[1, 2]", "12345678901234567890"],
)
def test_config_error_never_echoes_the_api_key(tmp_path: Path, value: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[api]\napi_key = {value}\n")
    error = _check(path, "api_key", 2)
    assert MARKER_KEY not in str(error) and "12345678901234567890" not in str(error)


@pytest.mark.slow  # a real process
def test_api_key_from_config_is_never_shown(tmp_path: Path, isolated_env: Path) -> None:
    plain_key = "plain-secret-0123456789abcdef"  # not sk-… shaped: only exact scrubbing finds it
    write_config(isolated_env, f"[api]\napi_key = '{plain_key}'\nmax_retries = 0\n")
    done = run_cli(isolated_env, "doctor", "--json", key=None)
    assert done.returncode == 0 and plain_key not in done.stdout + done.stderr
    assert json.loads(done.stdout)["api_key"] == "set"
