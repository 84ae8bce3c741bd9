"""Gather what the request builder needs from the store, in time that follows the window.

Only the tail of unsummarised messages that can fit the usable window is read (newest pages
first), so building the next request costs the same for a 100-message and a 100,000-message
conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from tui_chat.core.context import BuiltRequest, ContextInputs, build_request
from tui_chat.core.models import ContentBlock, Conversation, Message, Summary
from tui_chat.core.presets import Policy
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import starts_turn
from tui_chat.llm.models import ModelInfo
from tui_chat.store import fts
from tui_chat.store.repository import Store

PAGE = 256
RECALL_HITS = 24
"""Messages of the compacted prefix found by search; each brings the message after it."""
COMMON_DOCS = 2_000
"""A recall word found in at least this many messages is too common to search by: it would
rank thousands of rows (cost growing with the history) and says little about relevance."""
RECENT_SPAN = 20_000
"""When every word is common, recall searches only this many of the newest message ids."""
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


async def _doc_counts(db: aiosqlite.Connection, phrases: Sequence[str]) -> list[int]:
    """How many messages (of any conversation) each phrase matches, capped at COMMON_DOCS."""
    sql = " UNION ALL ".join(
        f"SELECT {i}, (SELECT count(*) FROM (SELECT rowid FROM messages_fts "
        "WHERE messages_fts MATCH ? LIMIT ?))"
        for i in range(len(phrases))
    )
    params: list[Any] = []
    for phrase in phrases:
        params += [phrase, COMMON_DOCS]
    async with db.execute(sql, params) as cursor:
        rows = await cursor.fetchall()
    counts = [0] * len(phrases)
    for index, count in rows:
        counts[int(index)] = int(count)
    return counts


async def recall(store: Store, conversation_id: str, query: str, coverage: int) -> list[Message]:
    """Excerpt candidates from the compacted prefix (ids up to ``coverage``), best first.

    The words of ``query`` are searched by stem (:func:`fts.recall_phrase`) and ranked by
    BM25. Words that hundreds of messages share are left out when rarer ones remain, so the
    search costs about the same for a 1,000- and a 100,000-message history; when every word is
    common only the newest :data:`RECENT_SPAN` ids are searched. Each hit is followed by the
    message after it in the conversation — the reply to a recalled question, the follow-up to
    a recalled answer — because a conversation keeps what was said in exchanges: the words of
    a question often sit in one message and the fact in the next.

    Args:
        store: The open store.
        conversation_id: The conversation.
        query: The new user message.
        coverage: The active summary's ``covers_to_message_id``.

    Returns:
        Messages to offer as excerpts, best first (the builder takes what fits its budget).
    """
    phrases = [fts.recall_phrase(w) for w in fts.recall_terms(query)]
    if not phrases:
        return []
    db = store.connection
    counts = await _doc_counts(db, phrases)
    rare = [p for p, n in zip(phrases, counts, strict=True) if 0 < n < COMMON_DOCS]
    common = [p for p, n in zip(phrases, counts, strict=True) if n >= COMMON_DOCS]
    lowest = 0
    if not rare:
        if not common:
            return []
        rare, lowest = common, max(0, coverage - RECENT_SPAN)
    sql = (
        "SELECT m.id, (SELECT min(n.id) FROM messages n "
        "  WHERE n.conversation_id = m.conversation_id AND n.id > m.id AND n.id <= ?) "
        "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
        "WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND messages_fts.rowid > ? "
        "AND m.conversation_id = ? ORDER BY bm25(messages_fts) LIMIT ?"
    )
    params = (coverage, " OR ".join(rare), coverage, lowest, conversation_id, RECALL_HITS)
    async with db.execute(sql, params) as cursor:
        rows = await cursor.fetchall()
    order: dict[int, None] = {}
    for hit, following in rows:
        order.setdefault(int(hit), None)
        if following is not None:
            order.setdefault(int(following), None)
    by_id = {m.id: m for m in await store.get_messages(list(order))}
    return [by_id[i] for i in order if i in by_id]


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
        recalled = await recall(store, conversation.id, query, coverage)
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
