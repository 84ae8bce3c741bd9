"""Gather what the request builder needs from the store, in time that follows the window.

Only the tail of unsummarised messages that can fit the usable window is read (newest pages
first), so building the next request costs the same for a 100-message and a 100,000-message
conversation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import aiosqlite

from tui_chat.core.models import ContentBlock, Conversation, Message, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request import BuiltRequest, ContextInputs, build_request
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import starts_turn
from tui_chat.llm.models import ModelInfo
from tui_chat.store import fts
from tui_chat.store.repository import Store

PAGE = 1_024
"""Message ids (with their token counts) read per step while walking back from the end."""
CACHE_MESSAGES = 8_192
"""Parsed complete messages kept per open store, so building the next request reads ids only."""
_FETCH = 900
"""Messages fetched per ``IN (…)`` query (well under SQLite's variable limit)."""
RECALL_HITS = 24
"""Messages of the compacted prefix found by search; each brings the message after it."""
COMMON_DOCS = 1_000
"""A recall word found in at least this many messages is too common to search by: it would
rank thousands of rows (cost growing with the history) and says little about relevance."""
RANKED_DOCS = 3_000
"""Most matches recall ranks: the rarest words are searched until their matches reach this."""
RECENT_SPAN = 5_000
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


class _MessageCache:
    """Parsed messages of one store, least recently used first out.

    Only ``complete`` messages are kept: they are never rewritten (a streaming reply is, until
    it completes), and messages are only deleted with their conversation, whose random id no
    later conversation reuses — so an entry keyed by conversation and id is never stale.
    """

    def __init__(self, size: int = CACHE_MESSAGES) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[str, int], Message] = OrderedDict()

    def get(self, conversation_id: str, message_id: int) -> Message | None:
        message = self.entries.get((conversation_id, message_id))
        if message is not None:
            self.entries.move_to_end((conversation_id, message_id))
        return message

    def put(self, message: Message) -> None:
        if message.status != "complete":
            return
        self.entries[(message.conversation_id, message.id)] = message
        self.entries.move_to_end((message.conversation_id, message.id))
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


_caches: WeakKeyDictionary[Store, _MessageCache] = WeakKeyDictionary()


async def _messages(store: Store, conversation_id: str, rows: Sequence[Any]) -> list[Message]:
    """The messages of ``(id, status)`` rows in order, parsed ones reused from the cache."""
    cache = _caches.get(store)
    if cache is None:
        cache = _caches[store] = _MessageCache()
    found: dict[int, Message] = {}
    wanted: list[int] = []
    for message_id, status in rows:
        cached = cache.get(conversation_id, message_id) if status == "complete" else None
        if cached is None:
            wanted.append(message_id)
        else:
            found[message_id] = cached
    for start in range(0, len(wanted), _FETCH):
        for message in await store.get_messages(wanted[start : start + _FETCH]):
            found[message.id] = message
            cache.put(message)
    return [found[message_id] for message_id, _ in rows if message_id in found]


async def raw_tail(store: Store, conversation_id: str, after_id: int, budget: int) -> list[Message]:
    """The newest whole turns after ``after_id`` whose stored counts fit ``budget`` tokens.

    Walks back over ids and stored token counts until the budget is spent, then loads those
    messages (parsed ones come from a per-store cache), and trims the front to a turn start so
    a tool_use is never separated from its tool_result.
    """
    rows: list[Any] = []
    spent = 0
    before: int | None = None
    db = store.connection
    while True:
        sql = (
            "SELECT id, token_count, status FROM messages WHERE conversation_id = ? AND id > ?"
            + (" AND id < ?" if before is not None else "")
            + " ORDER BY id DESC LIMIT ?"
        )
        params: tuple[Any, ...] = (conversation_id, after_id)
        params += (before, PAGE) if before is not None else (PAGE,)
        async with db.execute(sql, params) as cursor:
            page = list(await cursor.fetchall())
        if not page:
            break
        for message_id, tokens, status in page:
            rows.append((message_id, status))
            spent += tokens
            if spent > budget:
                break
        before = page[-1][0]
        if spent > budget or len(page) < PAGE:
            break
    rows.reverse()
    collected = await _messages(store, conversation_id, rows)
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
    BM25. The rarest words are searched, until their matches reach :data:`RANKED_DOCS`; words
    that :data:`COMMON_DOCS` messages share are left out when rarer ones exist, so the search
    costs about the same for a 1,000- and a 100,000-message history; when every word is that
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
    ranked = sorted((n, i) for i, n in enumerate(counts) if n > 0)
    if not ranked:
        return []
    chosen: list[str] = []
    matches = 0
    for n, i in ranked:
        if n >= COMMON_DOCS or (chosen and matches + n > RANKED_DOCS):
            break
        chosen.append(phrases[i])
        matches += n
    lowest = 0
    if not chosen:
        chosen, lowest = [phrases[i] for _, i in ranked], max(0, coverage - RECENT_SPAN)
    sql = (
        "SELECT m.id, (SELECT min(n.id) FROM messages n "
        "  WHERE n.conversation_id = m.conversation_id AND n.id > m.id AND n.id <= ?) "
        "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
        "WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND messages_fts.rowid > ? "
        "AND messages_fts.rowid >= (SELECT min(id) FROM messages WHERE conversation_id = ?) "
        "AND m.conversation_id = ? ORDER BY messages_fts.rank LIMIT ?"
    )
    # ``rank`` (BM25 by default) lets FTS5 order the matches itself, twice as fast as
    # ``bm25()`` per row; the rowid bounds skip matches outside the conversation's span.
    params = (
        coverage,
        " OR ".join(chosen),
        coverage,
        lowest,
        conversation_id,
        conversation_id,
        RECALL_HITS,
    )
    async with db.execute(sql, params) as cursor:
        rows = await cursor.fetchall()
    order: dict[int, None] = {}
    for hit, following in rows:
        order.setdefault(int(hit), None)
        if following is not None:
            order.setdefault(int(following), None)
    by_id = {m.id: m for m in await store.get_messages(list(order))}
    return [by_id[i] for i in order if i in by_id]


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
        recalled = _within(
            await recall(store, conversation.id, query, coverage), policy.recall_budget_tokens
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
