"""Recall's search of the compacted prefix: bounded FTS5 hops, then ranked passages.

Three searches, each one bounded FTS5 query
(:meth:`~tui_chat.store.search.Search.recall_hits`): the distinctive words of the new message
(first hop); words related to them in meaning (:mod:`tui_chat.core.related`: ``husband`` →
wife, married), for evidence that shares no word with the question; and the rarest words of
the best first-hop passages that the message lacks (second hop, for questions that need two
facts). Neighbours are two index lookups per hit; at most :data:`RECALL_MESSAGES` messages are
read. Nothing here grows with the history. Scores, neighbours and passages:
:mod:`tui_chat.core.request.recall`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial

from tui_chat.core import related
from tui_chat.core.request import dates, recall_need
from tui_chat.core.request.recall import (
    NEIGHBOUR_STEPS,
    SECOND_HOP_SOURCES,
    Hit,
    Passage,
    by_relevance,
    combine,
    expansion_terms,
    idf,
    rank_passages,
    related_relevance,
)
from tui_chat.core.request.render import request_text
from tui_chat.core.tokens import TokenCounter
from tui_chat.store import fts
from tui_chat.store.repository import Store

RECALL_MESSAGES = 128
"""Most messages (hits and their neighbours) read to make passages."""
QUESTION_MESSAGES = 4
"""A message that needs the folded past (:func:`~.recall_need.need_weight` 1) reads up to this
many times :data:`RECALL_MESSAGES`: its recall may fill the recall share of the budget
(:func:`~.recall_need.question_ceiling`), more than 128 messages hold."""

# The first hop returns as many hits as the pool reads (the related-word and second hops the
# store's RECALL_HITS): evidence often shares one common word with its question, a name ("What
# martial arts has John done?" / "I'm off to do some taekwondo!"), and among fewer hits the
# name's other messages never came in, so the pool filled with the neighbours of the best ones.
# Dev LoCoMo past the budget (benchmarks/past_budget_offline.py), a question's pool of up to
# 512: 90.3 -> 91.3 % (the other hops as large: 90.7 %; one neighbour step: 89.5 %). The
# ordinary pool of 128 (benchmarks/quality.py, minus the strong search at the same tokens):
# 64 -> 128 hits took 2k / 4k / 8k windows from +3.2 / +3.6 / +2.8 to +3.4 / +3.6 / +3.0 and
# one manual compact at the real window from +2.8 to +3.0.


def pool_size(need: float) -> int:
    """Messages read to make passages for a message whose need of the folded past is
    ``need``."""
    weight = recall_need.need_weight(need, recall_need.QUESTION_FROM, recall_need.QUESTION_FULL)
    return int(RECALL_MESSAGES * (1 + (QUESTION_MESSAGES - 1) * weight))


async def related_hits(
    store: Store, conversation_id: str, words: list[str], coverage: int
) -> tuple[list[Hit], dict[str, tuple[str, float]]]:
    """Hits for the words related in meaning to ``words``, and each related word's stem ->
    ``(stem of the query word it relates to, similarity)`` (for
    :func:`~tui_chat.core.request.recall.related_relevance`); none when the vectors are not
    installed. The vectors are read once per process, off the event loop."""
    if not words:
        return [], {}
    near = await asyncio.to_thread(related.related, words)
    similarity = {r.word: r.similarity for r in near}
    extra = [w for w in fts.recall_terms(" ".join(similarity)) if w not in words]
    if not extra:
        return [], {}
    source = {r.word: fts.stem_prefix(r.source) or r.source for r in near}
    links: dict[str, tuple[str, float]] = {}
    for word in extra:
        if similarity[word] < related.RELEVANCE_SIMILARITY:
            continue  # searched, but too far in meaning to count for relevance
        stem = fts.stem_prefix(word) or word
        links[stem] = max(links.get(stem, ("", 0.0)), (source[word], similarity[word]))
    return await store.search.recall_hits(conversation_id, extra, coverage), links


async def near_messages(
    store: Store, conversation_id: str, ids: list[int], coverage: int
) -> dict[int, tuple[int | None, int | None]]:
    """Previous and next message of each of ``ids`` and of every message up to
    :data:`~tui_chat.core.request.recall.NEIGHBOUR_STEPS` - 1 steps from one: what
    :func:`~tui_chat.core.request.recall.combine` walks (index lookups, at most a few per hit)."""
    found: dict[int, tuple[int | None, int | None]] = {}
    wanted = ids
    for _ in range(NEIGHBOUR_STEPS - 1):
        found.update(await store.search.neighbours(conversation_id, wanted, coverage))
        wanted = list({i for pair in found.values() for i in pair if i is not None} - set(found))
    if wanted:
        found.update(await store.search.neighbours(conversation_id, wanted, coverage))
    return found


def sent_moment(sent_at: str | None) -> str:
    """When a query was sent (ISO 8601): ``sent_at``, or now for a draft."""
    return sent_at or datetime.now(UTC).isoformat()


async def recall(
    store: Store,
    conversation_id: str,
    query: str,
    coverage: int,
    counter: TokenCounter,
    sent_at: str | None = None,
    pool: int = RECALL_MESSAGES,
) -> list[Passage]:
    """Passage candidates from the compacted prefix (ids up to ``coverage``), best first.

    Args:
        store: The open store.
        conversation_id: The conversation.
        query: The new user message.
        coverage: The active summary's ``covers_to_message_id``.
        counter: Splits long messages into passages.
        sent_at: When the query was sent (ISO 8601; ``None``: now), for the periods it names
            relative to that (:mod:`~tui_chat.core.request.dates`).
        pool: Most messages read (:func:`pool_size`).

    Returns:
        Passages to offer, best first (the builder takes what fits its budget).
    """
    words = fts.recall_terms(query)
    counts, total = await store.search.recall_counts(conversation_id, words, coverage)
    first = await store.search.recall_hits(conversation_id, words, coverage, counts, pool)
    near, near_weights = await related_hits(store, conversation_id, words, coverage)
    if not first and not near:
        return []
    sources = await store.messages.get_many([h.message_id for h in first[:SECOND_HOP_SOURCES]])
    texts = [request_text(m) for m in sources]
    asked = set(words)
    candidates = [w for w in fts.recall_terms(" ".join(texts), limit=64) if w not in asked]
    found = await store.search.word_counts(conversation_id, candidates, coverage)
    extra = expansion_terms(texts, words, found)
    second = await store.search.recall_hits(conversation_id, extra, coverage) if extra else []
    hit_ids = list(dict.fromkeys(h.message_id for h in [*first, *second, *near]))
    neighbours = await near_messages(store, conversation_id, hit_ids, coverage)
    scores = combine(first, second, neighbours, near)
    best = sorted(sorted(scores, key=lambda i: -scores[i])[:pool])
    messages = await store.messages.get_many(best)
    stems = [fts.stem_prefix(w) or w for w in words]
    weights: dict[str, float] = {}
    for stem, count in zip(stems, counts, strict=True):
        weights[stem] = max(weights.get(stem, 0.0), idf(count, total))
    # Splitting, counting and scoring a pool of up to 512 messages is tens of milliseconds
    # of CPU: in a thread, so keys typed meanwhile are drawn (the gauge recounts as they
    # pause). Pure work on this build's own data; the counter and the stem memos are shared.
    now = datetime.fromisoformat(sent_at) if sent_at else datetime.now(UTC)
    ranked = partial(
        rank_passages, messages, scores, stems, counter, request_text, weights, neighbours
    )
    wide = pool > RECALL_MESSAGES
    return await asyncio.to_thread(_scored, ranked, weights, near_weights, query, now, wide)


def _scored(
    ranked: Callable[[], list[Passage]],
    weights: dict[str, float],
    near_weights: dict[str, tuple[str, float]],
    query: str,
    now: datetime,
    wide: bool = False,
) -> list[Passage]:
    """The ranked passages with related words' relevance, those written in a period the query
    names first ("in June", "last week"); a ``wide`` pool (a question's) by what each holds
    (:func:`~tui_chat.core.request.recall.by_relevance`)."""
    passages = related_relevance(ranked(), weights, near_weights)
    passages = dates.boost(passages, dates.spans(query, now))
    return by_relevance(passages) if wide else passages


async def need(
    store: Store,
    conversation_id: str,
    query: str,
    recent: Sequence[str],
    coverage: int,
    asking: bool | None = None,
) -> float:
    """The share of ``query``'s word weight (idf, over the conversation's own folded prefix)
    that the ``recent`` messages' text lacks (:func:`~tui_chat.core.request.recall_need.novelty`):
    how much the new message needs the folded past; a message that asks nothing
    (``asking``, found by :func:`~tui_chat.core.request.recall_need.asks` when not given)
    needs no more than the cost cap holds (``NEED_FROM`` at most)."""
    words = fts.recall_terms(query)
    if not words:
        return 0.0
    if recall_need.lookup(query):
        return 1.0  # a one-line question about someone or something: a fact from the past
    # What the message asks may lift recall past the cost cap; what it tells may not.
    lifted = recall_need.asks(query) if asking is None else asking
    text = "\n".join(recent).lower()
    counts, total = await store.search.recall_counts(conversation_id, words, coverage)
    stems = [fts.stem_prefix(w) or w for w in words]
    weights = [idf(count, total) for count in counts]
    share = recall_need.novelty(stems, weights, text)
    return share if lifted else min(share, recall_need.NEED_FROM)
