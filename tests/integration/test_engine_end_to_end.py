"""The engine end to end through the real SDK and the local Anthropic-compatible server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.events import CompactionFinished, ReplyDelta
from tui_chat.engine.service import ChatService
from tui_chat.store.summaries import SummaryStart

Make = Callable[..., Awaitable[ChatService]]


def request_text(body: dict[str, Any]) -> str:
    """Everything a request sends, as one string."""
    return json.dumps({"system": body.get("system"), "messages": body.get("messages")})


async def chat(service: ChatService, cid: str, texts: list[str]) -> None:
    for text in texts:
        outcome = await service.send(cid, text)
        assert outcome.error is None, outcome.error
        await service.finish_background()


async def test_send_stores_both_messages_with_counts_and_usage(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    deltas: list[str] = []
    outcome = await service.send(
        conv.id,
        "hello world",
        lambda e: deltas.append(e.text) if isinstance(e, ReplyDelta) else None,
    )
    assert outcome.error is None
    assert "".join(deltas) == outcome.reply.text == "Reply to: hello world"
    messages = await engine_of(service).store.messages.history(conv.id)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert all(m.token_count > 0 for m in messages)
    reply = messages[1]
    assert reply.status == "complete" and reply.stop_reason == "end_turn"
    assert reply.usage is not None and reply.usage.total_input > 0
    assert (await engine_of(service).store.conversations.get(conv.id)).title == "hello world"
    # Calibration learned from the real usage.
    ratio, samples = await engine_of(service).store.calibration(conv.model)
    assert samples == 0 or ratio != 1.0


async def test_dropped_stream_is_stored_incomplete_and_retry_replaces_it(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    fake_anthropic.push_drop(after_chunks=2, text="one two three four five six seven")
    outcome = await service.send(conv.id, "tell me a story")
    assert outcome.error is not None and outcome.error.kind == "incomplete"
    assert outcome.reply.status == "incomplete" and outcome.reply.text
    stored = await engine_of(service).store.messages.history(conv.id)
    assert stored[0].text == "tell me a story"
    retried = await service.retry(conv.id)
    assert retried.error is None and retried.reply.status == "complete"
    body = fake_anthropic.message_requests[-1].body
    # The cut-off reply is not sent back: the retry request ends with the user message.
    assert body["messages"][-1]["role"] == "user"
    assert len(await engine_of(service).store.messages.history(conv.id)) == 3  # nothing deleted


@pytest.mark.parametrize("status", [401, 403, 404, 413, 429, 500, 529])
async def test_api_errors_keep_the_user_message(
    make_service: Make, fake_anthropic: FakeAnthropic, status: int
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    fake_anthropic.push_error(status)
    outcome = await service.send(conv.id, "are you there?")
    assert outcome.error is not None and outcome.error.message and outcome.error.hint
    assert outcome.reply.status == "error"
    messages = await engine_of(service).store.messages.history(conv.id)
    assert messages[0].text == "are you there?" and messages[0].status == "complete"
    assert (await service.retry(conv.id)).reply.status == "complete"


async def test_why_a_reply_failed_survives_a_restart(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    fake_anthropic.push_error(529)
    outcome = await service.send(conv.id, "hello?")
    assert outcome.error is not None
    await service.close()
    reopened = await make_service()
    failed = (await engine_of(reopened).store.messages.history(conv.id))[-1]
    assert failed.status == "error"
    assert failed.error == f"{outcome.error.message} — {outcome.error.hint}"


async def test_no_key_keeps_the_message_and_says_how(make_service: Make) -> None:
    service = await make_service(api_key=None)
    conv = await service.conversations.new()
    outcome = await service.send(conv.id, "offline hello")
    assert outcome.error is not None and outcome.error.kind == "no_key"
    assert "ANTHROPIC_API_KEY" in outcome.error.hint
    assert (await engine_of(service).store.messages.history(conv.id))[0].text == "offline hello"


async def test_cancel_keeps_partial_reply(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    fake_anthropic.push_hang(30, after_chunks=2, text="alpha beta gamma delta epsilon zeta")
    seen = asyncio.Event()

    def on_event(event: object) -> None:
        if isinstance(event, ReplyDelta):
            seen.set()

    task = asyncio.create_task(service.send(conv.id, "long answer please", on_event))
    await asyncio.wait_for(seen.wait(), 120)  # a bound for a hang, not a timing
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    messages = await engine_of(service).store.messages.history(conv.id)
    assert messages[0].text == "long answer please"
    assert messages[1].status == "incomplete" and messages[1].text


PRESET_CASES: dict[str, dict[str, Any]] = {
    # turns: segments at turns 4, 7, 10 … (seed 001).
    "turns": {},
    # threshold: > 8,000 unsummarised tokens, 6 kept verbatim (seed 000).
    "threshold": {},
    # window: 75 % of a small window (seed 002).
    "window": {"context_window": 6000},
    # hybrid: 85 % of a small window, segments + roll-up (seed 003).
    "hybrid": {"context_window": 8000},
    # session: recent window over 800 tokens (seed 004).
    "session": {},
}


def long_turn(i: int) -> str:
    return (
        f"Turn {i}: we discussed module service_{i}.py and the constant LIMIT_{i} = {i * 97}. "
        + "This sentence pads the message so that tokens accumulate quickly. " * 50
    )


@pytest.mark.parametrize("preset", list(PRESET_CASES))
async def test_each_preset_compacts_when_and_how_it_says(
    make_service: Make, fake_anthropic: FakeAnthropic, preset: str
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", preset)
    for key, value in PRESET_CASES[preset].items():
        await service.conversations.set_setting(conv.id, key, str(value))
    finished: list[int] = []
    service.subscribe(
        lambda e: finished.append(e.summary.version) if isinstance(e, CompactionFinished) else None
    )
    first_at: int | None = None
    for i in range(1, 16):
        await chat(service, conv.id, [long_turn(i)])
        if finished and first_at is None:
            first_at = i
    versions = await service.summaries.versions(conv.id)
    assert versions, f"{preset} never compacted"
    assert all(v.status == "completed" for v in versions), [(v.status, v.error) for v in versions]
    policy = service.conversations.policy_for(
        await engine_of(service).store.conversations.get(conv.id)
    )
    newest = versions[0]
    assert newest.strategy == policy.strategy
    if preset == "turns":
        # Compaction runs after the reply of turn 3 is in (the summary is in place for turn 4),
        # one segment per 3-turn block.
        assert first_at == 3
        first, second = versions[-1], versions[-2]
        assert [list(s.turns) for s in first.segments] == [[1, 3]]
        assert [list(s.turns) for s in second.segments] == [[1, 3], [4, 6]]
        assert second.parent_id == first.id
    if preset == "threshold":
        # Nothing before more than 8,000 unsummarised tokens existed.
        first = versions[-1]
        assert first.source_tokens > 8000 - 2000
    if preset == "session":
        assert len(newest.text) <= 700 + 200 or newest.fields
    built = await service.requests.context(conv.id, "next question")
    assert built.breakdown.sections["summary"] > 0
    assert built.breakdown.input_tokens <= built.breakdown.usable
    # Messages after the active coverage are sent raw.
    active = await engine_of(service).store.summaries.active(conv.id)
    assert active is not None
    raw_after = await engine_of(service).store.messages.history(
        conv.id, after_id=active.covers_to_message_id
    )
    assert set(built.sent_message_ids) >= {m.id for m in raw_after} - set(built.dropped_message_ids)


async def test_pinned_fact_survives_many_compactions_verbatim(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    fact = "The production database password rotation day is Thursday 14:30 UTC (ticket OPS-7731)."
    outcome = await service.send(conv.id, fact)
    await service.messages.pin(outcome.user.id, "rotation day")  # type: ignore[union-attr]
    for i in range(2, 20):
        await chat(service, conv.id, [long_turn(i)])
    assert len(await service.summaries.versions(conv.id)) >= 4
    await service.send(conv.id, "when do we rotate?")
    body = fake_anthropic.message_requests[-1].body
    assert fact in request_text(body)


async def test_rollback_then_send_uses_older_version_plus_raw_after(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    for i in range(1, 11):
        await chat(service, conv.id, [long_turn(i)])
    versions = await service.summaries.versions(conv.id)
    assert len(versions) >= 2
    old = versions[-1]
    await service.summaries.activate(conv.id, old.version)
    await service.send(conv.id, "after rollback")
    body = fake_anthropic.message_requests[-1].body
    sent = request_text(body)
    assert old.text.splitlines()[0][:40] in sent
    after = await engine_of(service).store.messages.history(
        conv.id, after_id=old.covers_to_message_id
    )
    for message in after[:-1]:
        if message.role == "user":
            assert message.text[:60] in sent


async def test_regenerate_makes_a_new_version_and_keeps_the_old(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    for i in range(1, 5):
        await chat(service, conv.id, [long_turn(i)])
    first = (await service.summaries.versions(conv.id))[-1]
    new = await service.summaries.regenerate(conv.id, first.version, "keep every number")
    assert new.version > first.version and new.trigger == "regenerate"
    assert new.instructions == "keep every number"
    assert new.covers_to_message_id == first.covers_to_message_id
    assert new.parent_id == first.parent_id
    summary_requests = [
        r for r in fake_anthropic.message_requests if "<summary>" in request_text(r.body)
    ]
    assert "keep every number" in request_text(summary_requests[-1].body)
    kept = await service.summaries.version(conv.id, first.version)
    assert kept.status == "completed" and kept.text == first.text


async def test_two_engines_never_make_two_versions_for_one_boundary(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    a = await make_service()
    b = await make_service()
    conv = await a.conversations.new()
    await a.conversations.set_setting(conv.id, "preset", "turns")
    for i in range(1, 4):
        await a.send(conv.id, long_turn(i))
    await engine_of(a).worker.wait()
    # Both engines race for the same boundary.
    await a.summaries.activate(conv.id, 0)
    results = await asyncio.gather(
        engine_of(a).worker.compact(conv.id, trigger="auto"),
        engine_of(b).worker.compact(conv.id, trigger="auto"),
        return_exceptions=True,
    )
    summaries = await a.summaries.versions(conv.id)
    live = [
        s for s in summaries if s.status != "failed" and s.trigger == "auto" and s.parent_id is None
    ]
    boundaries = [s.covers_to_message_id for s in live]
    assert len(boundaries) == len(set(boundaries))
    assert any(isinstance(r, CompactionError) for r in results) or len(live) == 1


async def test_killed_workers_lease_is_taken_over(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    engine_of(service).worker.poke = lambda _cid: None  # type: ignore[method-assign]  # no auto runs
    for i in range(1, 5):
        await service.send(conv.id, long_turn(i))
    messages = await engine_of(service).store.messages.history(conv.id)
    # A worker that died: its in-progress row and an expired lease.
    dead = await engine_of(service).store.summaries.begin(
        SummaryStart(
            conv.id,
            parent_id=None,
            strategy="segments",
            covers_to_message_id=messages[5].id,
            trigger="auto",
            owner="dead-worker",
            lease_seconds=-1,
        )
    )
    done = await engine_of(service).worker.maybe_compact(conv.id)
    assert done is not None and done.id == dead.id and done.status == "completed"
    assert (await engine_of(service).store.summaries.active(conv.id)).id == dead.id  # type: ignore[union-attr]


async def test_failed_summaries_are_recorded_never_activated_and_pause(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "turns")
    await service.conversations.set_setting(conv.id, "summarizer", "claude-haiku-4-5")
    engine_of(service).worker.poke = lambda _cid: None  # type: ignore[method-assign]
    for i in range(1, 5):
        await service.send(conv.id, long_turn(i))
    for _ in range(3):
        fake_anthropic.push_error(529, target="summary")
        with pytest.raises(CompactionError):
            await engine_of(service).worker.compact(conv.id, trigger="auto")
    versions = await service.summaries.versions(conv.id)
    assert [v.status for v in versions] == ["failed"] * 3
    assert all(v.text == "" and v.error for v in versions)
    assert await engine_of(service).store.summaries.active(conv.id) is None
    assert await service.summaries.paused(conv.id)
    # Paused for auto, manual still works.
    assert (await service.summaries.compact(conv.id)).status == "completed"


async def test_session_restore_sends_exactly_the_same_request(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "preset", "session")
    for i in range(1, 8):
        await chat(service, conv.id, [long_turn(i)])
    before = await service.requests.context(conv.id, "where were we?")
    await service.close()
    reopened = await make_service()
    after = await reopened.requests.context(conv.id, "where were we?")
    assert after.request == before.request


async def test_offline_extractive_compaction_without_key(make_service: Make) -> None:
    service = await make_service(api_key=None)
    conv = await service.conversations.new()
    await service.conversations.set_setting(
        conv.id, "preset", "window"
    )  # adaptive: nothing due yet
    # Build history without the API: import-style inserts.
    for i in range(1, 8):
        await engine_of(service).store.messages.add(
            conv.id,
            role="user",
            content=[{"type": "text", "text": long_turn(i)}],
            text=long_turn(i),
            token_count=engine_of(service).counter.count(long_turn(i)),
        )
        await engine_of(service).store.messages.add(
            conv.id,
            role="assistant",
            content=[{"type": "text", "text": f"ok {i}"}],
            text=f"ok {i}",
            token_count=3,
        )
    summary = await service.summaries.compact(conv.id)
    assert summary.summarizer == "extractive" and summary.status == "completed"
    assert summary.identifiers_total > 0


async def test_nothing_to_compact_is_a_clear_error(make_service: Make) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    with pytest.raises(CompactionError, match="nothing to compact"):
        await service.summaries.compact(conv.id)
