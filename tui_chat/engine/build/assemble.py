"""Gather what the request builder needs from the store, in time that follows the window.

Only the tail of unsummarised messages that can fit the usable window is read, and only what
changed since the last build (:mod:`tui_chat.engine.build.tail`), and recall searches
the compacted prefix in bounded hops (:mod:`tui_chat.engine.build.recall`), so building the next
request costs the same for a 100-message and a 100,000-message conversation.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from tui_chat.core import ledger
from tui_chat.core.cache_ttl import GAPS, pauses
from tui_chat.core.models import ContentBlock, Conversation, Message, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.reply_options import reply_options
from tui_chat.core.request import BuiltRequest, ContextInputs, build_request, dates
from tui_chat.core.request.recall_need import RECENT_MESSAGES, asks
from tui_chat.core.request.superseded import without_spans, without_superseded
from tui_chat.core.request.timeline import Timeline, prepared
from tui_chat.core.tokens import (
    CALIBRATION_MAX,
    CALIBRATION_MIN,
    MESSAGE_OVERHEAD_TOKENS,
    TokenCounter,
)
from tui_chat.core.turns import starts_turn
from tui_chat.core.unanswered import (
    left_out_note,
    not_sent_again,
    refused_prompts,
)
from tui_chat.engine.build.recall import RECALL_MESSAGES, need, pool_size, recall, sent_moment
from tui_chat.engine.build.tail import TailCache
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store
from tui_chat.store.search_index import SearchIndexError

DEFAULT_REPLY_TOKENS = 16_384
"""``max_tokens`` of a reply unless the policy's ``max_output`` says otherwise: the model's
full output limit (64k–128k) would shrink the usable window for no benefit in a chat."""


@dataclass(frozen=True, slots=True)
class Window:
    """Sizes that decide what can be sent."""

    context_window: int
    max_output: int
    budget: int | None = None
    """The policy's working budget, when it sets one."""

    @property
    def usable(self) -> int:
        """Tokens the request itself is kept within: the window less the reply, or the
        working budget when that is smaller."""
        usable = self.context_window - self.max_output
        return usable if self.budget is None else min(usable, self.budget)


def window_for(info: ModelInfo, policy: Policy) -> Window:
    """The context window and reply budget in force for a model under a policy."""
    context_window = policy.context_window or info.context_window
    max_output = policy.max_output or min(info.max_output, DEFAULT_REPLY_TOKENS)
    # A reply budget may never eat more than a quarter of an overridden (small) window.
    max_output = max(256, min(max_output, context_window // 4))
    return Window(context_window, max_output, policy.budget)


TAIL_HEADROOM = 1.25
"""How much more than the usable window the raw tail reads, in stored counts: thinking blocks
and other content kept but never sent count in a message's stored size, so a tail slightly
over the window (not twice it) is what fills it once cleaned."""


GUESSED_PRICE = "price guessed (model not in the table: $10 / $50 per MTok assumed)"
"""What the gauge and the cost figures say of a model whose prices the table lacks."""


def tail_budget(window: Window, calibration: float) -> int:
    """Stored tokens of raw tail to read so the builder can fill the usable window.

    The builder fits *calibrated* counts (stored × ratio) into the window, so a ratio below 1
    lets more stored tokens fit; the ratio is clamped as the builder clamps it.
    """
    ratio = min(CALIBRATION_MAX, max(CALIBRATION_MIN, calibration))
    return math.ceil(window.usable * TAIL_HEADROOM / ratio)


def _cut_size(policy: Policy) -> int | None:
    """The most a message can count once cut to the policy's character limit (a token is at
    least one character), or ``None`` when messages are not cut."""
    limit = policy.message_char_limit
    return None if limit is None else limit + MESSAGE_OVERHEAD_TOKENS


def _answered_only(
    tail: list[Message], keep_last: bool, timeline: Timeline
) -> tuple[list[Message], list[Message]]:
    """The prompts left out as unanswered, and ``tail`` without their turns (see
    :mod:`~tui_chat.core.unanswered`), from the kept ``timeline``'s turn facts."""
    timeline.align(tail)
    spans = timeline.unanswered(keep_last=keep_last)
    return [tail[start] for start, _ in spans], without_spans(tail, spans)


async def assemble(
    store: Store,
    conversation: Conversation,
    *,
    policy: Policy,
    info: ModelInfo,
    counter: TokenCounter,
    new_text: str | None,
    summary: Summary | None,
    calibration: float = 1.0,
    new_files: Sequence[ContentBlock] = (),
    cache: TailCache | None = None,
    tools: tuple[dict[str, Any], ...] = (),
) -> BuiltRequest:
    """Build the exact next request for ``conversation``.

    Args:
        store: The open store.
        conversation: The conversation.
        policy: Its resolved policy.
        info: Its model's figures.
        counter: The token counter.
        new_text: A draft to send after the stored history (``None``: the stored, unanswered
            user message at the end, if any, is the new message — that is how send and retry
            build their request).
        summary: The active completed summary, if any.
        calibration: Real/estimated input ratio for the model.
        new_files: Files attached to ``new_text`` (references, sent before the text).
        cache: The conversation's build state kept between builds (``None``: a new one,
            everything read and prepared for this build). The request is the same either way.
        tools: The MCP tools' definitions to send (the servers switched on and ready).
    """
    # The revision before anything is read: a draft's request is kept at it, and a send of
    # that draft finds it one write later (its own message) with the same inputs.
    revision = None if cache is None else await store.conversations.revision(conversation.id)
    if cache is None:
        cache = TailCache()
    window = window_for(info, policy)
    coverage = summary.covers_to_message_id if summary else 0
    budget = tail_budget(window, calibration)
    cap = _cut_size(policy)
    read = await cache.raw_tail(store, conversation.id, coverage, budget, cap)
    tail_timeline, timeline = cache.timelines(conversation.id)
    tail = without_superseded(read, cache.unfinished(conversation.id))
    # Prompts whose reply failed before any text are left out, and said so (core/unanswered).
    left_out, raw = _answered_only(tail, new_text is None, tail_timeline)
    new_message: list[ContentBlock] | None = None
    query, sent_at = new_text, None
    if new_text is not None:
        # Attached files first, as a sent message has them; no empty text after files alone.
        text_block: list[ContentBlock] = [{"type": "text", "text": new_text}]
        new_message = [*new_files, *(text_block if new_text.strip() or not new_files else [])]
    else:
        # A retry replaces a failed or cut-off last reply: it is not sent back.
        while raw and raw[-1].role == "assistant" and raw[-1].status != "complete":
            raw = raw[:-1]
    if new_text is None and raw and raw[-1].role == "user" and starts_turn("user", raw[-1].content):
        # The stored, unanswered user message is the one being sent (send and retry).
        new_message = list(raw[-1].content)
        query, sent_at = raw[-1].text, raw[-1].created_at
        raw = raw[:-1]
    anchors = await store.anchors.pinned(conversation.id)
    searching = bool(policy.recall and coverage and query)
    moment = sent_moment(sent_at)  # recall's periods count from it
    inputs = ContextInputs(
        model=conversation.model,
        context_window=window.context_window,
        max_output=window.max_output,
        system_prompt=conversation.system_prompt,
        policy=policy,
        summary=summary,
        anchors=anchors,
        recalled=[],
        raw_messages=raw,
        new_message=new_message,
        counter=counter,
        calibration=calibration,
        ledger=ledger.from_json(summary.ledger) if summary is not None else (),
        covered_tokens=await store.messages.tokens_upto(conversation.id, coverage)
        if coverage
        else 0,
        pauses=tuple(pauses([(m.role, m.created_at) for m in raw[-2 * GAPS - 1 :]])),
        replies=tuple(m.usage for m in raw[-2 * GAPS :] if m.role == "assistant" and m.usage),
        tools=tools,
    )
    warned = not_sent_again(left_out, tail)  # a prompt sent again is warned of no more
    left_note = left_out_note(warned, refused_prompts(tail) if warned else None)
    # Everything the request is made of but recall's passages, and what recall reads: the
    # new message, the periods it names, the search's size. Equal keys, equal requests (the
    # builder is pure; recall reads the folded prefix, which the revision guards).
    periods = dates.spans(query, datetime.fromisoformat(moment)) if query and searching else []
    key = (inputs, query, periods, searching, info, left_note)
    if revision is not None and new_text is None and new_message is not None:
        # A send of the stored prompt: the draft's request built for it is the same request.
        reused = cache.take_drafted(conversation.id, (revision - 1, key))
        if reused is not None:
            return reused
    if query and searching:
        # Recall is a bonus: a broken search index (doctor reports it) never stops a send.
        with contextlib.suppress(SearchIndexError):
            recent = [m.text for m in raw[-RECENT_MESSAGES:]]
            asking = asks(query)
            inputs = replace(inputs, recall_asks=asking)
            needed = await need(store, conversation.id, query, recent, coverage, asking)
            inputs = replace(inputs, recall_need=needed)
            # A larger pool only where a question may fill the recall share of the budget.
            wide = summary is not None and summary.trigger != "manual" and policy.recall_share
            pool = pool_size(needed) if wide else RECALL_MESSAGES
            recalled = await recall(store, conversation.id, query, coverage, counter, moment, pool)
            inputs = replace(inputs, recalled=recalled)
    # The pure builder gets the messages prepared: the kept timeline, aligned to this tail;
    # what it laid out is kept there for the next build.
    built = build_request(inputs, prepared(inputs, timeline))
    timeline.keep(built.layout)
    # Thinking, effort and the web tools the conversation turned on (core/reply_options).
    mcp_tools = built.request.get("tools", [])
    options, notes = reply_options(
        policy,
        conversation.model,
        window.max_output,
        info.features,
        fast_mode=info.prices.fast is not None,
        tools=bool(mcp_tools),
    )
    built.request.update(options)
    if mcp_tools and "tools" in options:  # the web tools first, then the MCP servers'
        built.request["tools"] = [*options["tools"], *mcp_tools]
    if left_note is not None:
        notes.append(left_note)
    price_note = "" if info.priced else GUESSED_PRICE
    if notes or price_note:
        warnings = (*built.breakdown.warnings, *notes)
        breakdown = replace(built.breakdown, warnings=warnings, price_note=price_note)
        built = replace(built, breakdown=breakdown)
    if revision is not None and new_text is not None:
        cache.keep_drafted(conversation.id, (revision, key), built)
    return built
