"""Which summarizer writes a version, and the call it makes.

- ``extractive``: offline (also ``auto``/``claude``/``server`` without an API key).
- ``claude`` (and ``auto`` with a key): a continuation of the conversation's cached prefix —
  the preceding chat request repeated byte for byte, its reply, then the instruction — on the
  conversation's own model, whenever that request carried every message of the span and its
  reply is the turn that just finished. A fresh process (a CLI ``compact``) rebuilds that
  request from the stored history — the build is deterministic — while the last reply is young
  enough for its cache to be warm (:func:`rebuilt_turn`). Otherwise (a span longer than one
  call, a span the last request did not carry, a cold cache) a standalone prompt to
  ``summarizer_model``; and also when that fresh call costs less than the continuation, both
  priced at their models' cards (:func:`tui_chat.core.payback.cheaper_call`: a long Opus
  prefix read from the cache against a Haiku call over the span alone). A model id as the
  setting asks that model standalone, as before.
- ``server``: Claude's on-demand compaction (:mod:`.server_summary`), falling
  back to ``claude`` when the model or endpoint does not support it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tui_chat.core.models import Conversation, Message, SummaryCall
from tui_chat.core.payback import cheaper_call
from tui_chat.core.policy import Policy
from tui_chat.core.request import BuiltRequest
from tui_chat.core.summarize import ExtractiveSummarizer, ModelSummarizer, SummaryInput
from tui_chat.core.summarize import SummaryOutput as Output
from tui_chat.core.summarize.continuation import continuation_prompt
from tui_chat.llm.client import ClaudeClient
from tui_chat.llm.models import ModelInfo
from tui_chat.llm.summarizer import claude_complete, continuation_complete

__all__ = ["SentTurn", "SentTurns", "Summarizer", "call_cost", "choose", "rebuilt_turn"]

CLAUDE_NAMES = frozenset({"auto", "claude"})
"""Settings that mean "Claude writes the summary" (continuation when possible)."""


class Summarizer(Protocol):
    """Anything that makes a version's content."""

    name: str

    async def summarize(self, request: SummaryInput) -> Output:
        """Make the new version's content."""
        ...


@dataclass(frozen=True)
class SentTurn:
    """The last chat request of a conversation, with the reply it got."""

    request: dict[str, Any]
    """The request exactly as sent."""
    sent_ids: frozenset[int]
    """Stored messages it carried."""
    reply: Message
    """The complete reply."""


class SentTurns:
    """Remembers, per conversation, the chat request a continuation summary can repeat."""

    def __init__(self) -> None:
        self._turns: dict[str, SentTurn] = {}

    def remember(self, conversation_id: str, built: BuiltRequest, reply: Message) -> None:
        """Keep the request of a finished turn (a reply that is complete and calls no tool)."""
        if reply.status != "complete" or reply.has_tool_use:
            self._turns.pop(conversation_id, None)
            return
        self._turns[conversation_id] = SentTurn(
            request=built.request, sent_ids=frozenset(built.sent_message_ids), reply=reply
        )

    def get(self, conversation_id: str) -> SentTurn | None:
        """The remembered turn, if any."""
        return self._turns.get(conversation_id)


CACHE_LIFETIMES = {"5m": 300.0, "1h": 3_600.0}
"""Seconds a prompt-cache entry lives, by the lifetime its breakpoints asked for."""
WARM_MARGIN = 0.8
"""A rebuilt request is continued only within this share of the cache's lifetime."""


def rebuilt_turn(built: BuiltRequest, reply: Message, age_seconds: float) -> SentTurn | None:
    """The chat request that got ``reply``, rebuilt: ``built`` is the conversation's request
    with no draft (the history ending with ``reply``), so without its last message it is the
    request that was sent, its breakpoint back on the prompt.

    Args:
        built: The request built now, with no new message.
        reply: The conversation's last message: a complete reply that calls no tool.
        age_seconds: How long ago the reply was made.

    Returns:
        The turn to continue, or ``None`` when the cache has likely expired or the request
        does not end with the reply.
    """
    messages = built.request.get("messages") or []
    if reply.status != "complete" or reply.has_tool_use or len(messages) < 2:
        return None
    if age_seconds > WARM_MARGIN * CACHE_LIFETIMES.get(built.breakdown.cache_ttl, 300.0):
        return None
    if messages[-1]["role"] != "assistant" or not built.sent_message_ids:
        return None
    if built.sent_message_ids[-1] != reply.id:
        return None
    mark: dict[str, Any] = {"type": "ephemeral"}
    if built.breakdown.cache_ttl == "1h":
        mark["ttl"] = "1h"
    head = [dict(m) for m in messages[:-1]]
    content = [dict(b) for b in head[-1]["content"]]
    content[-1]["cache_control"] = mark
    head[-1]["content"] = content
    return SentTurn(
        request={**built.request, "messages": head},
        sent_ids=frozenset(built.sent_message_ids[:-1]),
        reply=reply,
    )


def _continuable(
    turn: SentTurn | None, conversation: Conversation, span: Sequence[Message]
) -> bool:
    if turn is None or not span or turn.request.get("model") != conversation.model:
        return False
    return turn.reply.id > span[-1].id and all(m.id in turn.sent_ids for m in span)


def _continuation_pays(policy: Policy, sent: SentTurn, span: Sequence[Message]) -> bool:
    """Whether continuing the cached chat request costs no more than a standalone call."""
    spanned = sum(m.token_count for m in span)
    usage = sent.reply.usage
    prefix = usage.total_input if usage is not None and usage.total_input else spanned
    cap = min(policy.summary_max_tokens, policy.summarizer_max_tokens)
    written = min(cap, int(policy.compression_rate * spanned))
    calls = cheaper_call(policy, prefix=prefix, span=spanned, written=written)
    return calls.cheaper == "continuation"


def choose(
    client: ClaudeClient,
    conversation: Conversation,
    policy: Policy,
    chunks: Sequence[Sequence[Message]],
    sent: SentTurn | None,
    server: Callable[[Summarizer], Summarizer],
    after: int = 0,
) -> Summarizer:
    """The summarizer for one compaction.

    Args:
        client: The Claude client.
        conversation: The conversation.
        policy: Its policy.
        chunks: The span, in the whole-turn chunks the worker folds one call at a time.
        sent: The conversation's last chat request and reply, if remembered.
        server: Wraps the ``claude`` summarizer into the ``server`` one (its fallback).
        after: Messages of the conversation after the span (kept verbatim).
    """
    name = policy.summarizer
    if name == "extractive" or not client.has_key:
        return ExtractiveSummarizer()
    if name not in CLAUDE_NAMES and name != "server":
        return ModelSummarizer(
            claude_complete(client, name, timeout=policy.summarizer_timeout), name=name
        )
    claude: Summarizer
    span = chunks[0] if len(chunks) == 1 else ()
    if (
        sent is not None
        and _continuable(sent, conversation, span)
        and _continuation_pays(policy, sent, span)
    ):
        claude = ModelSummarizer(
            continuation_complete(
                client, sent.request, sent.reply.content, timeout=policy.summarizer_timeout
            ),
            name=conversation.model,
            prompt=continuation_prompt(after),
        )
    else:
        claude = ModelSummarizer(
            claude_complete(client, policy.summarizer_model, timeout=policy.summarizer_timeout),
            name=policy.summarizer_model,
        )
    return server(claude) if name == "server" else claude


def call_cost(output: Output, info_for: Callable[[str], ModelInfo]) -> SummaryCall | None:
    """What the calls behind a version cost, at the prices of the model they ran on."""
    from tui_chat.llm.models import cost_usd

    usage = output.usage
    if usage is None:
        return None
    model = output.call_model or output.summarizer
    return SummaryCall(
        model=model,
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cache_read_input_tokens,
        cache_write_tokens=usage.cache_creation_input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=cost_usd(info_for(model), usage),
    )
