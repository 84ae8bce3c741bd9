"""The API as it is now, through the real SDK against the local server: the newest web tool
versions where ``GET /v1/models`` says the model has dynamic filtering; a tool loop's thinking
sent back first and unchanged, and never across a changed prefix or into a later turn; the
text between tool calls that Opus 5.5 and Sonnet 5.5 return as thinking, asked for with
``display`` and shown as the reply's text (the Files API without its beta header:
``test_files_api.py``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic, model_entry
from tests.fakes.mcp_fixtures import stdio
from tui_chat.core.request.bound_thinking import BOUND_KEY
from tui_chat.engine.service import ChatService
from tui_chat.engine.tools import Decision, ToolCall
from tui_chat.llm.client import ClaudeClient
from tui_chat.tui.widgets import reply_parts

Make = Callable[..., Awaitable[ChatService]]


async def allow(call: ToolCall) -> Decision:
    return "once"


def kinds(body: dict[str, Any]) -> list[list[str]]:
    return [
        [b["type"] for b in m["content"]] if isinstance(m["content"], list) else ["text"]
        for m in body["messages"]
    ]


async def test_the_newest_web_tools_where_the_model_list_says_dynamic_filtering(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.model_limits["claude-sonnet-4-6"] = model_entry(
        1_000_000, 64_000, dynamic_filtering=True
    )
    service = await make_service()
    await service.catalog.refresh(force=True)
    sent: dict[str, list[str]] = {}
    for model in ("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-5-5"):
        conv = await service.conversations.new(model=model)
        for key in ("web_search", "web_fetch"):
            await service.conversations.set_setting(conv.id, key, "on")
        outcome = await service.send(conv.id, "Search for sqlite wal mode")
        assert outcome.error is None, (model, outcome.error)
        sent[model] = [t["type"] for t in fake_anthropic.message_requests[-1].body["tools"]]
    assert sent == {
        "claude-sonnet-4-6": ["web_search_20260318", "web_fetch_20260318"],
        # Listed without it, and not listed at all: the basic versions.
        "claude-haiku-4-5": ["web_search_20250305", "web_fetch_20250910"],
        "claude-opus-5-5": ["web_search_20250305", "web_fetch_20250910"],
    }
    # The server refuses the newest versions for a model listed without dynamic filtering.
    client = ClaudeClient("sk-ant-test", base_url=fake_anthropic.base_url, max_retries=0)
    refused = await client.stream(
        {
            "model": "claude-haiku-4-5",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "q"}],
            "tools": [{"type": "web_search_20260318", "name": "web_search"}],
        }
    )
    assert refused.error is not None and "web_search_20260318" in refused.error.message
    await client.aclose()


async def test_a_tool_loop_sends_its_thinking_back_and_a_later_turn_does_not(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service(mcp_servers=(stdio("t"),))
    await service.tools.wait_started()
    conv = await service.conversations.new(model="claude-sonnet-4-6")
    await service.conversations.set_setting(conv.id, "thinking", "on")
    fake_anthropic.push_tool_use("t__add", {"a": 2, "b": 40}, text="Adding.")
    fake_anthropic.push_reply("The sum is 42.")
    outcome = await service.send(conv.id, "what is 2 + 40?", approve=allow)
    assert outcome.error is None, outcome.error
    first, second = fake_anthropic.message_requests[-2:]
    history = await service.messages.history(conv.id)
    stored = history[1].content[0]
    assert stored["type"] == "thinking" and stored[BOUND_KEY]["model"] == "claude-sonnet-4-6"
    # The server refuses a tool round whose call comes without its thinking: it came first,
    # exactly as received (tui-chat's own key left out).
    answered = second.body["messages"][-2]
    assert answered["content"][0] == {k: v for k, v in stored.items() if k != BOUND_KEY}
    assert second.status == 200 and first.status == 200
    # The turn is over: the next request carries no thinking at all.
    assert (await service.send(conv.id, "thanks")).error is None
    later = fake_anthropic.message_requests[-1].body
    assert not any("thinking" in k for k in kinds(later)), kinds(later)


async def test_a_thinking_block_after_a_changed_prefix_is_refused_by_the_server(
    fake_anthropic: FakeAnthropic,
) -> None:
    client = ClaudeClient("sk-ant-test", base_url=fake_anthropic.base_url, max_retries=0)
    first = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 2000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "why?"}],
    }
    reply = await client.stream(first)
    assert reply.error is None and reply.content[0]["type"] == "thinking"
    follow = [*first["messages"], {"role": "assistant", "content": reply.content}]
    follow.append({"role": "user", "content": "and?"})
    same = await client.stream({**first, "messages": follow})
    assert same.error is None  # an unchanged prefix: the block is usable
    changed = await client.stream({**first, "system": "Be thorough.", "messages": follow})
    assert (
        changed.error is not None and "bound to a different conversation" in changed.error.message
    )
    await client.aclose()


async def test_text_between_tool_calls_comes_as_thinking_and_is_shown_as_reply_text(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service(mcp_servers=(stdio("t"),))
    await service.tools.wait_started()
    conv = await service.conversations.new()  # the default model, Sonnet 5.5; thinking off
    fake_anthropic.push_tool_use("t__add", {"a": 2, "b": 40}, text="Adding the numbers.")
    fake_anthropic.push_reply("The sum is 42.")
    outcome = await service.send(conv.id, "what is 2 + 40?", approve=allow)
    assert outcome.error is None, outcome.error
    first, second = fake_anthropic.message_requests[-2:]
    # Asked with the display that returns the text (adaptive is the model's default thinking).
    assert first.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    reply = (await service.messages.history(conv.id))[1]
    assert [b["type"] for b in reply.content] == ["thinking", "tool_use"]
    assert reply.content[0]["thinking"] == "Adding the numbers." and reply.text == ""
    assert reply_parts.shown_text(reply) == "Adding the numbers.\n\n"  # the body's text
    assert reply_parts.thinking(reply) is None  # not folded away as thinking
    assert kinds(second.body)[-2] == ["thinking", "tool_use"]  # sent back with its call

    # A conversation whose display is "omitted" asks otherwise: nothing sent, the note empty.
    await service.conversations.set_setting(conv.id, "thinking_display", "omitted")
    fake_anthropic.push_tool_use("t__add", {"a": 1, "b": 1}, text="Adding again.")
    fake_anthropic.push_reply("2.")
    assert (await service.send(conv.id, "1 + 1?", approve=allow)).error is None
    asked = fake_anthropic.message_requests[-2].body
    assert "thinking" not in asked
    quiet = (await service.messages.history(conv.id))[-3]
    assert quiet.content[0] == {**quiet.content[0], "type": "thinking", "thinking": ""}
    assert reply_parts.shown_text(quiet) == ""
