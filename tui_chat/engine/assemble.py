"""Gather what the request builder needs from the store, in time that follows the window.

Only the tail of unsummarised messages that can fit the usable window is read
(:meth:`Messages.raw_tail <tui_chat.store.messages.Messages.raw_tail>`), and recall searches
the compacted prefix (:meth:`Search.recall <tui_chat.store.search.Search.recall>`), so
building the next request costs the same for a 100-message and a 100,000-message conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.core.models import ContentBlock, Conversation, Message, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request import BuiltRequest, ContextInputs, build_request
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import starts_turn
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store

DEFAULT_REPLY_TOKENS = 16_384
"""``max_tokens`` of a reply unless the policy's ``max_output`` says otherwise: the model's
full output limit (64k–128k) would shrink the usable window for no benefit in a chat."""


@dataclass(frozen=True, slots=True)
class Window:
    """Sizes that decide what can be sent."""

    context_window: int
    max_output: int

    @property
    def usable(self) -> int:
        """Tokens the request itself may take."""
        return self.context_window - self.max_output


def window_for(info: ModelInfo, policy: Policy) -> Window:
    """The context window and reply budget in force for a model under a policy."""
    context_window = policy.context_window or info.context_window
    max_output = policy.max_output or min(info.max_output, DEFAULT_REPLY_TOKENS)
    # A reply budget may never eat more than a quarter of an overridden (small) window.
    max_output = max(256, min(max_output, context_window // 4))
    return Window(context_window, max_output)


def supersede_failed(messages: Sequence[Message]) -> list[Message]:
    """Leave out failed or cut-off replies that a later reply of the same turn replaced."""
    out: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.status in ("error", "incomplete", "streaming"):
            later = messages[index + 1 :]
            if any(m.role == "assistant" and m.turn == message.turn for m in later):
                continue
        out.append(message)
    return out


EXCERPT_LABEL_TOKENS = 24
"""About what an excerpt's label (``[#id role, time]``) adds to its message's tokens."""


def _within(candidates: list[Message], budget: int) -> list[Message]:
    """The leading candidates whose stored sizes fill ``budget``, plus one that may be cut.

    The builder takes excerpts in order until its budget is spent and cuts one that does not
    fit; candidates beyond that point would only be counted (and cut) to be dropped.
    """
    out: list[Message] = []
    spent = 0
    for message in candidates:
        out.append(message)
        spent += message.token_count + EXCERPT_LABEL_TOKENS
        if spent > budget:
            break
    return out


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
    """
    window = window_for(info, policy)
    coverage = summary.covers_to_message_id if summary else 0
    raw = supersede_failed(
        await store.messages.raw_tail(conversation.id, coverage, budget=window.usable * 2)
    )
    new_message: list[ContentBlock] | None = None
    query = new_text
    if new_text is not None:
        new_message = [{"type": "text", "text": new_text}]
    else:
        # A retry replaces a failed or cut-off last reply: it is not sent back.
        while raw and raw[-1].role == "assistant" and raw[-1].status != "complete":
            raw = raw[:-1]
    if new_text is None and raw and raw[-1].role == "user" and starts_turn("user", raw[-1].content):
        # The stored, unanswered user message is the one being sent (send and retry).
        new_message = list(raw[-1].content)
        query = raw[-1].text
        raw = raw[:-1]
    anchors = await store.anchors.pinned(conversation.id)
    recalled: list[Message] = []
    if policy.recall and coverage and query:
        recalled = _within(
            await store.search.recall(conversation.id, query, coverage),
            policy.recall_budget_tokens,
        )
    return build_request(
        ContextInputs(
            model=conversation.model,
            context_window=window.context_window,
            max_output=window.max_output,
            system_prompt=conversation.system_prompt,
            policy=policy,
            summary=summary,
            anchors=anchors,
            recalled=recalled,
            raw_messages=raw,
            new_message=new_message,
            counter=counter,
            calibration=calibration,
        )
    )
