"""On-demand compaction through the real SDK against the fake server: the request shape the
documentation describes, the signed block sent back unchanged, its effect on counted input,
prompt-cache reuse, and ``unsupported`` for a model or endpoint without the feature."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tui_chat.llm.client import ClaudeClient
from tui_chat.llm.compaction import COMPACTION_BETA, compaction_headers
from tui_chat.llm.errors import ChatError

KEY = "sk-ant-api03-testkey-0123456789abcdef"
MODEL = "claude-sonnet-4-6"
SYSTEM = [
    {"type": "text", "text": "You help plan a recipe app.", "cache_control": {"type": "ephemeral"}}
]


def history(turns: int = 3) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"Question {i}. Which entity holds step {i}?"})
        messages.append({"role": "assistant", "content": f"Answer {i}. The Step table, row {i}."})
    return messages


def chat_request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 512, "system": SYSTEM, "messages": messages, **extra}


@pytest.fixture
async def client(fake_anthropic: FakeAnthropic) -> AsyncIterator[ClaudeClient]:
    claude = ClaudeClient(KEY, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=0)
    yield claude
    await claude.aclose()


async def test_compaction_request_shape_and_signed_block(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    result = await client.compact(chat_request(history(), temperature=0.2))

    sent = fake_anthropic.last
    assert sent.headers["anthropic-beta"] == COMPACTION_BETA
    assert sent.body["compaction"] == {"type": "summarize"}
    assert sent.body["stream"] is False
    assert "temperature" not in sent.body  # only shapes a reply
    assert sent.body["system"] == SYSTEM  # the same system prompt as the chat
    assert result.block["type"] == "compaction"
    assert result.block["content"] == result.text and "Question 0" in result.text
    assert result.signature == result.block["signature"] == fake_anthropic.signature(result.text)
    assert result.usage.output_tokens > 0 and result.usage.input_tokens > 0
    assert result.model == MODEL


async def test_instructions_replace_the_default_prompt(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    result = await client.compact(chat_request(history()), instructions="Keep every table name")
    assert fake_anthropic.last.body["compaction"] == {
        "type": "summarize",
        "instructions": "Keep every table name",
    }
    assert result.text.startswith("Focus: Keep every table name")

    await client.compact(chat_request(history()), instructions="   ")
    assert fake_anthropic.last.body["compaction"] == {"type": "summarize"}


async def test_block_sent_back_unchanged_and_counted_by_its_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    full = history(6)
    full_tokens = fake_anthropic.input_tokens(chat_request(full))
    result = await client.compact(chat_request(full))
    block = copy.deepcopy(result.block)
    swapped = [{"role": "assistant", "content": [block]}, {"role": "user", "content": "Next?"}]

    assert compaction_headers(chat_request(swapped)) == {"anthropic-beta": COMPACTION_BETA}
    reply = await client.stream(chat_request(swapped))

    assert reply.ok, reply.error
    sent = fake_anthropic.last
    assert sent.headers["anthropic-beta"] == COMPACTION_BETA
    assert sent.body["messages"][0]["content"][0] == result.block
    counted = sum(
        sent.usage[k]  # type: ignore[index]
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    assert counted == fake_anthropic.input_tokens(chat_request(swapped)) < full_tokens
    assert await client.count_tokens(chat_request(swapped)) == counted


async def test_tampered_or_misplaced_block_is_refused(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    result = await client.compact(chat_request(history()))
    tampered = {**result.block, "content": result.text + " (edited)"}
    reply = await client.stream(
        chat_request(
            [{"role": "assistant", "content": [tampered]}, {"role": "user", "content": "Go"}]
        )
    )
    assert reply.error is not None and reply.error.kind == "bad_request"
    assert "signature" in reply.error.message

    late = [
        *history(1),
        {"role": "assistant", "content": [result.block]},
        {"role": "user", "content": "Go"},
    ]
    reply = await client.stream(chat_request(late))
    assert reply.error is not None and "first" in reply.error.message


async def test_compaction_reads_the_chat_prefix_from_the_cache(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.cache_min_tokens = 0
    messages = history(4)
    messages[-2] = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Question 3?", "cache_control": {"type": "ephemeral"}}
        ],
    }
    chat = chat_request(messages[:-1])
    assert (await client.stream(chat)).ok
    result = await client.compact(chat_request(messages))
    prefix = fake_anthropic.input_tokens(chat)
    assert result.usage.cache_read_input_tokens == prefix
    assert result.usage.input_tokens == fake_anthropic.input_tokens(chat_request(messages)) - prefix


@pytest.mark.parametrize("case", ["model", "endpoint"])
async def test_unsupported_model_or_endpoint(
    client: ClaudeClient, fake_anthropic: FakeAnthropic, case: str
) -> None:
    request = chat_request(history())
    if case == "model":
        request["model"] = "claude-haiku-4-5"  # not in the documented list
    else:
        fake_anthropic.compaction_endpoint = False
    with pytest.raises(ChatError) as caught:
        await client.compact(request)
    assert caught.value.kind == "unsupported"
    assert caught.value.status == 400
    assert "compaction" in caught.value.message


async def test_ordinary_failures_stay_ordinary(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_error(529, target="compaction")
    with pytest.raises(ChatError) as caught:
        await client.compact(chat_request(history()))
    assert caught.value.kind == "overloaded"


async def test_missing_summary_is_an_error(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_reply("", target="compaction")
    with pytest.raises(ChatError) as caught:
        await client.compact(chat_request(history()))
    assert caught.value.kind == "incomplete"


async def test_compaction_without_key_touches_no_network(fake_anthropic: FakeAnthropic) -> None:
    claude = ClaudeClient(None, base_url=fake_anthropic.base_url)
    with pytest.raises(ChatError) as caught:
        await claude.compact(chat_request(history()))
    assert caught.value.kind == "no_key"
    assert fake_anthropic.requests == []
