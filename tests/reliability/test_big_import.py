"""A big import stays bounded: a 60 MB one-message file ran for minutes at 2.9 GB, deaf to
SIGTERM (token counting held the event loop). A message longer than any window could take is
refused in one line; any accepted file is imported within 300 MB, its tokens counted a piece
at a time with the loop let in between, and SIGTERM mid-import ends the process leaving
nothing half-imported. Real processes; peak memory is the child's ``ru_maxrss``, the time from
SIGTERM to the exit is measured and reported, not asserted.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import time
from itertools import cycle, islice
from pathlib import Path

import pytest

from tests.reliability.helpers import ROOT, cli_argv, cli_env, report, rows, write_config
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.transfer.transfer import MAX_MESSAGE_CHARS, count_cooperatively

MEMORY_BOUND_KB = 300 * 1024

_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stderr)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def _peak(home: Path, *args: str) -> tuple[int, int, str]:
    """Run ``tui-chat ARGS`` under a small parent that reports the child's peak RSS (KB)."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *map(str, cli_argv(*args))],
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    code, peak = (int(x) for x in done.stdout.split())
    return code, peak, done.stderr


def _db(home: Path) -> Path:
    return home / "data" / "tui-chat.db"


@pytest.mark.slow  # a real process over 60 MB
def test_a_60_mb_message_is_refused_in_one_line_within_the_memory_bound(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_config(isolated_env)
    source = tmp_path / "one.json"
    # "word0 ... word999" over and over, 7.5 M words (59 MB): the 1,000 words formatted once.
    text = " ".join(islice(cycle([f"word{i}" for i in range(1000)]), 7_500_000))
    source.write_text(json.dumps({"title": "big", "messages": [{"role": "user", "content": text}]}))
    del text
    code, peak, err = _peak(isolated_env, "import", str(source))
    report("big-import", case="one 59 MB message", peak_mb=peak // 1024, code=code)
    assert code == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "messages[0]" in err and "million characters" in err
    assert peak < MEMORY_BOUND_KB, f"peak {peak // 1024} MB"


def _many(tmp_path: Path, count: int = 40) -> Path:
    """About 1 MB a message, ``count`` messages: message ``i`` is the words ``w0`` ... ``w4999``
    over and over from ``w{7i mod 5000}``, 180,000 of them (the words formatted once)."""
    source = tmp_path / "many.json"
    words = [f"w{k}" for k in range(5000)]
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(
                islice(cycle(words[i * 7 % 5000 :] + words[: i * 7 % 5000]), 180_000)
            ),
        }
        for i in range(count)
    ]
    source.write_text(json.dumps({"title": "many", "messages": messages}))
    return source


@pytest.mark.slow  # a real process over 40 MB
def test_a_big_accepted_import_stays_within_the_memory_bound(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_config(isolated_env)
    code, peak, err = _peak(isolated_env, "import", str(_many(tmp_path)))
    report("big-import", case="40 messages of 1 MB", peak_mb=peak // 1024, code=code)
    assert code == 0, err
    assert rows(_db(isolated_env), "SELECT count(*) AS n FROM messages")[0]["n"] == 40
    assert peak < MEMORY_BOUND_KB, f"peak {peak // 1024} MB"


def _began(db: Path) -> bool:
    """The import's (hidden) conversation row is there: it is counting or writing."""
    try:
        return bool(rows(db, "SELECT count(*) AS n FROM conversations")[0]["n"])
    except sqlite3.OperationalError:  # no file or no tables yet
        return False


@pytest.mark.slow  # a real process, signalled
def test_sigterm_mid_import_ends_it_leaving_nothing(isolated_env: Path, tmp_path: Path) -> None:
    write_config(isolated_env)
    source = _many(tmp_path)
    process = subprocess.Popen(
        cli_argv("import", str(source)),
        env=cli_env(isolated_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 300
        while not _began(_db(isolated_env)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the import never began"
            time.sleep(0.02)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(120)
        seconds = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
        out, err = process.communicate()
    report("big-import", case="SIGTERM while counting", seconds=round(seconds, 2), code=code)
    assert code != 0, out
    assert b"Traceback" not in err, err
    db = _db(isolated_env)
    assert rows(db, "SELECT count(*) AS n FROM conversations")[0]["n"] == 0
    assert rows(db, "SELECT count(*) AS n FROM messages")[0]["n"] == 0


async def test_counting_a_long_message_lets_the_loop_run_and_counts_the_same() -> None:
    counter = TokenCounter()
    text = "lorem ipsum dolor sit amet " * 40_000  # 1 MB
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.ensure_future(tick())
    try:
        counted = await count_cooperatively(counter, [{"type": "text", "text": text}])
    finally:
        ticker.cancel()
    assert counted == counter.count_message("user", [{"type": "text", "text": text}])
    assert ticks > 100  # the loop ran between the pieces
    assert MAX_MESSAGE_CHARS < 59_000_000
