"""A sent prompt never comes back as the draft, and a TUI that loses its terminal ends:
real processes in a real pseudo-terminal.

- a prompt typed, paused on (so it is kept as the draft) and sent never comes back to the
  composer: after the reply, ``kill -9`` or SIGHUP leaves no draft behind;
- a TUI that loses its terminal (the pty closed under it, as ``tmux kill-session`` does) ends
  within seconds whatever it was doing: starting, idle, streaming, compacting.
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import termios
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
)
from tests.reliability.test_signals_and_concurrent_senders import (
    REPLY,
    _db,
    _new_conversation,
    _slow_replies,
    _Terminal,
    _wait_for,
)

pytestmark = pytest.mark.slow  # real processes

EXIT_BOUND = 30.0
"""Generous bound for a process to end once its terminal is gone (a loaded machine)."""


def _draft(home: Path, conversation_id: str) -> str | None:
    found = rows(_db(home), "SELECT text FROM drafts WHERE conversation_id = ?", (conversation_id,))
    return str(found[0]["text"]) if found else None


def _reply_status(home: Path, conversation_id: str) -> str | None:
    """The status of the reply to the prompt sent in the test (after the imported turn)."""
    found = rows(
        _db(home),
        "SELECT status FROM messages WHERE conversation_id = ? AND role = 'assistant' "
        "AND id > (SELECT max(id) FROM messages WHERE conversation_id = ? AND role = 'user') "
        "AND (SELECT count(*) FROM messages WHERE conversation_id = ? AND role = 'user') > 1",
        (conversation_id, conversation_id, conversation_id),
    )
    return str(found[-1]["status"]) if found else None


def _streamed(home: Path, conversation_id: str) -> bool:
    """The reply is streaming and part of it is stored."""
    found = rows(
        _db(home),
        "SELECT status, length(text) AS n FROM messages WHERE conversation_id = ? "
        "AND role = 'assistant' ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    )
    return bool(found) and found[0]["status"] == "streaming" and int(found[0]["n"]) > 20


def _open(home: Path, server: StandaloneFake, cid: str) -> _Terminal:
    terminal = _Terminal(cli_argv("open", cid), cli_env(home, server.base_url))
    _wait_for(lambda: "hardening" in terminal.screen_text())
    return terminal


def _type_and_keep_as_draft(home: Path, terminal: _Terminal, cid: str, text: str) -> None:
    """Type ``text`` until the TUI has written it as the conversation's draft."""
    deadline = time.monotonic() + 120
    terminal.type(text)
    typed = time.monotonic()
    while _draft(home, cid) != text:
        # The composer takes focus once the first frame is drawn: keys typed before may be
        # lost; start again (ctrl+u clears the line) until the draft is the whole text. The
        # draft is looked for every 20 ms; the text is typed again after a quiet second.
        assert time.monotonic() < deadline, (
            f"the typed prompt was never kept as the draft ({_draft(home, cid)!r}); "
            f"the screen ends with {terminal.screen_text()[-600:]!r}"
        )
        time.sleep(0.02)
        if time.monotonic() - typed > 2.0 and _draft(home, cid) != text:
            terminal.type("\x15" + text)
            typed = time.monotonic()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP], ids=["SIGKILL", "SIGHUP"])
def test_a_sent_prompt_never_comes_back_as_the_draft(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, signum: int
) -> None:
    standalone_fake.push(kind="reply", target="chat", text="the answer", times=None)
    cid = _new_conversation(home, tmp_path)
    terminal = _open(home, standalone_fake, cid)
    try:
        _type_and_keep_as_draft(home, terminal, cid, "send me once")
        terminal.type("\r")
        _wait_for(lambda: _reply_status(home, cid) == "complete")
        sent = rows(
            _db(home),
            "SELECT count(*) AS n FROM messages WHERE conversation_id = ? AND text = ?",
            (cid, "send me once"),
        )[0]["n"]
        assert sent == 1
        terminal.process.send_signal(signum)
        terminal.process.wait(EXIT_BOUND)
    finally:
        terminal.close()
    assert _draft(home, cid) is None


def test_a_prompt_typed_before_the_tui_has_its_terminal_is_sent_once(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    standalone_fake.push(kind="reply", target="chat", text="the answer", times=None)
    cid = _new_conversation(home, tmp_path)
    terminal = _Terminal(cli_argv("open", cid), cli_env(home, standalone_fake.base_url))
    try:
        # Typed at once, while Python starts: the terminal is still in line mode, where the
        # Enter key's carriage return arrives as a line feed (a new line in the composer).
        terminal.type("typed ahead\r")
        _wait_for(lambda: _reply_status(home, cid) == "complete")
    finally:
        terminal.close()
    sent = rows(
        _db(home),
        "SELECT text FROM messages WHERE conversation_id = ? AND role = 'user' ORDER BY id",
        (cid,),
    )
    assert [r["text"] for r in sent] == ["first question", "typed ahead"]


class _Tty(_Terminal):
    """The TUI in a pseudo-terminal that is its controlling terminal (``ctty``), as in tmux or
    a terminal emulator, where a hang-up also sends SIGHUP; or only its standard streams."""

    def __init__(self, argv: list[str | bytes], env: dict[str, str], ctty: bool) -> None:
        self.master, slave = pty.openpty()
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}

        def take_terminal() -> None:  # runs in the child after setsid()
            if ctty:
                fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            argv,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=take_terminal,
        )
        os.close(slave)
        self.output = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()


def _lose_terminal(terminal: _Terminal) -> None:
    """Close the pty's controlling side, as a terminal emulator or tmux going away does."""
    os.close(terminal.master)
    terminal.master = os.open(os.devnull, os.O_RDWR)  # close() closes something harmless


def _ends(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(EXIT_BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail(f"tui-chat (pid {process.pid}) is still running after losing its terminal")


@pytest.mark.parametrize("ctty", [True, False], ids=["controlling", "streams-only"])
@pytest.mark.parametrize("moment", ["starting", "idle", "streaming"])
def test_the_tui_ends_when_its_terminal_goes_away(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, moment: str, ctty: bool
) -> None:
    _slow_replies(standalone_fake)
    cid = _new_conversation(home, tmp_path)
    terminal = _Tty(cli_argv("open", cid), cli_env(home, standalone_fake.base_url), ctty)
    try:
        if moment != "starting":
            _wait_for(lambda: "hardening" in terminal.screen_text())
        if moment == "streaming":
            _type_and_keep_as_draft(home, terminal, cid, "please stream")
            terminal.type("\r")
            _wait_for(lambda: _streamed(home, cid))
        _lose_terminal(terminal)
        code = _ends(terminal.process)
        assert code in {128 + signal.SIGHUP, -signal.SIGHUP}, code
    finally:
        terminal.close()
    if moment == "streaming":
        status = _reply_status(home, cid)
        assert status in {"incomplete", "complete"}, status
        text = rows(
            _db(home),
            "SELECT text FROM messages WHERE conversation_id = ? AND role = 'assistant' "
            "ORDER BY id DESC LIMIT 1",
            (cid,),
        )[0]["text"]
        assert REPLY.startswith(str(text))


def _conversation_to_compact(home: Path, tmp_path: Path) -> str:
    """A conversation with several finished turns, so ``ctrl+g`` has a span to fold."""
    messages = []
    for turn in range(1, 7):
        messages.append({"role": "user", "content": f"question {turn} about the harbour"})
        messages.append({"role": "assistant", "content": f"answer {turn}: the tide tables"})
    return import_conversation(home, tmp_path, messages, "hardening")


@pytest.mark.parametrize("ctty", [True, False], ids=["controlling", "streams-only"])
def test_the_tui_ends_when_its_terminal_goes_away_while_compacting(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, ctty: bool
) -> None:
    # The summary call hangs until the client goes away: the compaction is under way.
    standalone_fake.push(kind="hang", target="summary", hang_seconds=300, times=None)
    cid = _conversation_to_compact(home, tmp_path)
    terminal = _Tty(cli_argv("open", cid), cli_env(home, standalone_fake.base_url), ctty)
    try:
        _wait_for(lambda: "hardening" in terminal.screen_text())
        terminal.type("\x07")  # ctrl+g: compact now

        def summarizing() -> bool:
            return any(r.get("behaviour") == "hang" for r in standalone_fake.requests())

        _wait_for(summarizing)
        _lose_terminal(terminal)
        code = _ends(terminal.process)
        assert code in {128 + signal.SIGHUP, -signal.SIGHUP}, code
    finally:
        terminal.close()
