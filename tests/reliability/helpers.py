"""Helpers shared by the reliability tests: CLI runs (in-process and as real processes), a
standalone fake Anthropic server in its own process, and database inspection."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.cli_runner import ZYGOTE
from tui_chat.cli import main

ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "fakes" / "fake_anthropic.py"

MARKER_KEY = "sk-ant-api03-RELIABILITY-MARKER-7f3c9e1d"
"""An API key that must never be found anywhere tui-chat writes."""

CONTROL_CHARS = {chr(c) for c in range(0x20) if chr(c) not in "\n\t"} | {
    chr(c) for c in range(0x7F, 0xA0)
}
"""Characters that must never reach a terminal raw: C0 (but newline and tab), DEL and C1."""


def write_config(home: Path, text: str = "[api]\nmax_retries = 0\ntimeout = 20\n") -> Path:
    """Write ``config.toml`` under ``TUI_CHAT_HOME`` (no SDK retries by default)."""
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def cli_env(
    home: Path, base_url: str | None = None, key: str | None = MARKER_KEY
) -> dict[str, str]:
    """The environment of a tui-chat process: its own home, the fake server, the key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    # Compiled modules are kept (as a user's installed package has them): with
    # PYTHONDONTWRITEBYTECODE set every process compiled tui_chat again (0.2 s CPU each).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["TUI_CHAT_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    if key:
        env["ANTHROPIC_API_KEY"] = key
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    return env


def cli_argv(*args: str | bytes) -> list[str | bytes]:
    """The command line of ``python -m tui_chat ARGS``."""
    return [sys.executable, "-m", "tui_chat", *args]


def run_cli(
    home: Path,
    *args: str | bytes,
    base_url: str | None = None,
    key: str | None = MARKER_KEY,
    stdin: bytes | str | None = None,
    timeout: float = 120,
    fresh: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``tui-chat ARGS`` as a real process and wait for it: a fork of a process that
    imported the CLI once (:mod:`tests.integration.cli_runner`), or with ``fresh`` (and for
    arguments or input given as bytes) a new ``python -m tui_chat``."""
    env = cli_env(home, base_url, key)
    if not fresh and not isinstance(stdin, bytes) and all(isinstance(a, str) for a in args):
        return ZYGOTE.run([str(a) for a in args], env, stdin, timeout)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run(
        cli_argv(*args),
        env=env,
        input=data,
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def cli_json(home: Path, *args: str, base_url: str | None = None) -> Any:
    """Run a ``--json`` command that must succeed and decode its output."""
    done = run_cli(home, *args, "--json", base_url=base_url)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_here(
    home: Path,
    *args: str,
    base_url: str | None = None,
    key: str | None = MARKER_KEY,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``tui-chat ARGS`` in this process, in the environment :func:`run_cli` gives a process
    (its home, the fake server, the key): the same command without a process's start-up, for
    the steps of a test that are not about the process (making its conversation)."""
    saved_env = dict(os.environ)
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(cli_env(home, base_url, key))
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["tui-chat", *args], code, out.getvalue(), err.getvalue())


def import_conversation(
    home: Path, folder: Path, messages: list[dict[str, str]], title: str, **extra: object
) -> str:
    """Make a conversation with ``tui-chat import`` (in this process, :func:`run_here`) from
    ``messages``; returns its id."""
    source = folder / f"{title}-{len(messages)}.json"
    source.write_text(json.dumps({"title": title, "messages": messages, **extra}))
    done = run_here(home, "import", str(source), "--json")
    assert done.returncode == 0, done.stderr
    conversation_id: str = json.loads(done.stdout)["id"]
    return conversation_id


@dataclass
class Ran:
    """The outcome of one in-process CLI run."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """The decoded standard output."""
        assert self.code == 0, self.err
        return json.loads(self.out)


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    """Run ``tui_chat.cli.main(ARGS)`` in this process (fast: the SDK stays imported)."""
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


class StandaloneFake:
    """``tests/fakes/fake_anthropic.py`` in its own process, scripted over HTTP
    (``/_fake/push``)."""

    def __init__(self, *args: str) -> None:
        """Start the server and read its URL from the first line it prints."""
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            self.stop()
            raise RuntimeError("the standalone fake server did not start")

    def _call(self, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def push(self, **behaviour: Any) -> None:
        """Queue a behaviour (the fields of ``tests.fakes.fake_anthropic.Behaviour``)."""
        self._call("/_fake/push", behaviour)

    def reset(self) -> None:
        """Forget queued behaviours and recorded requests."""
        self._call("/_fake/reset", {})

    def open_gate(self) -> None:
        """Let the replies held by a behaviour pushed with ``gate=True`` carry on."""
        self._call("/_fake/open", {})

    def requests(self) -> list[dict[str, Any]]:
        """The recorded requests (path, body, behaviour, status)."""
        result: list[dict[str, Any]] = self._call("/_fake/requests")
        return result

    def stop(self) -> None:
        """Stop the server process (it was started here)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def integrity(path: Path) -> str:
    """``PRAGMA integrity_check`` of a database file, read with plain sqlite3."""
    con = sqlite3.connect(path, timeout=30)
    try:
        return "; ".join(str(r[0]) for r in con.execute("PRAGMA integrity_check"))
    finally:
        con.close()


def rows(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    """Rows of a query against a database file (plain sqlite3, waits for locks)."""
    con = sqlite3.connect(path, timeout=30)
    con.row_factory = sqlite3.Row
    try:
        return list(con.execute(sql, params))
    finally:
        con.close()


def execute(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    """Run one write statement against a database file."""
    con = sqlite3.connect(path, timeout=30)
    try:
        with con:
            con.execute(sql, params)
    finally:
        con.close()


def all_text_files(root: Path) -> list[Path]:
    """Every regular file under ``root``."""
    return sorted(p for p in root.rglob("*") if p.is_file())


def report(loop: str, **figures: Any) -> None:
    """Append a loop's figures to ``$TUI_CHAT_RELIABILITY_REPORT`` (and print them)."""
    line = json.dumps({"loop": loop, **figures})
    print(line)
    target = os.environ.get("TUI_CHAT_RELIABILITY_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
