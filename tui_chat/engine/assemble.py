"""Gather what the request builder needs from the store, in time that follows the window.

Only the tail of unsummarised messages that can fit the usable window is read (newest pages
first), so building the next request costs the same for a 100-message and a 100,000-message
conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.core.context import BuiltRequest, ContextInputs, build_request
from tui_chat.core.models import ContentBlock, Conversation, Message, Summary
from tui_chat.core.presets import Policy
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import starts_turn
from tui_chat.llm.models import ModelInfo
from tui_chat.store.repository import Store

PAGE = 256
RECALL_CANDIDATES = 12
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


async def raw_tail(store: Store, conversation_id: str, after_id: int, budget: int) -> list[Message]:
    """The newest whole turns after ``after_id`` whose stored counts fit ``budget`` tokens.

    Reads pages backwards and stops once the budget is spent, then trims the front to a turn
    start so a tool_use is never separated from its tool_result.
    """
    collected: list[Message] = []
    spent = 0
    before: int | None = None
    while True:
        page = await store.list_messages(
            conversation_id, after_id=after_id, before_id=before, limit=PAGE, newest=True
        )
        if not page:
            break
        collected[:0] = page
        spent += sum(m.token_count for m in page)
        before = page[0].id
        if spent > budget or len(page) < PAGE:
            break
    # Trim a leading partial turn (its start lies before what we read).
    if collected and not starts_turn(collected[0].role, collected[0].content):
        first_turn = collected[0].turn
        index = 0
        while index < len(collected) and collected[index].turn == first_turn:
            index += 1
        if index < len(collected):
            collected = collected[index:]
    return collected


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
        await raw_tail(store, conversation.id, coverage, budget=window.usable * 2)
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
    anchors = await store.anchors(conversation.id)
    recalled: list[Message] = []
    if policy.recall and coverage and query:
        hits = await store.search(
            query,
            conversation_id=conversation.id,
            up_to_id=coverage,
            any_word=True,
            limit=RECALL_CANDIDATES,
        )
        by_id = {m.id: m for m in await store.get_messages([h.message_id for h in hits])}
        recalled = [by_id[h.message_id] for h in hits if h.message_id in by_id]
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
