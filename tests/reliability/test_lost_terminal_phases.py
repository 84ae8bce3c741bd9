"""Closing the terminal ends the TUI by its own clean path in every phase, the reply so far
saved ``incomplete``: a real process in a real pseudo-terminal whose controlling side is closed
(as ``tmux kill-session`` does) during start-up, while a reply streams, and while a reply
streams under each dialog or screen (export, settings, search, the command palette, the context
preview). The main thread blocked in Textual's output queue (its writer thread had died on the
dead terminal's first failed write) until the 10 s watchdog ended the process, leaving the reply
``streaming``; then, under a dialog, the stop took 1.8-3.7 s drawing frames (each one the whole
screen below, dimmed) and a full garbage collection as the views were unmounted. Waits are on
the process's exit with a generous bound; the time from the hang-up to the exit is measured and
reported, not asserted. The process's last-resort deadline is put off (``fixtures/no_deadline``),
so only the clean path can end it within the bound.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.reliability.helpers import StandaloneFake, cli_argv, cli_env, report, rows
from tests.reliability.test_lost_terminal_and_drafts import (
    _db,
    _ends,
    _lose_terminal,
    _reply_status,
    _streamed,
    _Tty,
    _type_and_keep_as_draft,
)
from tests.reliability.test_signals_and_concurrent_senders import _new_conversation, _wait_for

pytestmark = pytest.mark.slow  # real processes

NO_DEADLINE = Path(__file__).parent / "fixtures" / "no_deadline"


def _env(home: Path, base_url: str) -> dict[str, str]:
    env = cli_env(home, base_url)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(NO_DEADLINE), env.get("PYTHONPATH")]))
    env["TUI_CHAT_TEST_NO_DEADLINE"] = "1"
    return env


LONG_REPLY = " ".join(f"w{i:04d}" for i in range(2_000))
"""A reply that streams for over a minute (2,000 one-word chunks, 40 ms apart)."""


def _last_reply(home: Path, cid: str) -> str:
    found = rows(
        _db(home),
        "SELECT text FROM messages WHERE conversation_id = ? AND role = 'assistant' "
        "ORDER BY id DESC LIMIT 1",
        (cid,),
    )
    return str(found[0]["text"])


DIALOGS = {
    "export-dialog": ("\x13", "xport"),  # ctrl+s
    "settings": ("\x1bOR", "Pick a model"),  # f3
    "search": ("\x06", "words to find"),  # ctrl+f
    "palette": ("\x10", "Search for commands"),  # ctrl+p
    "context-preview": ("\x0f", "Readable"),  # ctrl+o
}
"""Each dialog or screen opened over the streaming reply: its key and a text it shows."""


@pytest.mark.parametrize("ctty", [True, False], ids=["controlling", "streams-only"])
@pytest.mark.parametrize("phase", ["starting", "streaming", *DIALOGS])
def test_a_lost_terminal_ends_the_tui_by_its_clean_path(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path, phase: str, ctty: bool
) -> None:
    standalone_fake.reset()
    standalone_fake.push(
        kind="reply", target="chat", text=LONG_REPLY, chunk_delay=0.04, words_per_chunk=1
    )
    cid = _new_conversation(home, tmp_path)
    terminal = _Tty(cli_argv("open", cid), _env(home, standalone_fake.base_url), ctty)
    try:
        if phase != "starting":
            _wait_for(lambda: "hardening" in terminal.screen_text())
            _type_and_keep_as_draft(home, terminal, cid, "please stream")
            terminal.type("\r")
            _wait_for(lambda: _streamed(home, cid))
        if phase in DIALOGS:
            key, shows = DIALOGS[phase]
            before = len(terminal.output)
            terminal.type(key)
            _wait_for(lambda: shows in terminal.screen_text(since=before))
        lost = time.monotonic()
        _lose_terminal(terminal)
        code = _ends(terminal.process)
        seconds = time.monotonic() - lost
    finally:
        terminal.close()
    report("lost-terminal", phase=phase, ctty=ctty, seconds=round(seconds, 2), code=code)
    assert code in {128 + signal.SIGHUP, -signal.SIGHUP}, code
    if phase != "starting":
        # Saved by the app as it stopped (the next start's repair has not run: raw rows).
        assert _reply_status(home, cid) == "incomplete"
        text = _last_reply(home, cid)
        assert text and LONG_REPLY.startswith(text) and len(text) < len(LONG_REPLY)
