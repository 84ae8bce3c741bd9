"""Thinking and web search/fetch, through the real SDK.

What the requests and blocks look like follows Claude's docs as read on 2026-11-26 (see
``tui_chat/core/reply_options.py`` and ``tui_chat/core/web.py``); the fake server
(``tests/fakes/fake_web.py``) models them and refuses what the docs say the API refuses.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tui_chat.core.models import Usage
from tui_chat.core.presets import PolicyError, parse_setting, resolve_policy
from tui_chat.core.reply_options import reply_options
from tui_chat.core.web import activity, cited_text, sources
from tui_chat.engine.service import ChatService
from tui_chat.llm.models import cost_usd, model_info

Make = Callable[..., Awaitable[ChatService]]


def types(body: dict[str, Any]) -> list[list[str]]:
    """Each message's block types (a message given as a string is one text block)."""
    return [
        [b["type"] for b in m["content"]] if isinstance(m["content"], list) else ["text"]
        for m in body["messages"]
    ]


# -- the request keys -----------------------------------------------------------------------


def test_thinking_is_adaptive_where_supported_and_the_budget_form_elsewhere() -> None:
    on = resolve_policy({"thinking": "on", "thinking_budget": 4000})
    adaptive, _ = reply_options(on, "claude-sonnet-4-6", 16_384, ("adaptive thinking",))
    assert adaptive == {"thinking": {"type": "adaptive", "display": "summarized"}}
    budget, _ = reply_options(on, "claude-haiku-4-5", 16_384, ("thinking",))
    assert budget["thinking"] == {"type": "enabled", "budget_tokens": 4000, "display": "summarized"}
    # Kept below max_tokens; no room at all is said, not sent.
    cut, warnings = reply_options(on, "claude-haiku-4-5", 3000, ())
    assert cut["thinking"]["budget_tokens"] == 1976 and "cut to 1,976" in warnings[0]
    none, warnings = reply_options(on, "claude-haiku-4-5", 2000, ())
    assert "thinking" not in none and "no room" in warnings[0]
    effort = resolve_policy({"effort": "low"})
    assert reply_options(effort, "claude-sonnet-4-6", 16_384, ("effort",))[0] == {
        "output_config": {"effort": "low"}
    }
    skipped, warnings = reply_options(effort, "claude-haiku-4-5", 16_384, ("thinking",))
    assert skipped == {} and "does not take it" in warnings[0]
    assert reply_options(resolve_policy({}), "claude-sonnet-4-6", 16_384, ())[0] == {}


def test_web_tools_carry_max_uses_and_one_domain_list() -> None:
    policy = resolve_policy(
        {
            "web_search": "on",
            "web_fetch": "on",
            "web_max_uses": "3",
            "web_blocked_domains": "spam.example, https://Ads.example.com",
        }
    )
    tools = reply_options(policy, "claude-sonnet-4-6", 16_384)[0]["tools"]
    assert tools[0] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 3,
        "blocked_domains": ["spam.example", "ads.example.com"],
    }
    assert tools[1]["type"] == "web_fetch_20250910" and tools[1]["citations"] == {"enabled": True}
    with pytest.raises(PolicyError, match="cannot both be set"):
        resolve_policy({"web_allowed_domains": "a.org", "web_blocked_domains": "b.org"})
    with pytest.raises(PolicyError, match="not a domain"):
        parse_setting("web_allowed_domains", "not a domain!")


def test_cost_counts_thinking_as_output_and_each_search() -> None:
    info = model_info("claude-sonnet-4-6")
    plain = cost_usd(info, Usage(input_tokens=1000, output_tokens=500))
    searched = cost_usd(info, Usage(1000, 500, thinking_tokens=400, web_search_requests=2))
    assert searched == pytest.approx(plain + 0.02)
    assert Usage.from_dict(Usage(1, 2, web_search_requests=3).to_dict()) == Usage(
        1, 2, web_search_requests=3
    )


# -- thinking end to end --------------------------------------------------------------------


async def test_thinking_streams_is_stored_signed_and_not_sent_back(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()  # the default model (claude-sonnet-5-5)
    await service.conversations.set_setting(conv.id, "thinking", "on")
    seen: list[tuple[str, str]] = []
    outcome = await service.send(
        conv.id,
        "Why is the sky blue?",
        on_event=lambda e: seen.append((getattr(e, "kind", ""), getattr(e, "text", ""))),
    )
    assert outcome.error is None
    body = fake_anthropic.message_requests[-1].body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    thinking = outcome.reply.content[0]
    assert thinking["type"] == "thinking" and thinking["thinking"].startswith("Considering:")
    assert thinking["signature"] == fake_anthropic.signature(thinking["thinking"])
    assert "".join(t for k, t in seen if k == "thinking") == thinking["thinking"]
    assert outcome.reply.text == "Reply to: Why is the sky blue?"  # the text has no thinking
    assert outcome.reply.usage is not None and outcome.reply.usage.thinking_tokens > 0
    # The next request leaves the earlier turn's thinking out (the docs allow it; a prefix
    # changed by compaction would make it invalid) and still asks for thinking.
    assert (await service.send(conv.id, "And at sunset?")).error is None
    body = fake_anthropic.message_requests[-1].body
    assert types(body) == [["text"], ["text"], ["text"]]
    assert body["thinking"]["type"] == "adaptive"


async def test_budget_form_for_a_model_without_adaptive_thinking(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    await service.catalog.refresh(force=True)  # the endpoint: haiku has no adaptive thinking
    conv = await service.conversations.new(model="claude-haiku-4-5")
    await service.conversations.set_setting(conv.id, "thinking", "on")
    await service.conversations.set_setting(conv.id, "thinking_display", "omitted")
    outcome = await service.send(conv.id, "Plan a trip.")
    assert outcome.error is None, outcome.error
    sent = fake_anthropic.message_requests[-1].body["thinking"]
    assert sent == {"type": "enabled", "budget_tokens": 8000, "display": "omitted"}
    assert outcome.reply.content[0]["thinking"] == ""  # omitted: only the signature comes


async def test_a_changed_thinking_block_is_refused_by_the_server(
    fake_anthropic: FakeAnthropic,
) -> None:
    from tui_chat.llm.client import ClaudeClient

    client = ClaudeClient("sk-ant-test", base_url=fake_anthropic.base_url, max_retries=0)
    block = {"type": "thinking", "thinking": "edited", "signature": fake_anthropic.signature("x")}
    result = await client.stream(
        {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]},
                {"role": "user", "content": "q2"},
            ],
        }
    )
    assert result.error is not None and "signature" in result.error.message
    await client.aclose()


# -- web search end to end -------------------------------------------------------------------


async def test_web_search_results_citations_usage_and_cost(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "web_search", "on")
    await service.conversations.set_setting(
        conv.id, "web_allowed_domains", "docs.python.org en.wikipedia.org"
    )
    blocks: list[dict[str, Any]] = []
    outcome = await service.send(
        conv.id,
        "Search the web for python 3.14 release",
        on_event=lambda e: blocks.append(e.block) if getattr(e, "block", None) else None,
    )
    assert outcome.error is None, outcome.error
    body = fake_anthropic.message_requests[-1].body
    assert body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 5,
            "allowed_domains": ["docs.python.org", "en.wikipedia.org"],
        }
    ]
    content = outcome.reply.content
    assert [activity(b) for b in blocks] == ["searched the web: “python 3.14 release”", "2 results"]
    found = sources(content)
    assert [(s.number, s.domain) for s in found] == [
        (1, "docs.python.org"),
        (2, "en.wikipedia.org"),
    ]
    assert "[1]" in cited_text(content) and "[2]" in cited_text(content)
    usage = outcome.reply.usage
    assert usage is not None and usage.web_search_requests == 1
    cost = await service.costs.of(conv.id)
    assert cost == pytest.approx(cost_usd(model_info(conv.model), usage))
    assert cost > 0.01
    # The default model writes its text between tool calls as thinking: asked to show it.
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    # (It thinks by default too: that thinking is summarized as well, then the note.)
    thought, note = content[:2]
    assert thought["type"] == note["type"] == "thinking"
    assert note["thinking"] == "Searching the web for python 3.14 release."
    # The results and citations go back unchanged with the next request; the thinking of a
    # turn that is over does not (core/request/bound_thinking.py).
    assert (await service.send(conv.id, "thanks")).error is None
    again = fake_anthropic.message_requests[-1].body["messages"][1]["content"]
    assert again == [b for b in content if b["type"] != "thinking"]


async def test_web_fetch_reads_a_page(make_service: Make, fake_anthropic: FakeAnthropic) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "web_fetch", "on")
    outcome = await service.send(conv.id, "Summarize https://example.com/post please")
    assert outcome.error is None
    kinds = [b["type"] for b in outcome.reply.content]
    # Its thinking, then its note before the call (the default model writes it as thinking).
    assert kinds[:4] == ["thinking", "thinking", "server_tool_use", "web_fetch_tool_result"]
    assert activity(outcome.reply.content[3]) == "read Page at example.com"
    assert outcome.reply.usage is not None and outcome.reply.usage.web_fetch_requests == 1


async def test_thinking_and_search_survive_export_and_import(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    for key in ("thinking", "web_search"):
        await service.conversations.set_setting(conv.id, key, "on")
    assert (await service.send(conv.id, "Search for sqlite wal mode")).error is None
    before = (await service.requests.context(conv.id, "next")).request
    path = tmp_path / "conv.json"
    path.write_text(await service.transfer.export(conv.id, "json"))
    imported = await service.transfer.import_file(path)
    after = (await service.requests.context(imported.id, "next")).request
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
    await service.close()  # a restart builds the same bytes
    reopened = await make_service()
    again = (await reopened.requests.context(conv.id, "next")).request
    assert json.dumps(again, sort_keys=True) == json.dumps(before, sort_keys=True)
    service = reopened
    stored = (await service.messages.page(imported.id))[-1].content
    assert stored[0]["type"] == "thinking" and stored[0]["signature"]
    text = await service.transfer.export(conv.id, "md")
    assert "searched the web: “sqlite wal mode”" in text
    assert "[1]: " in text and "https://docs.python.org/sqlite-wal-mode" in text
    assert "<details><summary>Thinking</summary>" in text


@pytest.mark.slow  # real tui-chat processes
def test_cli_send_show_and_context_with_thinking_and_search(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    from tests.integration.test_cli import js, run

    run(isolated_env, "send", "--new", "hello", fake=fake_anthropic)
    for key in ("thinking", "web_search"):
        assert run(isolated_env, "set", "last", key, "on").returncode == 0
    bad = run(isolated_env, "set", "last", "web_allowed_domains", "not a domain!")
    assert bad.returncode != 0 and "not a domain" in bad.stderr
    result = run(isolated_env, "send", "search for tmux copy mode", fake=fake_anthropic)
    assert result.returncode == 0, result.stderr
    assert "[thinking] Considering: search for tmux copy mode" in result.stderr
    assert "[searched the web: “tmux copy mode”]" in result.stderr
    assert "Considering" not in result.stdout and "Here is what I found" in result.stdout
    shown = run(isolated_env, "show", "last").stdout
    # Its thinking (6 words) and its note before the search (7), as thinking blocks.
    assert "[thinking: 13 words]" in shown and "[3 results]" in shown
    assert "[1] Tmux copy mode – documentation — https://docs.python.org/tmux-copy-mode" in shown
    ctx = js(run(isolated_env, "context", "last", "--message", "next", "--json"))
    assert ctx["request"]["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert ctx["request"]["tools"][0]["name"] == "web_search"
    # The preset changes compaction only: thinking and search stay on.
    assert run(isolated_env, "set", "last", "preset", "window").returncode == 0
    ctx = js(run(isolated_env, "context", "last", "--message", "next", "--json"))
    assert "thinking" in ctx["request"] and "tools" in ctx["request"]


def test_a_continuation_summary_keeps_thinking_and_tools_and_makes_room() -> None:
    from tui_chat.core.summarize.continuation import continuation_request

    chat = {
        "model": "claude-haiku-4-5",
        "max_tokens": 16_384,
        "thinking": {"type": "enabled", "budget_tokens": 8000, "display": "summarized"},
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}],
    }
    reply = [
        {"type": "thinking", "thinking": "private", "signature": "s"},
        {"type": "text", "text": "answer"},
    ]
    request = continuation_request(chat, reply, "Summarize.", 2048)
    assert request["thinking"] == chat["thinking"] and request["tools"] == chat["tools"]
    assert request["max_tokens"] == 2048 + 8000  # budget_tokens < max_tokens
    assert request["messages"][1]["content"] == [{"type": "text", "text": "answer"}]
    assert "Do not search the web" in request["messages"][2]["content"][0]["text"]


async def test_a_thinking_search_conversation_survives_compaction_and_roll_back(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    for key, value in (("thinking", "on"), ("web_search", "on"), ("keep_recent", "2")):
        await service.conversations.set_setting(conv.id, key, value)
    for text in ("We use PostgreSQL 16.", "Search for postgres vacuum tuning", "Thanks.", "Ok."):
        assert (await service.send(conv.id, text)).error is None
    await service.finish_background()
    version = await service.summaries.compact(conv.id)
    assert version.status == "completed" and "PostgreSQL" in version.text
    assert "Considering" not in version.text  # thinking never reaches a summary's input
    summaries = [r.body for r in fake_anthropic.message_requests if r.is_summary]
    assert summaries and all("thinking" not in kinds for body in summaries for kinds in types(body))
    after = await service.requests.context(conv.id, "next")
    assert after.request["thinking"]["type"] == "adaptive" and after.request["tools"]
    assert (await service.send(conv.id, "Search for pg_stat_statements")).error is None
    restored = await service.summaries.activate(
        conv.id, version.version - 1 if version.version > 1 else 0
    )
    assert restored is None or restored.version < version.version
    assert (await service.send(conv.id, "And now?")).error is None


async def test_a_paused_search_turn_is_continued_and_stored_as_one_reply(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "web_search", "on")
    fake_anthropic.push(kind="reply", stop_reason="pause_turn")
    fake_anthropic.push_reply(" And the rest of the answer.")
    outcome = await service.send(conv.id, "Search for asyncio task groups")
    assert outcome.error is None
    follow = fake_anthropic.message_requests[-1].body
    paused = follow["messages"][-1]
    # Sent back whole, its note between tool calls (a thinking block) first.
    assert [b["type"] for b in paused["content"][:3]] == ["thinking", "thinking", "server_tool_use"]
    reply = outcome.reply
    assert reply.status == "complete" and reply.stop_reason == "end_turn"
    assert reply.text.endswith("That is all. And the rest of the answer.")
    assert reply.usage is not None and reply.usage.web_search_requests == 1
    first, second = (r.usage for r in fake_anthropic.message_requests[-2:])
    assert first is not None and second is not None
    assert reply.usage.output_tokens == first["output_tokens"] + second["output_tokens"]


async def test_an_anthropic_messages_list_keeps_thinking_and_web_blocks(
    make_service: Make, tmp_path: Path
) -> None:
    thinking = {"type": "thinking", "thinking": "Let me check.", "signature": "sig"}
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    use = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_fetch",
        "input": {"url": "https://example.com"},
    }
    result = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {"type": "web_fetch_result", "url": "https://example.com"},
    }
    answer = {"type": "text", "text": "It is an example."}
    path = tmp_path / "messages.json"
    path.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "what is on example.com?"},
                    {"role": "assistant", "content": [thinking, redacted, use, result, answer]},
                ]
            }
        )
    )
    service = await make_service()
    conversation = await service.transfer.import_file(path)
    reply = (await service.messages.page(conversation.id))[-1]
    assert reply.content == [thinking, redacted, use, result, answer]
    assert reply.text.endswith("[tool result] (https://example.com)\nIt is an example.")
    assert "Let me check" not in reply.text  # thinking is never in the searchable text


def test_the_context_preview_says_what_the_reply_may_use() -> None:
    from tui_chat.core.reply_options import describe
    from tui_chat.tui.screens.context_preview import readable

    policy = resolve_policy(
        {"thinking": "on", "effort": "low", "web_search": "on", "web_allowed_domains": "a.org"}
    )
    options, _ = reply_options(policy, "claude-haiku-4-5", 16_384, ("thinking",))
    assert describe(options) is None or "effort" not in describe(options)  # haiku: no effort
    request = {"messages": [{"role": "user", "content": "hi"}], **options}
    line = "thinking budget (summarized, budget 8,000) · web_search: max 5, only a.org"
    assert describe(request) == line
    assert f"the reply may use: {line}" in str(readable(request))
    assert describe({"messages": []}) is None


async def test_the_html_export_shows_thinking_searches_and_safe_source_links(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    from dataclasses import replace

    from tui_chat.engine.transfer.export_web import reply_html

    service = await make_service()
    conv = await service.conversations.new()
    for key in ("thinking", "web_search"):
        await service.conversations.set_setting(conv.id, key, "on")
    assert (await service.send(conv.id, "Search for html details element")).error is None
    page = await service.transfer.export(conv.id, "html")
    assert "<summary>Thinking</summary>" in page and "Considering: Search for html" in page
    assert "searched the web: “html details element”" in page
    assert '<a href="https://docs.python.org/html-details-element">' in page
    reply = (await service.messages.page(conv.id))[-1]
    evil = [
        {
            "type": "text",
            "text": "x",
            "citations": [
                {"type": "web_search_result_location", "url": "javascript:alert(1)", "title": "<b>"}
            ],
        }
    ]
    shown = reply_html(replace(reply, content=evil), lambda text: text)
    assert "href" not in shown and "&lt;b&gt;" in shown
