"""API faults for replies and for summaries, through the real SDK and the local server.

For every fault a reply can meet: the user's message is stored, a cut-off reply is stored
``incomplete`` with the text that arrived (``error`` when nothing did), the engine and the CLI
say what happened and what to do, Retry asks again and works, and the engine keeps running.
For every fault a summary call can meet: the version is recorded ``failed`` with its error,
nothing becomes active, backoff holds off the next automatic attempt and three failures in a
row pause auto-compaction (manual compaction still works).
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import MARKER_KEY, execute, run_main
from tests.seam import engine_of
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.events import CompactionFailed, EngineEvent
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]

REPLY = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
"""The scripted reply; faults cut it after two three-word chunks."""
PARTIAL = "alpha beta gamma delta epsilon zeta "
TIMEOUT = 0.5
"""Client timeout in the timeout cases (seconds)."""


@dataclass(frozen=True)
class Fault:
    """One way a call can fail and what the user must be told."""

    push: Callable[[FakeAnthropic, str], object]
    kind: str
    partial: bool
    says: tuple[str, ...]
    """Words the message or hint must contain (case-insensitive): what happened, what to do."""
    options: dict[str, Any] = field(default_factory=dict)


def _refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


FAULTS: dict[str, Fault] = {
    "401": Fault(lambda f, t: f.push_error(401, target=t), "auth", False, ("401", "api_key")),
    "403": Fault(
        lambda f, t: f.push_error(403, target=t), "permission", False, ("403", "key", "model")
    ),
    "404-model": Fault(
        lambda f, t: f.push_error(404, target=t), "not_found", False, ("model", "404")
    ),
    "413": Fault(lambda f, t: f.push_error(413, target=t), "too_large", False, ("413", "compact")),
    "429-retry-after": Fault(
        lambda f, t: f.push_error(429, retry_after=7, target=t),
        "rate_limit",
        False,
        ("429", "wait 7 s"),
    ),
    "500": Fault(lambda f, t: f.push_error(500, target=t), "server", False, ("500", "retry")),
    "529": Fault(
        lambda f, t: f.push_error(529, target=t), "overloaded", False, ("overloaded", "retry")
    ),
    "timeout": Fault(
        lambda f, t: f.push_hang(30, target=t),
        "timeout",
        False,
        ("in time", "retry"),
        {"timeout": TIMEOUT},
    ),
    "timeout-mid-stream": Fault(
        lambda f, t: f.push_hang(30, after_chunks=2, text=REPLY, target=t),
        "timeout",
        True,
        ("in time", "retry"),
        {"timeout": TIMEOUT},
    ),
    "drop-mid-stream": Fault(
        lambda f, t: f.push_drop(after_chunks=2, text=REPLY, target=t),
        "incomplete",
        True,
        ("connection ended", "retry", "partial reply was kept"),
    ),
    "reset-mid-stream": Fault(
        lambda f, t: f.push_drop(after_chunks=2, abrupt=True, text=REPLY, target=t),
        "connection",
        True,
        ("connection was lost", "retry"),
    ),
    "sse-error-event": Fault(
        lambda f, t: f.push_sse_error(after_chunks=2, text=REPLY, target=t),
        "overloaded",
        True,
        ("overloaded during the reply", "retry", "partial reply was kept"),
    ),
    "malformed-sse": Fault(
        lambda f, t: f.push_malformed(after_chunks=2, text=REPLY, target=t),
        "stream_error",
        True,
        ("malformed", "retry"),
    ),
    "connection-refused": Fault(
        lambda f, t: None,
        "connection",
        False,
        ("could not reach", "network"),
        {"base_url": "REFUSED"},
    ),
}


def _options(fault: Fault, fake: FakeAnthropic) -> dict[str, Any]:
    options = dict(fault.options)
    if options.get("base_url") == "REFUSED":
        options["base_url"] = _refused_url()
    return options


def _says(text: str, words: tuple[str, ...]) -> None:
    lowered = text.lower()
    missing = [w for w in words if w.lower() not in lowered]
    assert not missing, f"{missing} not said in: {text}"


# -- replies through the engine -------------------------------------------------------------


@pytest.mark.parametrize("name", list(FAULTS))
async def test_reply_fault_keeps_everything_and_retry_works(
    make_service: Make, fake_anthropic: FakeAnthropic, name: str
) -> None:
    fault = FAULTS[name]
    options = _options(fault, fake_anthropic)
    service = await make_service(api_key=MARKER_KEY, **options)
    conv = await service.conversations.new()
    fault.push(fake_anthropic, "chat")

    outcome = await service.send(conv.id, "are you there?")

    error = outcome.error
    assert error is not None and error.kind == fault.kind, error
    assert error.message and error.hint
    _says(error.display, fault.says)
    assert MARKER_KEY not in error.display
    stored = await engine_of(service).store.messages.history(conv.id)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[0].text == "are you there?" and stored[0].status == "complete"
    reply = stored[1]
    if fault.partial:
        assert reply.status == "incomplete"
        assert reply.text == PARTIAL.rstrip() or reply.text == PARTIAL
    else:
        assert reply.status == "error" and reply.text == ""
    assert reply.stop_reason is None or reply.stop_reason.startswith("error:")

    if "base_url" in options:  # the network is back: a new engine on the same database
        service = await make_service(api_key=MARKER_KEY)
    retried = await service.retry(conv.id)
    assert retried.error is None and retried.reply.status == "complete"
    assert retried.reply.text == "Reply to: are you there?"

    # The engine keeps running: the next turn's request skips the failed reply entirely and
    # alternates roles as the API requires.
    follow = await service.send(conv.id, "and now?")
    assert follow.error is None and follow.reply.status == "complete"
    sent = fake_anthropic.message_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert PARTIAL.split()[0] not in json.dumps(sent)
    statuses = [m.status for m in await engine_of(service).store.messages.history(conv.id)]
    assert statuses == ["complete", reply.status, "complete", "complete", "complete"]


async def test_sdk_honours_retry_after_then_succeeds(
    isolated_env: Path, fake_anthropic: FakeAnthropic, make_service: Make
) -> None:
    # With SDK retries on (the default config), a 429 carrying retry-after is waited out.
    service = await make_service(max_retries=2)
    conv = await service.conversations.new()
    fake_anthropic.push_error(429, retry_after=0.2, target="chat")
    outcome = await service.send(conv.id, "patience")
    assert outcome.error is None and outcome.reply.status == "complete"
    assert [r.status for r in fake_anthropic.message_requests] == [429, 200]


# -- replies through the CLI ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(FAULTS))
def test_cli_says_what_happened_and_what_to_do(
    cli_home: Path,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    fault = FAULTS[name]
    options = _options(fault, fake_anthropic)
    config = cli_home / "config" / "config.toml"
    config.write_text(f"[api]\nmax_retries = 0\ntimeout = {options.get('timeout', 5.0)}\n")
    if "base_url" in options:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", options["base_url"])
    fault.push(fake_anthropic, "chat")

    sent = run_main(capsys, "send", "--new", "hello there")

    assert sent.code == 1
    lines = sent.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-chat: "), sent.err
    _says(lines[0], (*fault.says, "your message is saved"))
    status = "incomplete" if fault.partial else "error"
    assert f"reply status: {status}" in lines[0]
    assert MARKER_KEY not in sent.out + sent.err
    if fault.partial:
        assert sent.out.startswith(PARTIAL.rstrip())  # what arrived was shown as it streamed
    shown = run_main(capsys, "show", "last", "--json").json()["messages"]
    assert [(m["role"], m["status"]) for m in shown] == [
        ("user", "complete"),
        ("assistant", status),
    ]
    assert shown[0]["text"] == "hello there"

    # Retry from the CLI: asks again for the same user message, nothing is duplicated.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    retried = run_main(capsys, "retry", "last")
    assert retried.code == 0, retried.err
    assert retried.out.strip() == "Reply to: hello there"
    shown = run_main(capsys, "show", "last", "--json").json()["messages"]
    assert [(m["role"], m["status"]) for m in shown] == [
        ("user", "complete"),
        ("assistant", status),
        ("assistant", "complete"),
    ]
    again = run_main(capsys, "retry", "last")
    assert again.code == 1 and "nothing to retry" in again.err


# -- summaries ------------------------------------------------------------------------------

SUMMARY_FAULTS = {name: fault for name, fault in FAULTS.items() if name != "connection-refused"}


SUMMARY_POLICY = {"preset": "turns", "summarizer": "claude-haiku-4-5"}


async def _history(service: ChatService, turns: int = 4) -> str:
    """A conversation with ``turns`` complete turns, written without any API call (its policy
    comes from the config: ``SUMMARY_POLICY``)."""
    conv = await service.conversations.new()
    for i in range(1, turns + 1):
        for role, text in (("user", f"Question {i} about file_{i}.py?"), ("assistant", f"A{i}.")):
            await engine_of(service).store.messages.add(
                conv.id,
                role=role,  # type: ignore[arg-type]
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=engine_of(service).counter.count(text),
            )
    return conv.id


def _age_failures(service: ChatService) -> None:
    """Move every failure an hour into the past (as if the backoff had run out)."""
    execute(
        Path(str(engine_of(service).store.path)),
        "UPDATE summaries SET completed_at = '2000-01-01T00:00:00+00:00' WHERE status = 'failed'",
    )


async def _settle_timed_out_call(fake: FakeAnthropic) -> None:
    """After a summary call timed out: wait until the server has handled (or seen the end
    of) every connection, then take the hang off the queue if no request met it.

    The timeout counts from the call's start, so on a loaded machine it can run out before
    the request is even sent; the queued hang would then meet the next attempt instead."""
    for _ in range(2_000):  # a ceiling on a state wait (10 s), not a timing figure
        if fake.open_connections == 0:
            break
        await asyncio.sleep(0.005)
    assert fake.open_connections == 0, "the timed-out call's connection stayed open"
    if fake.pending:
        assert not fake.message_requests, "a request arrived yet the hang is still queued"
        assert fake.drop_queued() == 1


@pytest.mark.parametrize("name", list(SUMMARY_FAULTS))
async def test_summary_fault_is_recorded_never_active_and_backs_off(
    make_service: Make, fake_anthropic: FakeAnthropic, name: str
) -> None:
    fault = SUMMARY_FAULTS[name]
    compaction: dict[str, Any] = dict(SUMMARY_POLICY)
    if "timeout" in fault.options:
        compaction["summarizer_timeout"] = TIMEOUT
    service = await make_service(api_key=MARKER_KEY, compaction=compaction)
    events: list[EngineEvent] = []
    service.subscribe(events.append)
    cid = await _history(service)
    fault.push(fake_anthropic, "summary")

    with pytest.raises(CompactionError) as raised:
        await engine_of(service).worker.compact(cid, trigger="auto")

    assert MARKER_KEY not in str(raised.value)
    if "timeout" in fault.options:
        await _settle_timed_out_call(fake_anthropic)
    [failed] = await service.summaries.versions(cid)
    assert failed.status == "failed" and failed.error and failed.text == ""
    assert failed.lease_owner is None and failed.completed_at
    assert MARKER_KEY not in failed.error
    if "timeout" in fault.options:
        assert "timed out after 0.5 s" in failed.error
    else:
        assert f"({fault.kind})" in failed.error, failed.error
    assert await engine_of(service).store.summaries.active(cid) is None
    [event] = [e for e in events if isinstance(e, CompactionFailed)]
    assert event.error and not event.paused
    # Backoff: the next automatic attempt waits (no request, no new row) ...
    assert 0 < await engine_of(service).worker.backoff_remaining(cid) <= 5
    requests_before = len(fake_anthropic.message_requests)
    assert await engine_of(service).worker.maybe_compact(cid) is None
    assert len(fake_anthropic.message_requests) == requests_before
    assert len(await service.summaries.versions(cid)) == 1
    # ... and once it has run out, the next attempt works and comes into force. The 0.5 s
    # were there to meet the hang; an ordinary summary call can take longer than that on a
    # loaded machine, so the next attempt runs in an engine on the same database (where the
    # failure and its backoff live) with the default summarizer timeout.
    _age_failures(service)
    if "timeout" in fault.options:
        service = await make_service(api_key=MARKER_KEY, compaction=SUMMARY_POLICY)
    done = await engine_of(service).worker.maybe_compact(cid)
    assert done is not None and done.status == "completed" and done.text
    assert failed.error not in done.text
    assert (await engine_of(service).store.summaries.active(cid)).id == done.id  # type: ignore[union-attr]
    assert await engine_of(service).store.summaries.consecutive_failures(cid) == 0


async def test_three_mixed_failures_pause_auto_compaction_not_manual(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service(compaction=SUMMARY_POLICY)
    cid = await _history(service)
    backoffs: list[float] = []
    for fault in ("529", "drop-mid-stream", "malformed-sse"):
        SUMMARY_FAULTS[fault].push(fake_anthropic, "summary")
        with pytest.raises(CompactionError):
            await engine_of(service).worker.compact(cid, trigger="auto")
        backoffs.append(await engine_of(service).worker.backoff_remaining(cid))
        _age_failures(service)
    # The wait doubles with each failure: 5 s, 10 s, 20 s.
    assert 0 < backoffs[0] <= 5 < backoffs[1] <= 10 < backoffs[2] <= 20
    assert await service.summaries.paused(cid)
    requests_before = len(fake_anthropic.message_requests)
    assert await engine_of(service).worker.maybe_compact(cid) is None
    assert len(fake_anthropic.message_requests) == requests_before
    assert await engine_of(service).store.summaries.active(cid) is None
    manual = await service.summaries.compact(cid)
    assert manual.status == "completed" and manual.trigger == "manual"
    assert (await engine_of(service).store.summaries.active(cid)).id == manual.id  # type: ignore[union-attr]
    assert not await service.summaries.paused(cid)


async def test_failing_summarizer_never_delays_or_breaks_the_chat(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    await service.conversations.set_setting(conv.id, "summarizer", "claude-haiku-4-5")
    fake_anthropic.push_error(529, target="summary", times=None)
    paused_events: list[bool] = []
    service.subscribe(
        lambda e: paused_events.append(e.paused) if isinstance(e, CompactionFailed) else None
    )
    for i in range(1, 16):
        outcome = await service.send(conv.id, f"turn {i}: tell me about module_{i}.py")
        assert outcome.error is None and outcome.reply.status == "complete"
        await service.finish_background()
        _age_failures(service)
    summary_requests = [r for r in fake_anthropic.message_requests if r.is_summary]
    versions = await service.summaries.versions(conv.id)
    # Three attempts, three recorded failures, then the pause holds for the remaining turns.
    assert len(summary_requests) == 3
    assert [v.status for v in versions] == ["failed"] * 3
    assert paused_events == [False, False, True]
    assert await engine_of(service).store.summaries.active(conv.id) is None
    messages = await engine_of(service).store.messages.history(conv.id)
    assert len(messages) == 30 and all(m.status == "complete" for m in messages)


@pytest.mark.parametrize("name", ["401", "429-retry-after", "sse-error-event", "malformed-sse"])
def test_cli_compact_failure_is_one_clear_line_and_recorded(
    cli_home: Path, fake_anthropic: FakeAnthropic, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    for i in range(1, 3):
        assert run_main(capsys, "send", *(["--new"] if i == 1 else []), f"turn {i}").code == 0
    cid = run_main(capsys, "list", "--json").json()[0]["id"]
    assert run_main(capsys, "set", cid, "preset", "turns").code == 0
    assert run_main(capsys, "set", cid, "summarizer", "claude-haiku-4-5").code == 0
    SUMMARY_FAULTS[name].push(fake_anthropic, "summary")

    done = run_main(capsys, "compact", cid)

    assert done.code == 1
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tui-chat: compaction failed: "), done.err
    assert MARKER_KEY not in done.err
    versions = run_main(capsys, "summaries", cid, "--json").json()
    assert [(v["status"], v["active"]) for v in versions] == [("failed", False)]
    assert versions[0]["error"] and not versions[0]["text"]
    # Manual compaction is not paused: the next attempt works.
    assert run_main(capsys, "compact", cid).code == 0
    assert run_main(capsys, "summaries", cid, "--json").json()[0]["active"] is True
