"""Signals, broken pipes and concurrent senders, with real processes.

- SIGTERM/SIGHUP to a CLI ``send`` or to the TUI (closing its terminal) and a reader that goes
  away (``tui-chat send … | head -c 10``) keep every character that arrived, end the reply
  ``incomplete`` (or ``complete``) and exit without a traceback;
- a reply left ``streaming`` by a process that died is ``incomplete`` on the next start, while
  a reply another live process is streaming is left alone;
- ten CLI processes sending to one conversation at once are served one after the other: each
  reply follows its own question, and a sender that has to wait says so.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.reliability.helpers import (
    StandaloneFake,
    cli_argv,
    cli_env,
    import_conversation,
    rows,
    run_cli,
    write_config,
)

pytestmark = pytest.mark.slow  # real processes

REPLY = " ".join(f"w{i:03d}" for i in range(120))
"""A slow reply: 120 one-word chunks, 40 ms apart (about 5 s of streaming)."""

_ANSI = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_].*?\x1b\\|.)")


def _db(home: Path) -> Path:
    return home / "data" / "tui-chat.db"


def _new_conversation(home: Path, tmp_path: Path, title: str = "hardening") -> str:
    messages = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
    ]
    return import_conversation(home, tmp_path, messages, title)


def _slow_replies(server: StandaloneFake) -> None:
    server.push(
        kind="reply", target="chat", text=REPLY, chunk_delay=0.04, words_per_chunk=1, times=None
    )


def _sending(
    home: Path, server: StandaloneFake, tmp_path: Path, text: str = "x"
) -> tuple[str, subprocess.Popen[bytes]]:
    """A conversation and a real ``tui-chat send`` to it, its slow reply streaming."""
    write_config(home)
    _slow_replies(server)
    cid = _new_conversation(home, tmp_path)
    process = subprocess.Popen(
        cli_argv("send", "-c", cid, text),
        env=cli_env(home, server.base_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    return cid, process


def _last_reply(home: Path, conversation_id: str) -> dict[str, object]:
    found = rows(
        _db(home),
        "SELECT text, status FROM messages WHERE conversation_id = ? AND role = 'assistant' "
        "ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    )
    return dict(found[0])


def _wait_for(condition: object, timeout: float = 60.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def _read_some(process: subprocess.Popen[bytes], wanted: int) -> bytes:
    assert process.stdout is not None
    received = b""
    while len(received) < wanted:
        chunk = os.read(process.stdout.fileno(), wanted - len(received))
        if not chunk:
            break
        received += chunk
    return received


# -- signals and pipes -----------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_a_cli_send_keeps_what_arrived(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path, signum: int
) -> None:
    home = isolated_env
    cid, process = _sending(home, standalone_fake, tmp_path, "tell me a long story")
    printed = _read_some(process, 60)  # a dozen words shown: the reply is streaming
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    printed += out
    stderr = err.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    reply = _last_reply(home, cid)
    assert reply["status"] == "incomplete", reply
    text = str(reply["text"])
    # Every character the user saw is stored: nothing of the last half second is lost.
    assert text.startswith(printed.decode().strip()) and REPLY.startswith(text), (text, printed)
    assert process.returncode != 0 and "incomplete" in stderr, stderr


def test_a_reader_that_goes_away_does_not_lose_the_reply(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    """``tui-chat send -c CONV "x" | head -c 10``: the pipe closes after ten bytes."""
    home = isolated_env
    cid, process = _sending(home, standalone_fake, tmp_path)
    head = _read_some(process, 10)
    assert process.stdout is not None
    process.stdout.close()  # what `head -c 10` does once it has its ten bytes
    assert process.stderr is not None
    err = process.stderr.read().decode("utf-8", "replace")
    assert process.wait(timeout=60) in (0, 1), err
    assert "Traceback" not in err and "Broken pipe" not in err, err
    reply = _last_reply(home, cid)
    assert reply["status"] in ("complete", "incomplete"), reply
    text = str(reply["text"])
    assert text.startswith(head.decode()) and REPLY.startswith(text), text
    assert len(text) > len(head)


def test_a_reply_left_streaming_by_a_dead_process_becomes_incomplete(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    home = isolated_env
    cid, process = _sending(home, standalone_fake, tmp_path)
    _read_some(process, 60)
    _wait_for(lambda: bool(_last_reply(home, cid)["text"]))  # a flush: the row holds text
    process.kill()
    process.communicate(timeout=60)
    assert _last_reply(home, cid)["status"] == "streaming"  # what kill -9 leaves behind
    shown = run_cli(home, "show", cid, "--json")
    assert shown.returncode == 0, shown.stderr
    reply = json.loads(shown.stdout)["messages"][-1]
    assert reply["role"] == "assistant" and reply["status"] == "incomplete", reply
    assert REPLY.startswith(reply["text"])


def test_a_reply_another_live_process_is_streaming_is_left_alone(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    # The reply holds after five words until the second process has looked, then runs on.
    standalone_fake.push(
        kind="hang",
        target="chat",
        text=REPLY,
        after_chunks=5,
        hang_seconds=600,
        gate=True,
        words_per_chunk=1,
    )
    cid = _new_conversation(home, tmp_path)
    process = subprocess.Popen(
        cli_argv("send", "-c", cid, "x"),
        env=cli_env(home, standalone_fake.base_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _read_some(process, 20)
        shown = run_cli(home, "show", cid, "--json")  # a second process starts meanwhile
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["messages"][-1]["status"] == "streaming"
    finally:
        standalone_fake.open_gate()
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    reply = _last_reply(home, cid)
    assert reply == {"text": REPLY, "status": "complete"}


class _Terminal:
    """The TUI in a real pseudo-terminal; its output is drained (and kept) by a thread."""

    def __init__(self, argv: list[str | bytes], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
        self.process = subprocess.Popen(
            argv, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self.output = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def screen_text(self, since: int = 0) -> str:
        """What the TUI has written (from byte ``since`` on), escape sequences taken out."""
        return _ANSI.sub("", bytes(self.output[since:]).decode("utf-8", "replace"))

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        os.close(self.master)
        self._reader.join(10)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_the_tui_keeps_what_arrived(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, signum: int
) -> None:
    _slow_replies(standalone_fake)
    cid = _new_conversation(home, tmp_path, title="sigtitle")
    terminal = _Terminal(cli_argv("open", cid), cli_env(home, standalone_fake.base_url))
    try:
        _wait_for(lambda: "sigtitle" in terminal.screen_text())
        terminal.type("please stream")
        # On screen first: a burst with the enter key in it would read as a paste.
        _wait_for(lambda: "please stream" in terminal.screen_text())
        terminal.type("\r")
        _wait_for(
            lambda: (
                rows(
                    _db(home),
                    "SELECT count(*) AS n FROM messages WHERE conversation_id = ? "
                    "AND role = 'assistant' AND length(text) > 20",
                    (cid,),
                )[0]["n"]
                == 1
            )  # the streaming reply, flushed at least once
        )
        terminal.process.send_signal(signum)
        terminal.process.wait(60)
    finally:
        terminal.close()
    assert "Traceback" not in terminal.screen_text()
    reply = _last_reply(home, cid)
    assert reply["status"] == "incomplete", reply
    assert str(reply["text"]) and REPLY.startswith(str(reply["text"]))


# -- concurrent senders ----------------------------------------------------------------------------


def test_concurrent_senders_take_turns(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    # Each reply echoes its question and streams for about a second.
    standalone_fake.push(
        kind="reply", target="chat", chunk_delay=0.1, words_per_chunk=1, times=None
    )
    cid = _new_conversation(home, tmp_path)
    env = cli_env(home, standalone_fake.base_url)
    questions = [f"question-{n:02d} from sender {n}" for n in range(10)]
    senders = [
        subprocess.Popen(
            cli_argv("send", "-c", cid, question),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for question in questions
    ]
    errors = []
    for sender in senders:
        _out, err = sender.communicate(timeout=300)
        assert sender.returncode == 0, err
        errors.append(err.decode())
    messages = rows(
        _db(home),
        "SELECT role, text, status FROM messages WHERE conversation_id = ? ORDER BY id",
        (cid,),
    )[2:]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 10
    for question, answer in zip(messages[::2], messages[1::2], strict=True):
        assert answer["status"] == "complete"
        assert answer["text"] == f"Reply to: {question['text']}", (question, answer)
    assert sorted(m["text"] for m in messages[::2]) == sorted(questions)
    waited = [e for e in errors if "waiting" in e]
    assert waited and all(cid in e for e in waited), errors
