"""Summaries that reuse the prompt cache, and Claude's own compaction as a summarizer,
through ``ChatService`` against the local server.

- ``claude``: the summary request repeats the preceding chat request byte for byte (system,
  messages, breakpoints), so its prefix is a cache read; each version records what its call
  cost.
- ``server``: the returned compaction block is sent back unchanged while its version is
  active and is gone after a roll back; regenerate passes instructions; an endpoint without
  the feature falls back to ``claude`` once, with a notice, and is remembered per model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, RecordedRequest
from tests.integration.test_cli import run
from tests.seam import engine_of
from tui_chat.engine.events import CompactionFinished, EngineEvent
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]
MODEL = "claude-sonnet-4-6"


def turn_text(i: int) -> str:
    return f"Turn {i}: file src/mod_{i}.py holds LIMIT_{i} = {i * 97}. " + "Padding words. " * 60


async def talk(service: ChatService, cid: str, turns: range) -> None:
    for i in turns:
        outcome = await service.send(cid, turn_text(i))
        assert outcome.error is None, outcome.error
        await service.finish_background()


async def open_chat(
    make_service: Make, standalone: str | None = None, **settings: str
) -> tuple[ChatService, str]:
    """A conversation on :data:`MODEL` with ``settings``; ``standalone``: the configured
    summarizer model (the settings are then the configuration's too: a conversation's own
    preset would set the configuration aside)."""
    if standalone:
        compaction = {**settings, "summarizer_model": standalone}
        service = await make_service(model=MODEL, compaction=compaction)
        return service, (await service.conversations.new()).id
    service = await make_service(model=MODEL)
    conversation = await service.conversations.new()
    for key, value in settings.items():
        await service.conversations.set_setting(conversation.id, key, value)
    return service, conversation.id


def dumped(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def chats(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.message_requests if not r.is_summary and not r.is_compaction]


async def test_claude_summary_continues_the_cached_chat_request(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.cache_min_tokens = 0
    # A standalone call at the chat model's own card: the cached continuation is cheaper.
    service, cid = await open_chat(
        make_service,
        preset="threshold",
        summarizer="claude",
        threshold_tokens="1000",
        standalone=MODEL,
    )
    await talk(service, cid, range(1, 8))

    summaries = [r for r in fake_anthropic.message_requests if r.is_summary]
    assert summaries, "no summary call was made"
    summary = summaries[0]
    chat = max((r for r in chats(fake_anthropic) if r.index < summary.index), key=lambda r: r.index)
    sent = chat.body["messages"]
    assert summary.body["model"] == chat.body["model"] == MODEL
    assert dumped(summary.body["system"]) == dumped(chat.body["system"])
    assert dumped(summary.body["messages"][: len(sent)]) == dumped(sent)
    assert summary.body["messages"][len(sent)]["role"] == "assistant"
    instruction = summary.body["messages"][-1]["content"][0]["text"]
    assert "<summary></summary>" in instruction and "stay verbatim" in instruction
    usage = summary.usage or {}
    marked = [i for i, m in enumerate(sent) if "cache_control" in m["content"][-1]][-1]
    prefix = fake_anthropic.input_tokens({**chat.body, "messages": sent[: marked + 1]})
    assert usage["cache_read_input_tokens"] == prefix > 0
    assert usage["cache_creation_input_tokens"] == 0

    version = (await service.summaries.versions(cid))[-1]
    # The server's summarizer follows the instruction: the span, not the instruction itself.
    assert "Turn 1:" in version.text and "tui-chat summarizer" not in version.text
    assert version.call is not None and version.call.model == MODEL
    assert version.call.cache_read_tokens == prefix
    assert version.call.output_tokens == usage["output_tokens"]
    assert version.call.cost_usd > 0


async def test_server_block_is_sent_back_unchanged_and_gone_after_rollback(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service, cid = await open_chat(
        make_service, preset="window", summarizer="extractive", keep_recent="2"
    )
    await talk(service, cid, range(1, 5))
    text_version = await service.summaries.compact(cid)
    await service.conversations.set_setting(cid, "summarizer", "server")
    await talk(service, cid, range(5, 8))
    server_version = await service.summaries.compact(cid)

    compactions = [r for r in fake_anthropic.message_requests if r.is_compaction]
    assert len(compactions) == 1 and compactions[0].headers["anthropic-beta"].startswith("compact-")
    block = server_version.compaction_block
    assert block is not None and block["type"] == "compaction"
    assert server_version.text == block["content"]
    assert block["signature"] == fake_anthropic.signature(block["content"])
    assert server_version.summarizer == f"server:{MODEL}" and server_version.call is not None
    # The parent's summary (a text version) was in the compaction request's memory block.
    assert text_version.text.split("\n")[0][:30] in dumped(compactions[0].body["system"])

    await talk(service, cid, range(8, 9))
    first = chats(fake_anthropic)[-1].body["messages"][0]
    assert dumped(first) == dumped({"role": "assistant", "content": [block]})
    assert chats(fake_anthropic)[-1].headers["anthropic-beta"] == "compact-2026-09-04"

    await service.summaries.activate(cid, text_version.version)
    await talk(service, cid, range(9, 10))
    after = chats(fake_anthropic)[-1].body
    assert "compaction" not in dumped(after["messages"])
    assert text_version.text.split("\n")[0][:30] in dumped(after["system"])

    regenerated = await service.summaries.regenerate(
        cid, server_version.version, "keep every LIMIT"
    )
    assert fake_anthropic.last.body["compaction"] == {
        "type": "summarize",
        "instructions": "keep every LIMIT",
    }
    assert regenerated.compaction_block is not None
    assert regenerated.text.startswith("Focus: keep every LIMIT")


@pytest.mark.parametrize("endpoint", ["refuses", "ignores"])
async def test_server_falls_back_to_claude_once_and_remembers(
    make_service: Make, fake_anthropic: FakeAnthropic, endpoint: str
) -> None:
    # An endpoint that refuses the parameter (400), or a gateway that drops it and answers
    # with a plain reply (200, stop_reason end_turn, no compaction block): both fall back.
    if endpoint == "refuses":
        fake_anthropic.compaction_endpoint = False
    else:
        fake_anthropic.compaction_ignored = True
    service, cid = await open_chat(
        make_service, preset="window", summarizer="server", keep_recent="2"
    )
    events: list[EngineEvent] = []
    service.subscribe(events.append)
    await talk(service, cid, range(1, 5))
    first = await service.summaries.compact(cid)

    status = 400 if endpoint == "refuses" else 200
    assert [r.status for r in fake_anthropic.message_requests if r.is_compaction] == [status]
    assert first.compaction_block is None and not first.summarizer.startswith("server")
    notices = [e.notice for e in events if isinstance(e, CompactionFinished) and e.notice]
    assert len(notices) == 1 and "not available" in notices[0]
    assert await engine_of(service).store.compaction_support.unsupported(MODEL) is not None

    await talk(service, cid, range(5, 8))
    second = await service.summaries.compact(cid)
    assert second.status == "completed" and second.compaction_block is None
    assert len([r for r in fake_anthropic.message_requests if r.is_compaction]) == 1
    assert len([e for e in events if isinstance(e, CompactionFinished) and e.notice]) == 1


def test_inspector_and_summary_json_show_the_call() -> None:
    from dataclasses import replace

    from tests.unit.core.test_request_builder import summary
    from tui_chat.cli.render import summary_json
    from tui_chat.core.models import SummaryCall
    from tui_chat.tui.screens.inspector import figures

    call = SummaryCall(MODEL, 120, 30_000, 0, 900, 0.023859)
    version = replace(summary(covers_to=4), summarizer=MODEL, call=call)
    shown = figures(version, active=True).plain
    assert "Summary call" in shown and "$0.0239" in shown and "cache read" in shown
    assert summary_json(version, version.id, {})["call"] == {
        "model": MODEL,
        "input_tokens": 120,
        "cache_read_tokens": 30_000,
        "cache_write_tokens": 0,
        "output_tokens": 900,
        "cost_usd": 0.023859,
    }
    offline = figures(replace(version, call=None, summarizer="extractive"), active=False).plain
    assert "no model call (offline)" in offline


async def test_a_pin_inside_a_server_version_stays_verbatim(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service, cid = await open_chat(
        make_service, preset="window", summarizer="server", keep_recent="2"
    )
    await talk(service, cid, range(1, 6))
    pinned = (await service.messages.history(cid))[2]  # turn 2's question
    await service.messages.pin(pinned.id)
    version = await service.summaries.compact(cid)
    assert version.compaction_block is not None and version.covers_to_message_id > pinned.id
    await talk(service, cid, range(6, 7))
    sent = chats(fake_anthropic)[-1].body
    assert sent["messages"][0]["content"][0] == version.compaction_block
    assert pinned.text[:40] in dumped(sent["system"])


@pytest.mark.slow  # real tui-chat processes
def test_cli_compact_through_a_gateway_that_ignores_compaction(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.compaction_ignored = True
    assert run(isolated_env, "send", "--new", "--model", MODEL, turn_text(1), fake=fake_anthropic)
    for key, value in (("preset", "window"), ("summarizer", "server"), ("keep_recent", "2")):
        assert run(isolated_env, "set", "last", key, value).returncode == 0
    for i in range(2, 5):
        sent = run(isolated_env, "send", turn_text(i), fake=fake_anthropic)
        assert sent.returncode == 0, sent.stderr
    first = run(isolated_env, "compact", "last", "--json", fake=fake_anthropic)
    assert first.returncode == 0, first.stderr
    assert "compaction is not available" in first.stderr and "plain reply" in first.stderr
    assert not json.loads(first.stdout)["summarizer"].startswith("server")
    for i in range(5, 8):
        assert run(isolated_env, "send", turn_text(i), fake=fake_anthropic).returncode == 0
    second = run(isolated_env, "compact", "last", "--json", fake=fake_anthropic)
    assert second.returncode == 0, second.stderr
    assert "not available" not in second.stderr  # said once, then remembered
    assert len([r for r in fake_anthropic.message_requests if r.is_compaction]) == 1


async def test_a_fresh_process_rebuilds_the_last_request_and_continues_it_while_warm(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.cache_min_tokens = 0
    service, cid = await open_chat(
        make_service, MODEL, preset="window", summarizer="claude", keep_recent="2"
    )
    await talk(service, cid, range(1, 6))
    assert not [r for r in fake_anthropic.message_requests if r.is_summary]
    chat = chats(fake_anthropic)[-1]
    await service.close()
    # Another process (a CLI ``compact``): it never saw the request, it rebuilds it.
    fresh = await make_service(
        model=MODEL,
        compaction={
            "preset": "window",
            "summarizer": "claude",
            "keep_recent": "2",
            "summarizer_model": MODEL,
        },
    )
    await fresh.summaries.compact(cid)
    summary = [r for r in fake_anthropic.message_requests if r.is_summary][-1]
    sent = chat.body["messages"]
    assert summary.body["model"] == MODEL
    assert dumped(summary.body["messages"][: len(sent)]) == dumped(sent)
    assert (summary.usage or {})["cache_read_input_tokens"] > 0
    version = next(s for s in await fresh.summaries.versions(cid) if s.status == "completed")
    assert version.call is not None and version.call.model == MODEL


async def test_a_fresh_process_writes_a_standalone_summary_once_the_cache_is_cold(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service, cid = await open_chat(
        make_service, preset="window", summarizer="claude", keep_recent="2"
    )
    await talk(service, cid, range(1, 6))
    last = (await engine_of(service).store.messages.history(cid))[-1]
    async with engine_of(service).store.transaction() as db:
        await db.execute(
            "UPDATE messages SET created_at = ? WHERE id = ?",
            ("2020-01-01T00:00:00+00:00", last.id),
        )
    await service.close()
    fresh = await make_service(model=MODEL)
    await fresh.summaries.compact(cid)
    summary = [r for r in fake_anthropic.message_requests if r.is_summary][-1]
    assert summary.body["model"] != MODEL  # the standalone prompt, on the summary model


async def test_a_fresh_haiku_call_is_chosen_when_it_costs_less_than_continuing(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    # A short chat on Sonnet 4.6 ($3 / $15): the continuation's instruction and output at
    # Sonnet's card cost more than the whole span sent to Haiku 5.5 ($0.10 / $0.50).
    fake_anthropic.cache_min_tokens = 0
    service, cid = await open_chat(
        make_service, preset="threshold", summarizer="claude", threshold_tokens="1000"
    )
    await talk(service, cid, range(1, 8))
    summaries = [r for r in fake_anthropic.message_requests if r.is_summary]
    assert summaries and {r.body["model"] for r in summaries} == {"claude-haiku-5-5"}
    version = next(s for s in await service.summaries.versions(cid) if s.status == "completed")
    assert version.call is not None and version.call.model == "claude-haiku-5-5"
