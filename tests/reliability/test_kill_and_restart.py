"""``kill -9`` of real tui-chat processes at random points, then restart.

A standalone fake server (its own process, so it outlives the killed clients) streams slowly.
Each iteration starts a real ``tui-chat`` process and kills it with SIGKILL either after a
random delay or after a random number of streamed bytes, then restarts tui-chat on the same
database and checks:

- every acknowledged user message is there, intact (acknowledged: the process got past the
  commit — the API request carrying the message reached the server, which happens only after
  the commit — or it printed reply text);
- a reply cut by the kill holds a prefix of what was streamed, nothing else;
- no summary stays ``in_progress`` past its lease: the next engine takes it over (the test
  moves an orphaned lease's expiry into the past instead of waiting out its 90 s);
- ``PRAGMA integrity_check`` is ``ok``, and the conversation still works afterwards.

``TUI_CHAT_CRASH_ITERATIONS`` sets the number of kills per loop (default 5; the full run in
``RESULTS.md`` uses 50). ``TUI_CHAT_CRASH_SEED`` replays a run. With
``TUI_CHAT_RELIABILITY_REPORT=FILE`` each loop appends its figures to FILE as a JSON line.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import (
    StandaloneFake,
    cli_argv,
    cli_env,
    execute,
    import_conversation,
    integrity,
    report,
    rows,
    run_cli,
    write_config,
)
from tests.seam import engine_of
from tui_chat.core.models import Conversation, Message
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.service import ChatService
from tui_chat.store.owners import new_owner
from tui_chat.store.summaries import SummaryStart

ITERATIONS = int(os.environ.get("TUI_CHAT_CRASH_ITERATIONS", "5"))
SEED = int(os.environ.get("TUI_CHAT_CRASH_SEED", str(random.randrange(2**32))))

REPLY = " ".join(f"w{i:03d}" for i in range(80))
"""The slow reply: 80 one-word chunks, 25 ms apart (about 2 s of streaming)."""


SLOW_SUMMARIES: dict[str, Any] = {
    "kind": "reply",
    "target": "summary",
    "chunk_delay": 0.01,
    "words_per_chunk": 1,
    "times": None,
}
"""Every summary streams one word every 10 ms (about 3 s for the test's history)."""


def _import_conversation(home: Path, tmp_path: Path, turns: int) -> tuple[str, list[str]]:
    """A conversation of ``turns`` turns made by ``import`` (no API call); returns its id and
    message texts."""
    texts: list[str] = []
    messages = []
    for i in range(1, turns + 1):
        for role, text in (
            ("user", f"Turn {i}: we keep file_{i}.py and LIMIT_{i} = {i * 97}."),
            ("assistant", f"Noted turn {i}: file_{i}.py, LIMIT_{i} = {i * 97}."),
        ):
            texts.append(text)
            messages.append({"role": role, "content": text})
    return import_conversation(home, tmp_path, messages, "crash test"), texts


def _kill_at_random(
    rng: random.Random,
    argv: list[str | bytes],
    env: dict[str, str],
    max_delay: float,
    event: Callable[[], bool] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Start a process and SIGKILL it at a random point: after a random delay, after a
    random amount of streamed output, or a random time after ``event`` became true."""
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path.cwd()
    )
    assert process.stdout is not None
    mode = rng.choice(["delay", "event" if event else "output"])
    received = b""
    if mode == "delay":
        time.sleep(rng.uniform(0, max_delay))  # the random kill point itself
    elif mode == "output":
        # Wait for a random number of streamed bytes (or the end of the output).
        wanted = rng.randint(1, len(REPLY))
        fd = process.stdout.fileno()
        while len(received) < wanted:
            chunk = os.read(fd, wanted - len(received))
            if not chunk:
                break
            received += chunk
    else:
        assert event is not None
        while process.poll() is None and not event():
            time.sleep(0.02)  # polling the server for the condition
        time.sleep(rng.uniform(0, max_delay * 0.6))
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, process.returncode, received + out, err)


def _summary_requests(server: StandaloneFake) -> int:
    return sum(1 for r in server.requests() if "<summary>" in json.dumps(r["body"]))


def _seen_by_server(server: StandaloneFake, marker: str) -> bool:
    return any(
        marker in json.dumps(r["body"]) for r in server.requests() if r["path"] == "/v1/messages"
    )


def _check_messages(
    home: Path, cid: str, acknowledged: set[str], texts: list[str], context: str
) -> dict[str, Any]:
    """Restart tui-chat (``show --json``) and check every message; returns the messages."""
    shown = run_cli(home, "show", cid, "--json")
    assert shown.returncode == 0, f"{context}: {shown.stderr}"
    assert "Traceback" not in shown.stderr
    messages = json.loads(shown.stdout)["messages"]
    user_texts = [m["text"] for m in messages if m["role"] == "user"]
    missing = [a for a in sorted(acknowledged) if a not in user_texts]
    assert not missing, f"{context}: acknowledged messages lost: {missing}"
    assert [m["text"] for m in messages[: len(texts)]] == texts, f"{context}: history changed"
    for m in messages:
        if m["role"] == "user":
            assert m["status"] == "complete", context
        else:
            assert m["status"] in ("complete", "streaming", "incomplete", "error"), context
            if m["text"] and not m["text"].startswith("Noted turn"):
                assert REPLY.startswith(m["text"]) or m["text"].startswith("Reply to:"), (
                    f"{context}: reply holds text that was never streamed: {m['text'][:80]!r}"
                )
    return {"messages": messages}


def _check_store(db: Path, context: str) -> int:
    """Integrity, and no orphaned lease left once its expiry has passed. Returns how many
    in-progress rows the kill left (their leases are then expired for the next engine)."""
    assert integrity(db) == "ok", context
    in_progress = rows(
        db, "SELECT id, lease_expires_at FROM summaries WHERE status = 'in_progress'"
    )
    for row in in_progress:
        # A finite lease, at most the worker's lease length ahead.
        assert row["lease_expires_at"] is not None
        assert row["lease_expires_at"] <= time.time() + 91, context
    active = rows(
        db,
        "SELECT s.status, s.text FROM conversations c JOIN summaries s "
        "ON s.id = c.active_summary_id",
    )
    for row in active:
        assert row["status"] == "completed" and row["text"], f"{context}: bad active version"
    if in_progress:
        # Fast-forward the orphaned lease instead of waiting 90 s.
        execute(
            db,
            "UPDATE summaries SET lease_expires_at = ? WHERE status = 'in_progress'",
            (time.time() - 1,),
        )
    return len(in_progress)


@pytest.mark.slow  # a real process
def test_kill_9_while_streaming(
    home: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    db = home / "data" / "tui-chat.db"
    standalone_fake.push(
        kind="reply", target="chat", text=REPLY, chunk_delay=0.025, words_per_chunk=1, times=None
    )
    cid, history = _import_conversation(home, tmp_path, 2)
    env = cli_env(home, standalone_fake.base_url)
    acknowledged: set[str] = set()
    phases: Counter[str] = Counter()
    for i in range(ITERATIONS):
        marker = f"message {i} {uuid.uuid4().hex[:8]}"
        context = f"iteration {i} (seed {SEED})"
        done = _kill_at_random(rng, cli_argv("send", "-c", cid, marker), env, 3.5)
        seen = _seen_by_server(standalone_fake, marker)
        if done.returncode >= 0:
            assert done.returncode == 0, f"{context}: {done.stderr.decode()}"
            phase = "finished before the kill"
        elif done.stdout:
            phase = "killed while streaming"
        elif seen:
            phase = "killed after the commit, before the first token"
        else:
            phase = "killed before the request (start-up or commit)"
        phases[phase] += 1
        if seen or done.stdout:
            acknowledged.add(marker)
        _check_messages(home, cid, acknowledged, history, context)
        _check_store(db, context)

    # After all the kills the conversation still works: the history (with cut-off replies and
    # unanswered messages) makes a request the API accepts.
    final = run_cli(home, "send", "-c", cid, "still there?", base_url=standalone_fake.base_url)
    assert final.returncode == 0, final.stderr
    assert final.stdout.strip() == REPLY
    doctor = json.loads(run_cli(home, "doctor", "--json").stdout)
    assert doctor["integrity"] == "ok"
    messages = _check_messages(home, cid, acknowledged, history, "final")["messages"]
    cut = sum(1 for m in messages if m["role"] == "assistant" and m["status"] != "complete")
    report(
        "kill -9 while streaming",
        seed=SEED,
        iterations=ITERATIONS,
        phases=dict(phases),
        acknowledged=len(acknowledged),
        lost=0,
        cut_replies_kept=cut,
        integrity=doctor["integrity"],
    )


@pytest.mark.slow  # a real process
def test_kill_9_while_compacting(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    rng = random.Random(SEED + 1)
    home = isolated_env
    # Compact everything but the last 6 messages as soon as 100 tokens are unsummarised.
    write_config(
        home,
        '[api]\nmax_retries = 0\ntimeout = 20\n[compaction]\npreset = "threshold"\n'
        'threshold_tokens = 100\nsummarizer = "claude-haiku-4-5"\n',
    )
    db = home / "data" / "tui-chat.db"
    # Chat replies are quick; every summary streams slowly (one word every 10 ms, about 3 s).
    standalone_fake.push(**SLOW_SUMMARIES)
    cid, history = _import_conversation(home, tmp_path, 30)
    env = cli_env(home, standalone_fake.base_url)
    acknowledged: set[str] = set()
    phases: Counter[str] = Counter()
    orphaned = taken_over = 0
    for i in range(ITERATIONS):
        context = f"iteration {i} (seed {SEED + 1})"
        # Always something to fold: no summary in force (as `rollback CONV 0` does), so the
        # whole history is raw again.
        execute(db, "UPDATE conversations SET active_summary_id = NULL")
        before = {r["id"] for r in rows(db, "SELECT id FROM summaries")}
        if i % 2 == 0:
            argv = cli_argv("compact", cid)
            marker = None
        else:
            # A send whose reply triggers an automatic compaction that the CLI waits for.
            marker = f"message {i} {uuid.uuid4().hex[:8]}"
            argv = cli_argv("send", "-c", cid, marker)
        asked = _summary_requests(standalone_fake)
        done = _kill_at_random(
            rng, argv, env, 4.0, lambda asked=asked: _summary_requests(standalone_fake) > asked
        )
        if marker is not None and (_seen_by_server(standalone_fake, marker) or done.stdout):
            acknowledged.add(marker)
        new = rows(
            db,
            "SELECT id, status FROM summaries WHERE id NOT IN (%s)"
            % (",".join(str(x) for x in before) or "0"),
        )
        if done.returncode >= 0:
            phase = "finished before the kill"
        elif any(r["status"] == "in_progress" for r in new):
            phase = "killed during the summary call"
        else:
            phase = "killed before the compaction began"
        phases[phase] += 1
        _check_messages(home, cid, acknowledged, history, context)
        left = _check_store(db, context)
        orphaned += left
        if left:
            # The next engine takes the orphaned version over and finishes it (quickly: the
            # slow summaries are switched off for this run).
            standalone_fake.reset()
            resumed = run_cli(home, "compact", cid, base_url=standalone_fake.base_url)
            standalone_fake.push(**SLOW_SUMMARIES)
            assert resumed.returncode == 0, f"{context}: {resumed.stderr}"
            stuck = rows(db, "SELECT id FROM summaries WHERE status = 'in_progress'")
            assert not stuck, f"{context}: a summary stayed in progress past its lease"
            taken_over += left

    execute(db, "UPDATE conversations SET active_summary_id = NULL")
    standalone_fake.reset()
    final = run_cli(home, "compact", cid, base_url=standalone_fake.base_url)
    assert final.returncode == 0, final.stderr
    assert not rows(db, "SELECT id FROM summaries WHERE status = 'in_progress'")
    assert integrity(db) == "ok"
    statuses = Counter(r["status"] for r in rows(db, "SELECT status FROM summaries"))
    report(
        "kill -9 while compacting",
        seed=SEED,
        iterations=ITERATIONS,
        phases=dict(phases),
        orphaned_leases=orphaned,
        taken_over=taken_over,
        summaries=dict(statuses),
        acknowledged=len(acknowledged),
        lost=0,
        integrity="ok",
    )


async def _four_turns_no_summary(
    make_service: Callable[..., Awaitable[ChatService]],
) -> tuple[ChatService, Conversation, list[Message]]:
    """Four answered turns and no summary in force (the setting of the lease tests)."""
    service = await make_service(compaction={"preset": "turns"})
    conv = await service.conversations.new()
    for i in range(1, 5):
        outcome = await service.send(conv.id, f"turn {i} about file_{i}.py")
        assert outcome.error is None
    await service.finish_background()
    await service.summaries.activate(conv.id, 0)
    messages = await engine_of(service).store.messages.history(conv.id)
    return service, conv, messages


@pytest.mark.slow  # a real process
async def test_a_lease_left_by_a_dead_process_is_taken_over_before_it_expires(
    make_service: Callable[..., Awaitable[ChatService]], fake_anthropic: FakeAnthropic
) -> None:
    service, conv, messages = await _four_turns_no_summary(make_service)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process of this host that has ended: its pid names nobody now
    live_owner, dead_owner = new_owner(), f"{socket.gethostname()}:{gone.pid}:dead0000"
    for owner in (live_owner, dead_owner):
        orphan = await engine_of(service).store.summaries.begin(
            SummaryStart(
                conv.id,
                parent_id=None,
                strategy="segments",
                covers_to_message_id=messages[3].id,
                trigger="manual",
                owner=owner,
                lease_seconds=3600,
            )
        )
        if owner == live_owner:  # a live owner (this process) keeps its lease
            with pytest.raises(CompactionError, match="already running"):
                await service.summaries.compact(conv.id)
            execute(
                Path(str(engine_of(service).store.path)),
                "DELETE FROM summaries WHERE id = ?",
                (orphan.id,),
            )
    await service.summaries.compact(conv.id)  # the dead owner's version is finished first
    finished = await engine_of(service).store.summaries.get(orphan.id)
    assert finished.status == "completed" and finished.covers_to_message_id == messages[3].id
    assert await engine_of(service).store.summaries.in_progress(conv.id) is None


async def test_manual_compaction_takes_over_an_expired_lease(
    make_service: Callable[..., Awaitable[ChatService]], fake_anthropic: FakeAnthropic
) -> None:
    service, conv, messages = await _four_turns_no_summary(make_service)
    # A worker died holding the lease over the first two turns.
    dead = await engine_of(service).store.summaries.begin(
        SummaryStart(
            conv.id,
            parent_id=None,
            strategy="segments",
            covers_to_message_id=messages[3].id,
            trigger="manual",
            owner="killed-process",
            lease_seconds=60,
        )
    )
    # While the lease is live nobody else may compact ...
    with pytest.raises(CompactionError, match="already running"):
        await service.summaries.compact(conv.id)
    assert (await engine_of(service).store.summaries.get(dead.id)).status == "in_progress"
    # ... once it has expired the next manual compaction finishes the orphan first.
    execute(
        Path(str(engine_of(service).store.path)),
        "UPDATE summaries SET lease_expires_at = ? WHERE id = ?",
        (time.time() - 1, dead.id),
    )
    await service.summaries.compact(conv.id)
    finished = await engine_of(service).store.summaries.get(dead.id)
    assert finished.status == "completed" and finished.text
    assert finished.covers_to_message_id == messages[3].id
    assert await engine_of(service).store.summaries.in_progress(conv.id) is None
    active = await engine_of(service).store.summaries.active(conv.id)
    assert active is not None and active.status == "completed"
