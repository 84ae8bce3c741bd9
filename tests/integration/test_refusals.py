"""Refusals: ``stop_reason: "refusal"`` with ``stop_details``.

Built on Claude's docs page "Handle streaming refusals"
(platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals):
the stream ends normally with ``stop_reason: "refusal"``, ``stop_details`` (``type``,
``category``, ``explanation``; both may be null) arrives on ``message_delta``, and the refused
turn must be removed or rephrased before the conversation continues.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import MAGIC_REFUSAL, FakeAnthropic
from tests.integration.test_cli import js, run
from tests.unit.core.test_unanswered import msg
from tui_chat.core.models import Message
from tui_chat.core.unanswered import (
    is_unanswered,
    left_out_note,
    refusal_category,
    refusal_message,
    refused_prompts,
    unanswered_prompts,
)
from tui_chat.engine.service import ChatService
from tui_chat.llm.client import ClaudeClient

Make = Callable[..., Awaitable[ChatService]]


def sent(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def refused_reply(text: str = "Hello..", category: str | None = "cyber") -> Message:
    from dataclasses import replace

    reply = msg("assistant", text, status="incomplete") if text else msg("assistant")
    return replace(
        reply,
        stop_reason="refusal",
        error=refusal_message(category, "declined") + " — left out",
    )


# -- core rule ----------------------------------------------------------------------------------


def test_a_refused_reply_does_not_answer_its_prompt_even_with_text() -> None:
    prompt, reply = msg("user", "q"), refused_reply()
    assert is_unanswered([prompt, reply])
    assert refusal_category(reply) == "cyber"
    # A later answer in the same turn (a retry that was not refused) answers it.
    assert not is_unanswered([prompt, reply, msg("assistant", "fine")])
    # An incomplete reply that was not refused still answers (as before).
    assert not is_unanswered([prompt, msg("assistant", "par", status="incomplete")])


def test_the_note_says_which_prompts_were_refused_and_why() -> None:
    q1, r1 = msg("user", "one"), refused_reply(category=None)
    q2, r2 = msg("user", "two"), msg("assistant", status="error")
    q3 = msg("user", "three")
    history = [q1, r1, q2, r2, q3]
    assert unanswered_prompts(history) == [q1, q2]
    refusals = refused_prompts(history)
    assert refusals == {q1.id: "none given"}
    note = left_out_note(unanswered_prompts(history), refusals)
    assert note is not None
    assert f"#{q1.id} refused: none given, #{q2.id}" in note
    assert "failed before any text or Claude refused it" in note


def test_the_stored_reason_names_the_category_and_falls_back_to_its_meaning() -> None:
    assert refusal_message("bio", None) == (
        "Claude declined to answer (refused, category: bio): "
        "the request could enable biological harm"
    )
    assert (
        refusal_message(None, None) == "Claude declined to answer (refused, category: none given)"
    )
    # An unexpected category is not trusted as a label (it could hold anything).
    assert "none given" in refusal_message("\x1b[31m", "why")


# -- the client ---------------------------------------------------------------------------------


async def test_the_client_reads_stop_reason_and_stop_details(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.push_refusal("frontier_llm", "Declined: competing models.")
    client = ClaudeClient("sk-ant-test-key-0000", base_url=fake_anthropic.base_url, max_retries=0)
    request = {"model": "claude-sonnet-4-6", "max_tokens": 100}
    result = await client.stream({**request, "messages": [{"role": "user", "content": "x"}]})
    await client.aclose()
    assert result.complete and result.stop_reason == "refusal"
    assert result.stop_details == {
        "type": "refusal",
        "category": "frontier_llm",
        "explanation": "Declined: competing models.",
    }
    assert result.text == "Hello.."
    assert result.error is not None and result.error.kind == "refused"
    assert "category: frontier_llm" in result.error.message
    assert "Declined: competing models." in result.error.message
    assert not result.error.retryable


# -- through the engine -------------------------------------------------------------------------


async def test_a_refused_turn_is_kept_marked_and_left_out_of_later_requests(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    assert (await service.send(conv.id, "first question")).error is None
    fake_anthropic.push_refusal(text="Partial words before the stop")
    outcome = await service.send(conv.id, "the refused prompt")
    assert outcome.error is not None and outcome.error.kind == "refused"
    reply = outcome.reply
    assert reply.stop_reason == "refusal" and reply.status == "incomplete"
    assert reply.text == "Partial words before the stop"  # kept as it arrived
    assert reply.error is not None and "category: cyber" in reply.error
    assert "could enable cyber harm" in reply.error
    # The context preview of a next message names it, and leaves the turn out.
    built = await service.requests.context(conv.id, "next")
    assert any(f"#{reply.id - 1} refused: cyber" in w for w in built.breakdown.warnings)
    assert "the refused prompt" not in sent(built.request)
    # The next send leaves it out; the history keeps it.
    assert (await service.send(conv.id, "another question")).error is None
    body = fake_anthropic.message_requests[-1].body
    assert "first question" in sent(body) and "another question" in sent(body)
    assert "the refused prompt" not in sent(body)
    assert "Partial words" not in sent(body)
    texts = [m.text for m in await service.messages.page(conv.id)]
    assert "the refused prompt" in texts and "Partial words before the stop" in texts
    # The stop reason and its category survive a restart.
    await service.close()
    reopened = await make_service()
    stored = {m.id: m for m in await reopened.messages.page(conv.id)}[reply.id]
    assert refusal_category(stored) == "cyber"


async def test_a_refusal_without_text_or_category_is_marked_too(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    outcome = await service.send(conv.id, f"please {MAGIC_REFUSAL}")
    reply = outcome.reply
    assert reply.status == "error" and reply.stop_reason == "refusal"
    assert refusal_category(reply) == "none given"
    # A retry sends the prompt again without the refused reply (the turn reset).
    retried = await service.retry(conv.id)
    assert retried.error is not None and retried.error.kind == "refused"  # the magic string
    body = fake_anthropic.message_requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["user"]


@pytest.mark.slow  # real tui-chat processes
def test_cli_show_and_context_say_a_reply_was_refused(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    run(isolated_env, "send", "--new", "hello", fake=fake_anthropic)
    fake_anthropic.push_refusal("bio", None, text="")
    result = run(isolated_env, "send", "bad prompt", fake=fake_anthropic)
    assert result.returncode != 0
    assert "category: bio" in result.stderr
    shown = run(isolated_env, "show", "last")
    assert "[refused: bio]" in shown.stdout
    assert "could enable biological harm" in shown.stdout
    messages = js(run(isolated_env, "show", "last", "--json"))["messages"]
    assert messages[-1]["stop_reason"] == "refusal"
    ctx = js(run(isolated_env, "context", "last", "--message", "next", "--json"))
    assert any("refused: bio" in w for w in ctx["breakdown"]["warnings"])
    assert "bad prompt" not in json.dumps(ctx["request"]["messages"])


async def test_a_summary_leaves_the_refused_turn_out_too(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.conversations.set_setting(conv.id, "summarizer", "claude-haiku-4-5")
    await service.conversations.set_setting(conv.id, "keep_recent", "2")
    assert (await service.send(conv.id, "We chose PostgreSQL for the ledger.")).error is None
    fake_anthropic.push_refusal(text="Zebraquux partial words.")
    await service.send(conv.id, "Explain the zebraquux exploit chain.")
    for text in ("The port is 5432.", "Backups run nightly.", "Thanks, that is all."):
        assert (await service.send(conv.id, text)).error is None
    await service.finish_background()
    version = await service.summaries.compact(conv.id)
    assert version.status == "completed" and "PostgreSQL" in version.text
    assert "zebraquux" not in version.text.lower()


async def test_a_refusal_survives_export_and_import(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    assert (await service.send(conv.id, "first question")).error is None
    fake_anthropic.push_refusal("bio", "Declined: biological harm.")
    await service.send(conv.id, "the refused prompt")
    path = tmp_path / "c.json"
    path.write_text(await service.transfer.export(conv.id, "json"), encoding="utf-8")
    imported = await service.transfer.import_file(path)
    messages = await service.messages.page(imported.id)
    assert [refusal_category(m) for m in messages] == [None, None, None, "bio"]
    built = await service.requests.context(imported.id, "next")
    assert "the refused prompt" not in sent(built.request)
    assert any("refused: bio" in w for w in built.breakdown.warnings)
