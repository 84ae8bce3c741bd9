"""Tool turns end to end: the real SDK against the local server asking for tool calls (streamed
``tool_use`` with ``input_json_delta``, ``stop_reason: "tool_use"``), real MCP servers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.mcp_fixtures import stdio
from tui_chat.engine.events import EngineEvent, ToolCallStarted, ToolResultsSaved
from tui_chat.engine.send import session as session_module
from tui_chat.engine.service import ChatService
from tui_chat.engine.tools import APPROVAL_NEEDED, Decision, ToolCall

Make = Callable[..., Awaitable[ChatService]]


async def _service(make_service: Make, *specs: Any) -> ChatService:
    service = await make_service(mcp_servers=tuple(specs or (stdio("t"),)))
    await service.tools.wait_started()
    return service


async def allow(call: ToolCall) -> Decision:
    return "once"


def _results(message: Any) -> list[dict[str, Any]]:
    return [b for b in message.content if b.get("type") == "tool_result"]


def _paired(history: list[Any]) -> None:
    """Every tool_use is answered by a tool_result in the next message."""
    for index, message in enumerate(history):
        uses = {b["id"] for b in message.content if b.get("type") == "tool_use"}
        if uses:
            answered = {b["tool_use_id"] for b in _results(history[index + 1])}
            assert uses <= answered, (index, uses, answered)


async def test_a_tool_call_runs_and_its_result_goes_back_until_the_model_stops(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    fake_anthropic.push_tool_use("t__add", {"a": 2, "b": 40}, text="Adding.")
    fake_anthropic.push_reply("The sum is 42.")
    events: list[EngineEvent] = []
    outcome = await service.send(conv.id, "what is 2 + 40?", events.append, approve=allow)
    assert outcome.error is None and outcome.reply.text == "The sum is 42."
    first, second = fake_anthropic.message_requests[-2:]
    names = [tool["name"] for tool in first.body["tools"]]
    assert "t__add" in names and "t__echo" in names
    # The API's cache prefix is tools, system, messages: a breakpoint later keeps them cached.
    assert all("cache_control" not in tool for tool in first.body["tools"])
    assert "cache_control" in json.dumps(first.body["messages"])
    last = second.body["messages"][-1]
    assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["content"][0]["text"] == "42"
    history = await service.messages.history(conv.id)
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[1].stop_reason == "tool_use" and history[1].has_tool_use
    assert history[1].content[-1]["input"] == {"a": 2, "b": 40}  # from input_json_delta
    _paired(history)
    assert any(isinstance(e, ToolCallStarted) for e in events)
    saved = [e for e in events if isinstance(e, ToolResultsSaved)]
    assert len(saved) == 1 and saved[0].message.id == history[2].id
    hits = await service.messages.search("42", conversation_id=conv.id)
    assert any(hit.message_id == history[2].id for hit in hits)


async def test_without_approval_a_call_gets_an_error_result_and_never_runs(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    fake_anthropic.push_tool_use("t__crash", {})
    fake_anthropic.push_reply("I could not run it.")
    await service.send(conv.id, "crash the server")
    history = await service.messages.history(conv.id)
    (result,) = _results(history[2])
    assert result["is_error"] and result["content"][0]["text"] == APPROVAL_NEEDED
    assert service.tools.reports()[0].state == "ready"  # the crash tool never ran
    _paired(history)


async def test_a_standing_approval_runs_calls_without_asking(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    asked: list[ToolCall] = []

    async def always_tool(call: ToolCall) -> Decision:
        asked.append(call)
        return "tool"

    for _ in range(2):
        fake_anthropic.push_tool_use("t__echo", {"text": "hi"})
        fake_anthropic.push_reply("done")
    await service.send(conv.id, "one", approve=always_tool)
    await service.send(conv.id, "two")  # no approver: the stored "always" holds
    assert [c.api_name for c in asked] == ["t__echo"] and asked[0].arguments == {"text": "hi"}
    history = await service.messages.history(conv.id)
    assert [_results(m)[0]["content"][0]["text"] for m in history if _results(m)] == ["hi", "hi"]


async def test_escape_during_a_call_leaves_every_call_answered(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    fake_anthropic.push_tool_use("t__slow", {"seconds": 60})
    started = asyncio.Event()

    def on_event(event: EngineEvent) -> None:
        if isinstance(event, ToolCallStarted):
            started.set()

    task = asyncio.create_task(service.send(conv.id, "wait", on_event, approve=allow))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    history = await service.messages.history(conv.id)
    assert [m.role for m in history] == ["user", "assistant", "user"]
    (result,) = _results(history[2])
    assert result["is_error"] and "cancelled" in result["content"][0]["text"]
    _paired(history)
    fake_anthropic.push_reply("fine")
    outcome = await service.send(conv.id, "go on")  # the server validates the pairs
    assert outcome.error is None


async def test_the_rounds_of_a_send_are_limited(
    make_service: Make, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "MAX_TOOL_ROUNDS", 2)
    service = await _service(make_service)
    conv = await service.conversations.new()
    fake_anthropic.push_tool_use("t__echo", {"text": "again"}, times=None)
    await service.send(conv.id, "loop", approve=allow)
    history = await service.messages.history(conv.id)
    ran = [r for m in history for r in _results(m) if not r.get("is_error")]
    stopped = [r for m in history for r in _results(m) if r.get("is_error")]
    assert len(ran) == 2 and stopped and "limit" in stopped[0]["content"][0]["text"]
    _paired(history)
    assert history[-1].role == "user"  # the last calls answered, nothing left open


async def test_tools_are_a_section_of_the_gauge_and_switch_off_per_conversation(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    on = await service.requests.gauge(conv.id)
    assert on.sections["tools"] > 0
    built = await service.requests.context(conv.id, "hi")
    assert built.breakdown.sections["tools"] == on.sections["tools"]
    assert "tools" in json.dumps(built.request)
    await service.tools.set_on(conv.id, "t", on=False)
    off = await service.requests.gauge(conv.id)
    assert off.sections["tools"] == 0
    assert "tools" not in (await service.requests.context(conv.id, "hi")).request


async def test_a_megabyte_result_is_stored_whole_and_sent_cut(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    fake_anthropic.push_tool_use("t__big", {"size": 1_000_000})
    fake_anthropic.push_reply("That was long.")
    outcome = await service.send(conv.id, "read the big file", approve=allow)
    assert outcome.error is None
    history = await service.messages.history(conv.id)
    (stored,) = _results(history[2])
    assert len(stored["content"][0]["text"]) == 1_000_000 and stored["elapsed_ms"] >= 0
    sent = fake_anthropic.message_requests[-1].body["messages"][-1]["content"][0]
    assert "elapsed_ms" not in sent and sent["tool_use_id"] == stored["tool_use_id"]
    assert len(sent["content"][0]["text"]) < 50_000 and "cut" in sent["content"][0]["text"]


async def test_tool_turns_export_import_search_and_compact_without_splitting_a_pair(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Any
) -> None:
    service = await _service(make_service)
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "summarizer", "extractive")
    fake_anthropic.push_tool_use("t__big", {"size": 3000}, text="Reading the file list.")
    fake_anthropic.push_reply("The list names /tmp/big/file.txt and id-4242 many times.")
    await service.send(conv.id, "list the big file", approve=allow)
    for i in range(6):
        await service.send(conv.id, f"plain question number {i} about the deployment plan")
    history = await service.messages.history(conv.id)
    # Recall's index holds the result's text.
    hits = await service.messages.search("abcdefghij", conversation_id=conv.id)
    assert any(hit.message_id == history[2].id for hit in hits)
    # Exported and imported with every call and result.
    path = tmp_path / "tools.json"
    path.write_text(await service.transfer.export(conv.id, "json"))
    copy = await service.transfer.import_file(path)
    copied = await service.messages.history(copy.id)
    assert [b["type"] for m in copied for b in m.content if "tool" in b["type"]] == [
        "tool_use",
        "tool_result",
    ]
    _paired(copied)
    # A fold ends between whole turns: never after a tool_use without its result.
    summary = await service.summaries.compact(conv.id)
    ids = [m.id for m in history]
    covered = ids.index(summary.covers_to_message_id)
    assert not history[covered].has_tool_use
    assert covered + 1 >= len(history) or not history[covered + 1].has_tool_result
    ledger = json.dumps(summary.ledger)
    assert "/tmp/big/file.txt" in ledger or "id-4242" in ledger
    fake_anthropic.push_reply("ok")
    assert (await service.send(conv.id, "and now?")).error is None  # still well formed


def _sent_results(request: Any) -> list[str]:
    """The text of every tool result a request sent, in order."""
    texts = []
    for message in request.body["messages"]:
        for block in message["content"]:
            if block.get("type") == "tool_result":
                texts.append(block["content"][0]["text"])
    return texts


async def test_large_results_are_cut_before_anything_is_folded_and_stay_findable(
    make_engine: Callable[..., Awaitable[Any]], fake_anthropic: FakeAnthropic
) -> None:
    engine = await make_engine(mcp_servers=(stdio("t"),))
    service = engine.service
    await service.tools.wait_started()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "budget", "20000")
    await service.conversations.set_setting(conv.id, "summarizer", "extractive")
    for n in range(1, 7):  # six file reads of about 4,500 tokens: past the budget whole
        path = f"src/app/mod{n}.py"
        fake_anthropic.push_tool_use("t__read_file", {"path": path}, text=f"Reading {path}.")
        fake_anthropic.push_reply(f"Read {path}.")
        assert (await service.send(conv.id, f"read {path}", approve=allow)).error is None
        await engine.worker.wait()
    history = await service.messages.history(conv.id)
    assert sum(m.token_count for m in history) > 25_000
    # Nothing was folded: cutting the older results was enough.
    assert await service.summaries.versions(conv.id) == []
    sent = _sent_results(fake_anthropic.message_requests[-1])
    assert len(sent) == 6 and "cut to fit" not in sent[-1]  # the newest whole
    assert "cut to fit" in sent[0]
    assert "ORD-MOD1-0427" in sent[0] and "375 ms" in sent[0]  # what it established
    # The summary's ledger keeps what a result established; recall finds a result's text.
    summary = await service.summaries.compact(conv.id)
    ledger = json.dumps(summary.ledger)
    assert "ORD-MOD1-0427" in ledger and "src/app/mod1.py" in ledger
    built = await service.requests.context(conv.id, "which module calls frobnicate_mod1?")
    first_result = next(m for m in history if m.has_tool_result)
    assert first_result.id in built.recalled_ids
