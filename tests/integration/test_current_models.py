"""Defaults a user picks today, and token counts for the model in use.

The current Sonnet is the default chat model and the current Haiku the standalone summarizer
(models overview, docs of 2026-10); a conversation keeps the model it was created with. The
offline count starts from the model's tokenizer generation (about 30 % more tokens from the
Claude 4.7 tokenizer on) and learns from the API's counts; the gauge says which it shows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tui_chat.config import DEFAULT_MODEL, Config
from tui_chat.core.policy import Policy
from tui_chat.core.reply_options import thinking_kind
from tui_chat.core.tokens import TOKENIZER_PRIOR, UNCOUNTED
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


def test_the_defaults_are_the_current_sonnet_and_haiku() -> None:
    assert DEFAULT_MODEL == "claude-sonnet-5-5" and Config().model == DEFAULT_MODEL
    assert Policy().summarizer_model == "claude-haiku-5-5"


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("claude-sonnet-5-5", "adaptive"),
        ("claude-haiku-5-5", "adaptive"),
        ("claude-opus-5-5", "adaptive"),
        ("claude-fable-5-2", "adaptive"),
        ("us.anthropic.claude-sonnet-5-v1:0", "adaptive"),
        ("claude-opus-4-6", "adaptive"),
        ("claude-sonnet-4-5-20250929", "enabled"),
        ("claude-opus-4-20250514", "enabled"),
        ("claude-haiku-4-5", "enabled"),
        ("gateway-llama", "enabled"),
    ],
)
def test_thinking_takes_the_form_each_model_accepts(model: str, kind: str) -> None:
    # Sonnet 5 and later answer the budget form with a 400 (Sonnet 5 overview, 2026-06-30).
    assert thinking_kind(model, ()) == kind


async def test_a_conversation_made_on_an_old_default_keeps_its_model(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    db = isolated_env / "kept.db"
    old = await ChatService.open(Config(db_path=db, api_key=None, model="claude-sonnet-4-6"))
    made = await old.conversations.new()
    await old.close()
    new = await ChatService.open(Config(db_path=db, api_key=None))
    try:
        assert (await new.conversations.get(made.id)).model == "claude-sonnet-4-6"
        assert (await new.conversations.new()).model == "claude-sonnet-5-5"
    finally:
        await new.close()


async def test_the_count_starts_from_the_tokenizer_generation_and_says_so(
    make_service: Make,
) -> None:
    service = await make_service(api_key=None)
    newer = await service.conversations.new(model="claude-sonnet-5-5")
    older = await service.conversations.new(model="claude-sonnet-4-6")
    text = "The quick brown fox jumps over the lazy dog. " * 40
    a = await service.requests.gauge(newer.id, text)
    b = await service.requests.gauge(older.id, text)
    assert a.calibration == TOKENIZER_PRIOR[2] == 1.3 and b.calibration == 1.0
    assert a.input_tokens == b.input_tokens and a.used > b.used
    assert "newer tokenizer" in a.counted and UNCOUNTED in a.counted
    assert "older tokenizer" in b.counted


async def test_count_tokens_checks_the_estimate_where_a_key_is_set(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conversation = await service.conversations.new(model="claude-sonnet-5-5")
    assert await service.requests.check_count(conversation.id) is None  # nothing to count
    draft = "How many tokens does this question take on the newer tokenizer? " * 10
    before = await service.requests.gauge(conversation.id, draft)
    counted = await service.requests.check_count(conversation.id, draft)
    assert counted is not None and counted > 0
    assert any(r.path == "/v1/messages/count_tokens" for r in fake_anthropic.requests)
    after = await service.requests.gauge(conversation.id, draft)
    assert UNCOUNTED not in after.counted and "from 1 API count" in after.counted
    assert after.calibration == pytest.approx(counted / before.input_tokens, rel=0.01)
    offline = await make_service(api_key=None)
    assert await offline.requests.check_count(conversation.id) is None


async def test_fast_mode_is_asked_where_the_model_has_it_and_billed_from_usage_speed(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    from tui_chat.llm.models import cost_usd, model_info

    service = await make_service()
    opus = await service.conversations.new(model="claude-opus-5-5")
    await service.conversations.set_setting(opus.id, "fast", "on")
    fake_anthropic.push_reply("Fast enough.")
    outcome = await service.send(opus.id, "Answer quickly, please.")
    assert outcome.error is None, outcome.error
    sent = fake_anthropic.message_requests[-1].body
    assert sent["speed"] == "fast"
    usage = outcome.reply.usage
    assert usage is not None and usage.speed == "fast"
    standard = cost_usd(model_info("claude-opus-5-5"), replace(usage, speed="standard"))
    assert await service.costs.of(opus.id) == pytest.approx(2 * standard)
    # Sonnet 5.5 has no fast mode: nothing is asked, and the gauge says why.
    sonnet = await service.conversations.new(model="claude-sonnet-5-5")
    await service.conversations.set_setting(sonnet.id, "fast", "on")
    built = await service.requests.context(sonnet.id, "And you?")
    assert "speed" not in built.request
    assert any("fast mode is not sent" in w for w in built.breakdown.warnings)


async def test_each_turn_asks_why_it_missed_the_cache_and_keeps_the_answer(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    from tui_chat.engine.usage import report_lines

    service = await make_service()
    conversation = await service.conversations.new(model="claude-sonnet-5-5")
    first = await service.send(conversation.id, "The first question, about caching.")
    second = await service.send(conversation.id, "A second question after it.")
    assert first.error is None and second.error is None
    chats = fake_anthropic.message_requests
    assert chats[-2].body["diagnostics"] == {"previous_message_id": None}  # opting in
    previous = chats[-1].body["diagnostics"]["previous_message_id"]
    assert isinstance(previous, str) and previous.startswith("msg_")
    assert second.reply.usage is not None and second.reply.usage.cache_miss == ""
    # The model changes: the next turn says why the cache could not be reused.
    await service.conversations.set_setting(conversation.id, "model", "claude-opus-5-5")
    third = await service.send(conversation.id, "And now on another model.")
    usage = third.reply.usage
    assert usage is not None and usage.cache_miss == "model_changed"
    assert usage.cache_missed_tokens > 0
    stored = (await service.messages.history(conversation.id))[-1]
    assert stored.usage is not None and stored.usage.cache_miss == "model_changed"
    report = await service.costs.report()
    assert any(r.cache_misses == {"model_changed": 1} for r in report.rows)
    assert any("model changed ×1" in line for line in report_lines(report))


async def test_a_gateway_that_refuses_diagnostics_is_asked_again_without_them(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conversation = await service.conversations.new()
    fake_anthropic.push_error(400, message="diagnostics: Extra inputs are not permitted")
    outcome = await service.send(conversation.id, "Hello through a gateway.")
    assert outcome.error is None, outcome.error
    bodies = [r.body for r in fake_anthropic.message_requests]
    assert "diagnostics" in bodies[0] and "diagnostics" not in bodies[1]
    again = await service.send(conversation.id, "And again.")
    assert again.error is None
    assert "diagnostics" not in fake_anthropic.message_requests[-1].body
