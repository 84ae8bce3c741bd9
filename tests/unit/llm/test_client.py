"""ClaudeClient, error mapping and the model table, driven through the real SDK against
the fake Anthropic server."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, fake_tokens
from tui_chat.core.models import Usage
from tui_chat.llm.client import ClaudeClient, StreamResult
from tui_chat.llm.errors import ChatError, map_error, scrub
from tui_chat.llm.models import cost_usd, model_info

KEY = "sk-ant-api03-testkey-0123456789abcdef"
MODEL = "claude-haiku-4-5"


def make_request(text: str = "Hello there. How are you today?", **extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 256,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": text}],
    }
    request.update(extra)
    return request


@pytest.fixture
async def client(fake_anthropic: FakeAnthropic) -> AsyncIterator[ClaudeClient]:
    claude = ClaudeClient(KEY, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=0)
    yield claude
    await claude.aclose()


# -- streaming ----------------------------------------------------------------------------


async def test_stream_reply_text_usage_and_chunks(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    reply = "The quick brown fox jumps over the lazy dog. It was not amused at all."
    fake_anthropic.push_reply(reply)
    chunks: list[str] = []

    result = await client.stream(make_request(metadata={"user_id": "u-1"}), on_text=chunks.append)

    assert result.ok and result.complete and result.error is None
    assert result.text == reply
    assert "".join(chunks) == reply
    assert len(chunks) > 3  # really streamed, not one blob
    assert result.content == [{"type": "text", "text": reply}]
    assert result.stop_reason == "end_turn"
    assert result.model == MODEL
    assert result.message_id and result.message_id.startswith("msg_")
    expected_input = fake_tokens("You are terse.") + fake_tokens("Hello there. How are you today?")
    assert result.usage == Usage(input_tokens=expected_input, output_tokens=fake_tokens(reply))
    body = fake_anthropic.last.body
    assert body["stream"] is True and body["metadata"] == {"user_id": "u-1"}


async def test_a_client_preloaded_in_another_thread_streams_on_the_loop_that_sends(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    """The TUI's warm-up thread builds the SDK client; the first send, on the event loop,
    takes it over and streams, and so does a later loop (a fresh client of its own)."""
    await asyncio.to_thread(client.preload)
    fake_anthropic.push_reply("Built in a thread, sent from the loop.")
    result = await client.stream(make_request())
    assert result.ok and result.text == "Built in a thread, sent from the loop."

    def another_loop() -> StreamResult:
        fake_anthropic.push_reply("And from another loop.")
        return asyncio.run(client.stream(make_request()))

    assert (await asyncio.to_thread(another_loop)).text == "And from another loop."


async def test_the_sdk_is_built_off_the_event_loop(
    client: ClaudeClient, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a preloaded client the first call builds one (importing the SDK: seconds of CPU
    on a loaded machine) in a thread, so the loop's frames and a summary call's timeout are
    not held behind it."""
    built_on: list[threading.Thread] = []
    new_sdk = client._new_sdk

    def recording() -> Any:
        built_on.append(threading.current_thread())
        return new_sdk()

    monkeypatch.setattr(client, "_new_sdk", recording)
    fake_anthropic.push_reply("Built in a thread.")
    result = await client.stream(make_request())
    assert result.ok and result.text == "Built in a thread."
    assert len(built_on) == 1 and built_on[0] is not threading.main_thread()


async def test_default_echo_reply_and_async_on_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    received: list[str] = []

    async def on_text(chunk: str) -> None:
        await asyncio.sleep(0)
        received.append(chunk)

    result = await client.stream(make_request("What is 2 + 2?"), on_text=on_text)

    assert result.text == "Reply to: What is 2 + 2?"
    assert "".join(received) == result.text


async def test_on_text_exception_propagates(client: ClaudeClient) -> None:
    def on_text(chunk: str) -> None:
        raise KeyError("ui is gone")

    with pytest.raises(KeyError, match="ui is gone"):
        await client.stream(make_request(), on_text=on_text)


async def test_tool_use_reply_content(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_tool_use("read_file", {"path": "src/app.py", "lines": [1, 20]})

    result = await client.stream(make_request())

    assert result.ok and result.stop_reason == "tool_use"
    assert result.content[0] == {"type": "text", "text": "Let me check."}
    tool = result.content[1]
    assert tool["type"] == "tool_use" and tool["name"] == "read_file"
    assert tool["input"] == {"path": "src/app.py", "lines": [1, 20]}
    assert tool["id"].startswith("toolu_")


async def test_thinking_block_kept(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_reply("Four.", thinking="Two plus two is four.")

    result = await client.stream(make_request())

    assert result.content[0] == {
        "type": "thinking",
        "thinking": "Two plus two is four.",
        "signature": fake_anthropic.signature("Two plus two is four."),
    }
    assert result.text == "Four."


async def test_max_tokens_stop_reason(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_reply("word " * 200)

    result = await client.stream(make_request(max_tokens=10))

    assert result.complete and result.stop_reason == "max_tokens"
    assert result.usage.output_tokens == 10
    assert len(result.text) == 40


async def test_complete_uses_same_semantics(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    system = "Summarize the conversation. Answer inside <summary></summary> tags."
    transcript = "User: We deploy to fly.io. Then we test.\nAssistant: Use port 8080. It works."
    result = await client.complete(make_request(transcript, system=system))

    assert result.ok
    assert result.text.startswith("<summary>") and result.text.endswith("</summary>")
    assert "We deploy to fly.io." in result.text and "Use port 8080." in result.text
    assert "Then we test." not in result.text  # first sentences only
    assert fake_anthropic.last.is_summary


async def test_generated_summary_skips_instructions_around_tagged_sections(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    prompt = (
        "Summarize the conversation below. Keep identifiers.\n"
        "<messages>\n[turn 1] USER: Fix src/app.py line 42. It crashes.\n\n"
        "[turn 1] ASSISTANT: Done, the bug was an off-by-one. Tests pass.\n</messages>\n"
        "Wrap the whole summary in <summary></summary> tags."
    )
    result = await client.complete(make_request(prompt, system="Use <summary> tags."))

    assert result.text == (
        "<summary>\n- [turn 1] USER: Fix src/app.py line 42.\n"
        "- [turn 1] ASSISTANT: Done, the bug was an off-by-one.\n</summary>"
    )


async def test_prompt_cache_usage_reported(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.cache_min_tokens = 0
    memory = "Memory block: the project uses PostgreSQL 16 and deploys on Fridays. " * 4
    system = [
        {"type": "text", "text": "You are terse."},
        {"type": "text", "text": memory, "cache_control": {"type": "ephemeral"}},
    ]
    first = await client.stream(make_request(system=system))
    second = await client.stream(make_request("A different question?", system=system))

    prefix = fake_tokens("You are terse.") + fake_tokens(memory)
    assert first.usage.cache_creation_input_tokens == prefix
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == prefix
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == fake_tokens("A different question?")
    assert second.usage.total_input == prefix + fake_tokens("A different question?")


# -- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "needle"),
    [
        (400, "bad_request", "rejected"),
        (401, "auth", "API key"),
        (403, "permission", "not allowed"),
        (404, "not_found", "model not found: check the model name"),
        (413, "too_large", "too large"),
        (429, "rate_limit", "rate limited"),
        (500, "server", "internal error"),
        (529, "overloaded", "overloaded"),
    ],
)
async def test_error_status_mapped(
    client: ClaudeClient, fake_anthropic: FakeAnthropic, status: int, kind: str, needle: str
) -> None:
    fake_anthropic.push_error(status, retry_after=3 if status == 429 else None)

    result = await client.stream(make_request())

    assert not result.complete and result.content == [] and result.text == ""
    assert result.error is not None
    assert result.error.kind == kind
    assert result.error.status == status
    assert needle in result.error.message
    assert result.error.hint
    assert len(fake_anthropic.message_requests) == 1  # max_retries=0: no retry
    if status == 429:
        assert result.error.retry_after == 3.0
        assert "3 s" in result.error.hint
        assert result.error.retryable
    if status in (400, 401, 403, 404):
        assert not result.error.retryable


async def test_prompt_too_long_is_too_large(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.context_window = 5

    result = await client.stream(make_request("x" * 100))

    assert result.error is not None and result.error.kind == "too_large"
    assert "prompt is too long" in result.error.message
    assert "compact" in result.error.hint


async def test_invalid_tool_pairing_is_bad_request_with_api_message(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}],
        },
        {"role": "user", "content": "Never mind."},
    ]
    result = await client.stream(make_request(messages=messages))

    assert result.error is not None and result.error.kind == "bad_request"
    assert "`tool_use` ids were found without `tool_result` blocks" in result.error.message


async def test_sdk_retry_after_529_then_success(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_error(529, retry_after=0.01)
    retrying = ClaudeClient(KEY, base_url=fake_anthropic.base_url, timeout=5.0, max_retries=1)

    result = await retrying.stream(make_request())

    assert result.ok and result.text.startswith("Reply to:")
    assert [r.status for r in fake_anthropic.message_requests] == [529, 200]
    await retrying.aclose()


async def test_sse_error_mid_stream_keeps_partial_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_sse_error(2, text="one two three four five six seven eight nine")
    chunks: list[str] = []

    result = await client.stream(make_request(), on_text=chunks.append)

    assert not result.complete
    assert result.error is not None and result.error.kind == "overloaded"
    assert "during the reply" in result.error.message
    assert result.text == "one two three four five six "
    assert "".join(chunks) == result.text
    assert result.content == [{"type": "text", "text": result.text}]
    assert result.stop_reason is None
    assert result.usage.input_tokens > 0  # message_start was received


async def test_unknown_sse_error_type_is_stream_error(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_sse_error(1, error_type="weird_error", message="something odd")

    result = await client.stream(make_request())

    assert result.error is not None and result.error.kind == "stream_error"
    assert "weird_error" in result.error.message and "something odd" in result.error.message


async def test_dropped_connection_is_incomplete_with_partial_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_drop(1, text="alpha beta gamma delta epsilon zeta")
    chunks: list[str] = []

    result = await client.stream(make_request(), on_text=chunks.append)

    assert not result.complete and not result.ok
    assert result.error is not None and result.error.kind == "incomplete"
    assert result.error.message == "the connection ended before the reply finished"
    assert result.text == "alpha beta gamma " == "".join(chunks)
    assert result.stop_reason is None


async def test_reset_connection_is_connection_error_with_partial_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_drop(2, abrupt=True, text="alpha beta gamma delta epsilon zeta eta")

    result = await client.stream(make_request())

    assert not result.complete
    assert result.error is not None and result.error.kind == "connection"
    assert result.text == "alpha beta gamma delta epsilon zeta "


async def test_drop_before_any_text(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_drop(0)

    result = await client.stream(make_request())

    assert result.error is not None and result.error.kind == "incomplete"
    assert result.content == [] and result.text == ""  # the empty text block is left out


async def test_malformed_sse_is_stream_error(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_malformed(1, text="first second third fourth")

    result = await client.stream(make_request())

    assert not result.complete
    assert result.error is not None and result.error.kind == "stream_error"
    assert "malformed" in result.error.message
    assert result.text == "first second third "


async def test_timeout_before_headers(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_hang(10)
    impatient = ClaudeClient(KEY, base_url=fake_anthropic.base_url, timeout=0.3, max_retries=0)
    started = time.monotonic()

    result = await impatient.stream(make_request())

    assert time.monotonic() - started < 3
    assert result.error is not None and result.error.kind == "timeout"
    assert result.content == [] and not result.complete
    await impatient.aclose()


async def test_timeout_mid_stream_keeps_partial(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_hang(10, after_chunks=1, text="slow and steady wins nothing")
    impatient = ClaudeClient(KEY, base_url=fake_anthropic.base_url, timeout=0.3, max_retries=0)

    result = await impatient.stream(make_request())

    assert result.error is not None and result.error.kind == "timeout"
    assert result.text == "slow and steady "
    await impatient.aclose()


async def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    offline = ClaudeClient(KEY, base_url=f"http://127.0.0.1:{port}", timeout=2.0, max_retries=0)

    result = await offline.stream(make_request())

    assert result.error is not None and result.error.kind == "connection"
    assert "127.0.0.1" in result.error.message
    assert "base_url" in result.error.hint


async def test_no_key_makes_no_request(fake_anthropic: FakeAnthropic) -> None:
    keyless = ClaudeClient(None, base_url=fake_anthropic.base_url)
    blank = ClaudeClient("   ", base_url=fake_anthropic.base_url)

    result = await keyless.stream(make_request())

    assert not keyless.has_key and not blank.has_key
    assert result.error is not None and result.error.kind == "no_key"
    assert "ANTHROPIC_API_KEY" in result.error.hint and "config.toml" in result.error.hint
    assert not result.complete
    with pytest.raises(ChatError) as raised:
        await blank.count_tokens(make_request())
    assert raised.value.kind == "no_key"
    assert fake_anthropic.requests == []


async def test_cancel_propagates_after_delivering_text(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_reply("w " * 400, chunk_delay=0.02, words_per_chunk=1)
    chunks: list[str] = []
    first = asyncio.Event()

    def on_text(chunk: str) -> None:
        chunks.append(chunk)
        if len(chunks) == 3:
            first.set()

    task = asyncio.create_task(client.stream(make_request(), on_text=on_text))
    await asyncio.wait_for(first.wait(), 120)  # a bound for a hang, not a timing
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert 3 <= len(chunks) < 400
    deadline = time.monotonic() + 120  # a bound for a hang, not a timing
    while not fake_anthropic.last.disconnected and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert fake_anthropic.last.disconnected  # the HTTP stream was closed


def test_client_survives_a_new_event_loop(fake_anthropic: FakeAnthropic) -> None:
    reused = ClaudeClient(KEY, base_url=fake_anthropic.base_url, max_retries=0)
    first = asyncio.run(reused.stream(make_request("first run")))
    second = asyncio.run(reused.stream(make_request("second run")))
    assert first.text == "Reply to: first run" and second.text == "Reply to: second run"
    asyncio.run(reused.aclose())


# -- count_tokens ---------------------------------------------------------------------------


async def test_count_tokens(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    request = make_request(metadata={"user_id": "u"}, temperature=0.2)

    count = await client.count_tokens(request)

    assert count == fake_tokens("You are terse.") + fake_tokens("Hello there. How are you today?")
    recorded = fake_anthropic.requests[-1]
    assert recorded.path == "/v1/messages/count_tokens"
    assert set(recorded.body) == {"model", "system", "messages"}


async def test_count_tokens_error_raises(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_error(429, endpoint="count_tokens", retry_after=2)

    with pytest.raises(ChatError) as raised:
        await client.count_tokens(make_request())

    assert raised.value.kind == "rate_limit" and raised.value.retry_after == 2.0


# -- secrets ---------------------------------------------------------------------------------


async def test_key_never_in_error_text(client: ClaudeClient, fake_anthropic: FakeAnthropic) -> None:
    other = "sk-ant-api03-someoneelse-ZZZZZZZZZZ"
    fake_anthropic.push_error(401, message=f"invalid x-api-key {KEY} (also tried {other})")

    result = await client.stream(make_request())

    assert result.error is not None and result.error.kind == "auth"
    text = json.dumps(result.error.to_dict()) + str(result.error) + repr(result.error)
    assert KEY not in text and other not in text and "sk-ant" not in text
    assert "[redacted]" in result.error.message
    assert KEY not in repr(client)


async def test_configured_key_scrubbed_even_without_sk_prefix(
    fake_anthropic: FakeAnthropic,
) -> None:
    odd_key = "gateway-token-7f3a9c2e"
    gateway = ClaudeClient(odd_key, base_url=fake_anthropic.base_url, max_retries=0)
    fake_anthropic.push_error(403, message=f"token {odd_key} may not use {MODEL}")

    result = await gateway.stream(make_request())

    assert result.error is not None and result.error.kind == "permission"
    assert odd_key not in result.error.display
    await gateway.aclose()


def test_scrub_patterns() -> None:
    assert scrub("key sk-ant-api03-abcdEFGH_1234-xyz here") == "key [redacted] here"
    assert scrub('{"x-api-key": "abc123"}') == '{"x-api-key": "[redacted]"}'
    assert scrub("Authorization: Bearer tok_123") == "Authorization: [redacted]"
    assert scrub("a task-force1 and risk-assessment") == "a task-force1 and risk-assessment"
    assert scrub("use hunter22 now", ["hunter22"]) == "use [redacted] now"
    assert "secret99" not in ChatError("auth", "bad sk-secret99xyz").message


async def test_count_tokens_unsupported_endpoint(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_error(404, endpoint="count_tokens", message="Not found")

    with pytest.raises(ChatError) as raised:
        await client.count_tokens(make_request())

    assert raised.value.kind == "not_found"
    assert "token counting" in raised.value.message


def test_chat_error_survives_pickle_and_copy() -> None:
    error = ChatError("rate_limit", "slow down", "wait", status=429, retry_after=2.5)
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert clone.to_dict() == error.to_dict()
        assert str(clone) == "slow down"


def test_map_error_on_non_sdk_exceptions() -> None:
    error = ChatError("server", "boom")
    assert map_error(error) is error
    decoded = map_error(json.JSONDecodeError("Expecting value", "x", 0))
    assert decoded.kind == "stream_error"
    with pytest.raises(ValueError):
        ChatError("nonsense", "x")  # type: ignore[arg-type]


def test_stream_result_defaults() -> None:
    result = StreamResult()
    assert result.content == [] and result.usage == Usage() and not result.ok


# -- model table ----------------------------------------------------------------------------


def test_model_table_known_models() -> None:
    opus = model_info("claude-opus-4-6")
    assert (opus.context_window, opus.max_output, opus.input_price, opus.output_price) == (
        1_000_000,
        128_000,
        5.0,
        25.0,
    )
    assert opus.known and opus.usable_window == 872_000
    sonnet = model_info("claude-sonnet-4-6")
    assert (sonnet.context_window, sonnet.max_output) == (1_000_000, 64_000)
    assert model_info("claude-sonnet-4-5").context_window == 200_000
    haiku = model_info("claude-haiku-4-5")
    assert (haiku.context_window, haiku.max_output, haiku.input_price, haiku.output_price) == (
        200_000,
        64_000,
        1.0,
        5.0,
    )
    assert model_info("claude-opus-4-1").input_price == 15.0
    assert model_info("claude-3-5-haiku-20241022").max_output == 8_192


@pytest.mark.parametrize(
    ("given", "base"),
    [
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("claude-opus-4-20250514", "claude-opus-4-0"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("anthropic/claude-opus-4-6", "claude-opus-4-6"),
    ],
)
def test_model_id_spellings(given: str, base: str) -> None:
    info = model_info(given)
    assert info.known and info.id == base


def test_unknown_model_fallback_and_overrides() -> None:
    unknown = model_info("my-local-llama")
    assert not unknown.known and unknown.id == "my-local-llama"
    assert (unknown.context_window, unknown.max_output) == (200_000, 8_192)

    priced = model_info("my-local-llama", {"input_price": 0, "output_price": 0})
    assert not priced.known and priced.input_price == 0.0
    sized = model_info("my-local-llama", {"context_window": 32_768, "max_output": 4_096})
    assert sized.known and sized.usable_window == 28_672
    beta = model_info("claude-sonnet-4-5-20250929", {"context_window": 1_000_000})
    assert beta.context_window == 1_000_000 and beta.max_output == 64_000


@pytest.mark.parametrize(
    "overrides",
    [
        {"context_windw": 1000},
        {"context_window": "lots"},
        {"context_window": -1},
        {"max_output": 1.5},
        {"input_price": "free"},
        {"output_price": -2},
        {"context_window": 1000, "max_output": 2000},
        {"max_output": True},
    ],
)
def test_invalid_overrides_rejected(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        model_info("claude-haiku-4-5", overrides)


def test_cost_usd_with_cache() -> None:
    sonnet = model_info("claude-sonnet-4-6")  # $3 in, $15 out
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
    )
    assert cost_usd(sonnet, usage) == pytest.approx(3.0 + 1.5 + 3.75 + 0.3)
    assert cost_usd(sonnet, Usage()) == 0.0


# -- start-up cost and the standalone server ---------------------------------------------------


@pytest.mark.slow  # a real process
def test_import_client_does_not_load_sdk() -> None:
    code = (
        "import sys, tui_chat.llm, tui_chat.llm.client, tui_chat.llm.errors, tui_chat.llm.models;"
        "bad = [m for m in ('anthropic', 'httpx2', 'textual', 'aiosqlite') if m in sys.modules];"
        "print(bad)"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.slow  # a real process
async def test_standalone_server_subprocess() -> None:
    script = Path(__file__).resolve().parents[3] / "tests/fakes/fake_anthropic.py"
    proc = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--reply", "Standalone says hi."],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        standalone = ClaudeClient(KEY, base_url=url, max_retries=0)
        first = await standalone.stream(make_request())
        assert first.text == "Standalone says hi."

        push = urllib.request.Request(
            f"{url}/_fake/push",
            data=json.dumps({"kind": "error", "status": 529}).encode(),
            method="POST",
        )
        await asyncio.to_thread(urllib.request.urlopen, push)
        second = await standalone.stream(make_request())
        assert second.error is not None and second.error.kind == "overloaded"
        with urllib.request.urlopen(f"{url}/_fake/requests") as response:
            recorded = json.load(response)
        assert [r["status"] for r in recorded] == [200, 529]
        await standalone.aclose()
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# -- the fake server itself (the whole suite relies on it) ------------------------------------


def _turn(role: str, text: str, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": role, "content": [block]}


async def test_fake_cache_follows_moving_breakpoint(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.cache_min_tokens = 0
    u1, a1, u2 = "first question " * 10, "first answer " * 10, "second question " * 10
    first = await client.stream(make_request(messages=[_turn("user", u1, cached=True)]))
    second = await client.stream(
        make_request(
            messages=[_turn("user", u1), _turn("assistant", a1), _turn("user", u2, cached=True)]
        )
    )

    system = fake_tokens("You are terse.")
    assert first.usage.cache_creation_input_tokens == system + fake_tokens(u1)
    assert second.usage.cache_read_input_tokens == system + fake_tokens(u1)
    assert second.usage.cache_creation_input_tokens == fake_tokens(a1) + fake_tokens(u2)
    assert second.usage.input_tokens == 0

    fake_anthropic.clear_cache()
    third = await client.stream(make_request(messages=[_turn("user", u1, cached=True)]))
    assert third.usage.cache_read_input_tokens == 0


async def test_fake_cache_minimum_and_prefix_change(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    small = await client.stream(make_request(messages=[_turn("user", "tiny", cached=True)]))
    assert small.usage.cache_creation_input_tokens == 0  # below Haiku 4.5's 4,096 minimum

    fake_anthropic.cache_min_tokens = 0
    await client.stream(make_request(messages=[_turn("user", "one " * 50, cached=True)]))
    changed = await client.stream(
        make_request(system="Changed prompt.", messages=[_turn("user", "one " * 50, cached=True)])
    )
    assert changed.usage.cache_read_input_tokens == 0  # the prefix changed before the breakpoint
    assert changed.usage.cache_creation_input_tokens > 0


async def test_fake_non_streaming_create(fake_anthropic: FakeAnthropic) -> None:
    import anthropic

    fake_anthropic.push_tool_use("lookup", {"q": "x"}, text=None)
    sdk = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake_anthropic.base_url, max_retries=0)
    message = await sdk.messages.create(**make_request())
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["tool_use"]
    assert message.usage.input_tokens == fake_anthropic.input_tokens(make_request())
    fake_anthropic.push_error(404)
    with pytest.raises(anthropic.NotFoundError):
        await sdk.messages.create(**make_request())
    await sdk.close()


async def test_fake_targets_times_and_predicates(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    summary_request = make_request("Summarize.", system="Reply in <summary> tags.")
    fake_anthropic.push_summary("<summary>scripted</summary>")
    fake_anthropic.push_reply("twice", target="chat", times=2)
    fake_anthropic.push_reply("about cats", when=lambda r: "cats" in json.dumps(r.body))

    assert (await client.stream(make_request())).text == "twice"
    assert (await client.complete(summary_request)).text == "<summary>scripted</summary>"
    assert (await client.stream(make_request())).text == "twice"
    assert (await client.stream(make_request())).text.startswith("Reply to:")
    assert (await client.stream(make_request("I like cats."))).text == "about cats"
    assert fake_anthropic.pending == 0
    assert [r.is_summary for r in fake_anthropic.message_requests] == [
        False,
        True,
        False,
        False,
        False,
    ]


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([_turn("assistant", "hi"), _turn("user", "yo")], 'first message must use the "user"'),
        ([_turn("user", "")], "text content blocks must be non-empty"),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9"}]}],
            "unexpected `tool_use_id`",
        ),
        ([_turn("user", f"m{i}", cached=True) for i in range(5)], "A maximum of 4 blocks"),
    ],
)
async def test_fake_validates_like_the_api(
    client: ClaudeClient, fake_anthropic: FakeAnthropic, messages: Any, fragment: str
) -> None:
    result = await client.stream(make_request(messages=messages))

    assert result.error is not None and result.error.status == 400
    assert fragment in result.error.message
    assert fake_anthropic.last.behaviour == "invalid"


async def test_fake_rejects_missing_or_wrong_key(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.api_key = "sk-ant-the-right-one-123"
    wrong = ClaudeClient(KEY, base_url=fake_anthropic.base_url, max_retries=0)
    right = ClaudeClient("sk-ant-the-right-one-123", base_url=fake_anthropic.base_url)

    failed = await wrong.stream(make_request())
    assert failed.error is not None and failed.error.kind == "auth"
    assert (await right.stream(make_request())).ok
    await wrong.aclose()
    await right.aclose()


async def test_fake_concurrent_streams_and_pacing(
    client: ClaudeClient, fake_anthropic: FakeAnthropic
) -> None:
    """Eight paced streams are served at once: every one is open, held mid-stream by a gate,
    before any ends (a state, not a stopwatch), and each then finishes with its own text."""
    fake_anthropic.chunk_delay = 0.01
    fake_anthropic.words_per_chunk = 1
    gate = threading.Event()
    fake_anthropic.push(kind="hang", gate=gate, hang_seconds=600, times=8)

    streams = [
        asyncio.create_task(client.stream(make_request(f"question number {i} " * 3)))
        for i in range(8)
    ]
    assert len(await fake_anthropic.wait_for(8, timeout=120)) == 8
    assert not any(task.done() for task in streams)
    gate.set()
    results = await asyncio.gather(*streams)

    assert all(r.ok for r in results)
    assert sorted(r.text for r in results) == sorted(
        f"Reply to: {(f'question number {i} ' * 3).strip()}" for i in range(8)
    )
