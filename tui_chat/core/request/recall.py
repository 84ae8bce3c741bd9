"""Passage-level recall: re-rank search hits, add their neighbours, fill a budget.

The store finds candidate messages in the compacted prefix with FTS5 (BM25, bounded by a
``LIMIT``, so the cost does not grow with the history) twice: once for the new message's
words (first hop) and once for terms taken from the best first-hop passages (second hop, for
questions that need two facts). This module turns those hits into ranked passages:

1. A long message is split into paragraphs (:func:`split_passages`); a passage is a whole short
   message or one paragraph of a long one, and keeps its message's id, time and speaker.
2. Each message's score is its first-hop BM25 score plus :data:`SECOND_HOP_WEIGHT` times its
   second-hop score; then every message also takes :data:`NEIGHBOUR_WEIGHT` of each direct
   neighbour's score, and the square of that weight of each message two steps away
   (:data:`NEIGHBOUR_STEPS`). In a conversation the words of a question often sit in one
   message and the fact in the next ("What did you adopt?" / "A dog named Max"), or in the one
   after the reply ("Got any fave styles?" / "Contemporary is my pick. Yours?" / "Contemporary
   too!"), so a message near a strong hit is likely relevant even when it shares no word with
   the query.
3. Paragraphs of a long message are ranked by how many query words they hold.
4. Each passage gets a :attr:`Passage.relevance` in [0, 1] (:func:`relevance`), the idf-weighted
   share of the query's searched words it holds (or half of a direct neighbour's), for a floor:
   on the dev LoCoMo conversations, of the evidence turns among the candidates, a floor of 0.1
   keeps 95.7 % (a median 76 passages, 2,898 tokens, a question), 0.2 keeps 82.8 % (20
   passages, 918 tokens), 0.3 65.3 %. Chit-chat is not left to the floor: a message of only
   acknowledgements ("haha nice", "ok thanks") searches for nothing (``store/fts.FILLERS``);
   0 of 66 such messages recalled anything.

Measured on the three dev LoCoMo conversations with a 2,000-token passage budget (see
``benchmarks/quality.py``): plain BM25 over turns 66.7 %, with stems and stop words 72.9 %,
with neighbours 83.0 %, with the second hop 83.2 %. The weights are round values, not fits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from tui_chat.core.models import Message
from tui_chat.core.request.stems import found as _found
from tui_chat.core.tokens import TokenCounter

NEIGHBOUR_WEIGHT = 0.5
"""Share of a direct neighbour's score a message takes (context smoothing)."""
NEIGHBOUR_STEPS = 2
"""How far a hit's score spreads along the conversation: a message ``k`` steps away takes
``NEIGHBOUR_WEIGHT ** k`` of it (the same decay at every step, no weight of its own). Dev
LoCoMo, default minus the strong probe (``benchmarks/history/RESULTS-2026-11.md``, "Recall
against the strong probe: session 6"): one step (the probe's own smoothing) -> two, 2k +0.8
-> +2.8, 4k +1.6 -> +2.4, 8k +1.0 -> +2.2 points; three steps measured the same as two."""
SECOND_HOP_WEIGHT = 0.3
"""Weight of the second-hop score next to the first hop's."""
RELATED_WEIGHT = 0.3
"""Weight of a hit found by words related in meaning (:mod:`tui_chat.core.related`) next to the
first hop's: a related word is evidence of less than the word itself."""
SECOND_HOP_SOURCES = 3
"""Best first-hop passages whose terms make the second-hop query."""
SECOND_HOP_TERMS = 5
"""Most terms the second hop searches for."""
PASSAGE_TOKENS = 160
"""A message longer than this is recalled paragraph by paragraph."""

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search hit: a message and its BM25 relevance (higher is better)."""

    message_id: int
    score: float


@dataclass(frozen=True, slots=True)
class Passage:
    """A recallable piece of a message: the whole of a short one, or one paragraph."""

    message: Message
    part: int
    """Paragraph index within the message (0 for a whole message)."""
    parts: int
    """How many passages the message has (1 for a whole message)."""
    text: str
    score: float
    relevance: float = 1.0
    """How well the passage answers the query, in [0, 1] (:func:`relevance`): 1 when it holds
    every searched word of the query, by informativeness; a floor on it keeps out passages that
    share only common words with the new message."""

    @property
    def key(self) -> tuple[int, int]:
        """``(message id, part)``: what identifies the passage."""
        return (self.message.id, self.part)


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _pieces(text: str, counter: TokenCounter, limit: int) -> list[tuple[str, int]]:
    """The paragraphs of ``text`` with their tokens, each but the first opening with the break
    before it; a paragraph over ``limit`` made of lines (a file a tool read, a log) is taken
    line by line, so a passage is a part of it."""
    out: list[tuple[str, int]] = []
    for paragraph in _paragraphs(text):
        tokens = counter.count(paragraph)
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if tokens <= limit or len(lines) < 2:
            out.append(("\n\n" + paragraph, tokens))
            continue
        out.append(("\n\n" + lines[0], counter.count(lines[0])))
        out.extend(("\n" + line, counter.count(line)) for line in lines[1:])
    return out


def split_passages(
    text: str, counter: TokenCounter, limit: int = PASSAGE_TOKENS, known: int | None = None
) -> list[str]:
    """Split a message's text into passages of about ``limit`` tokens at paragraph breaks.

    A text within ``limit`` is one passage. Otherwise its paragraphs are packed in order into
    passages of at most ``limit`` tokens; a longer paragraph of several lines (a tool's result:
    a file, a listing, a log) is packed line by line, and one of a single line stays whole (it
    is cut, marked, only if it is recalled into a budget it does not fit).

    Args:
        text: The message's plain text.
        counter: The token counter.
        limit: Largest passage, in tokens.
        known: The text's size when already counted (a message's stored ``token_count``).

    Returns:
        The passages in order (at least one for a non-empty text).
    """
    text = text.strip()
    if not text:
        return []
    if (known if known is not None else counter.count(text)) <= limit:
        return [text]
    out: list[str] = []
    current: list[str] = []
    size = 0
    for piece, tokens in _pieces(text, counter, limit):
        if current and size + tokens > limit:
            out.append("".join(current).lstrip("\n"))
            current, size = [], 0
        current.append(piece)
        size += tokens
    if current:
        out.append("".join(current).lstrip("\n"))
    return out


def matches(text: str, stems: Sequence[str]) -> int:
    """How many of ``stems`` (lower-cased word prefixes) occur in ``text`` as a word start."""
    if not stems:
        return 0
    return len(_found(text, tuple(stems)))


def combine(
    first: Iterable[Hit],
    second: Iterable[Hit],
    neighbours: Mapping[int, tuple[int | None, int | None]],
    related: Iterable[Hit] = (),
) -> dict[int, float]:
    """Final message scores: the hops, then neighbour smoothing.

    Args:
        first: First-hop hits.
        second: Second-hop hits.
        neighbours: Message id -> ``(previous id, next id)`` in the conversation, for every
            hit and every message up to :data:`NEIGHBOUR_STEPS` - 1 steps from one (ids of the
            compacted prefix only; ``None`` at an edge). A message missing from the map
            spreads no further.
        related: Hits of the words related in meaning to the query's
            (:data:`RELATED_WEIGHT`).

    Returns:
        Message id -> score for the hits and their neighbours (0 scores left out).
    """
    base: dict[int, float] = {}
    for hit in first:
        base[hit.message_id] = base.get(hit.message_id, 0.0) + hit.score
    for hit in second:
        base[hit.message_id] = base.get(hit.message_id, 0.0) + SECOND_HOP_WEIGHT * hit.score
    for hit in related:
        base[hit.message_id] = base.get(hit.message_id, 0.0) + RELATED_WEIGHT * hit.score
    scores = dict(base)
    for message_id, score in base.items():
        for side in (0, 1):  # before, after
            current: int | None = message_id
            share = score
            for _ in range(NEIGHBOUR_STEPS):
                pair = neighbours.get(current) if current is not None else None
                current = pair[side] if pair is not None else None
                if current is None:
                    break
                share *= NEIGHBOUR_WEIGHT
                scores[current] = scores.get(current, 0.0) + share
    return {key: value for key, value in scores.items() if value > 0}


def expansion_terms(
    texts: Sequence[str],
    query_words: Iterable[str],
    doc_counts: Mapping[str, int],
    limit: int = SECOND_HOP_TERMS,
) -> list[str]:
    """The second hop's query: the rarest words of the best passages not in the question.

    Args:
        texts: The best first-hop passages.
        query_words: The question's words (left out).
        doc_counts: How many messages hold each candidate word; a word in one message only
            (the passage itself) cannot lead anywhere and is left out.
        limit: Most terms.

    Returns:
        Lower-cased words, rarest first.
    """
    asked = {w.lower() for w in query_words}
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text.lower()):
            if word not in asked and word in doc_counts:
                seen.setdefault(word, None)
    useful = [(doc_counts[w], w) for w in seen if doc_counts[w] >= 2]
    return [w for _, w in sorted(useful)[:limit]]


def idf(count: int, total: int) -> float:
    """The inverse document frequency of a word held by ``count`` of ``total`` messages (the
    BM25 form, never negative): rare words weigh most."""
    total = max(total, count, 1)
    return math.log(1 + (total - count + 0.5) / (count + 0.5))


BM25_K1 = 1.2
"""BM25's term-frequency saturation (FTS5's own value)."""
BM25_B = 0.75
"""BM25's length normalisation (FTS5's own value)."""


def bm25(
    term_hits: Sequence[Mapping[int, int]], lengths: Mapping[int, int], docs: int
) -> list[Hit]:
    """Okapi BM25 of one conversation's matching messages, computed from that conversation
    alone, best first (ties by id).

    FTS5's own ``bm25()`` weighs each word by how many messages of the whole database hold
    it, so importing another conversation changed the order of this one's recall; here each
    word's idf counts the searched messages of the conversation (FTS5's formula and
    constants), and a message's length is taken relative to the mean of the matching ones.

    Args:
        term_hits: Per searched word, message id -> how often the word occurs in it (every
            matching message of the searched span).
        lengths: Message id -> its text's length, for every message in ``term_hits``.
        docs: How many messages the searched span holds.

    Returns:
        Hits with their relevance (higher is better).
    """
    if not lengths:
        return []
    mean = sum(lengths.values()) / len(lengths) or 1.0
    scores: dict[int, float] = {}
    for hits in term_hits:
        held = len(hits)
        weight = max(1e-6, math.log((max(docs, held) - held + 0.5) / (held + 0.5)))
        for message_id, often in hits.items():
            norm = 1 - BM25_B + BM25_B * lengths[message_id] / mean
            gain = weight * often * (BM25_K1 + 1) / (often + BM25_K1 * norm)
            scores[message_id] = scores.get(message_id, 0.0) + gain
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [Hit(message_id, score) for message_id, score in ordered]


def relevance(text: str, weights: Mapping[str, float]) -> float:
    """The share of the query's information ``text`` holds, in [0, 1].

    Each searched word of the query weighs its idf (:func:`idf`); the relevance is the weight
    of the words whose stem starts a word of ``text`` over the weight of all of them. A
    passage with every word of the query is 1; one sharing only a common word ("Jon", "dance")
    of a specific question is near 0. It does not depend on the history's size or on the
    passage's length, so one floor holds for any conversation.

    Args:
        text: The passage.
        weights: Stem (lower-cased word prefix, see :func:`matches`) -> idf.

    Returns:
        The share; 0 when the query has no weighted word.
    """
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    found = _found(text, tuple(weights))
    return min(1.0, sum(weights.get(stem, 0.0) for stem in found) / total)


def related_relevance(
    passages: Sequence[Passage],
    weights: Mapping[str, float],
    links: Mapping[str, tuple[str, float]],
) -> list[Passage]:
    """``passages`` with a relevance that also counts words related in meaning to the query's
    (:mod:`tui_chat.core.related`): a query word the passage lacks counts
    :data:`RELATED_WEIGHT` times the similarity of its best related word the passage holds. A
    passage with ``married`` for "how is my husband?" gets 0.3 × 0.55 = 0.17.

    Args:
        passages: Ranked passages (their order is kept).
        weights: The query's stems -> idf (as for :func:`relevance`).
        links: Stem of a related word -> (the query stem it relates to, similarity).

    Returns:
        The passages, relevance raised where related words earn more than their own.
    """
    total = sum(weights.values())
    if not links or total <= 0:
        return list(passages)
    stems = tuple(links)
    out: list[Passage] = []
    for passage in passages:
        cover: dict[str, float] = {}
        for found in _found(passage.text, stems):
            asked, similarity = links[found]
            cover[asked] = max(cover.get(asked, 0.0), RELATED_WEIGHT * similarity)
        borrowed = sum(weights.get(asked, 0.0) * share for asked, share in cover.items()) / total
        raised = borrowed > passage.relevance
        out.append(replace(passage, relevance=min(1.0, borrowed)) if raised else passage)
    return out


ANSWER_WEIGHT = 0.8
"""Share of a matching message's score the reply right after it takes when that message ends
on a question ("Got any tips for getting started on it?" / the tips): the answer is what the
question was asked for, more than any other neighbour (:data:`NEIGHBOUR_WEIGHT`). Dev LoCoMo,
default minus the strong probe, tuned on conv-26 and conv-30 (1.0: 2k +3.0, 4k +2.6; 0.7: 2k
+2.6): 2k +2.0 -> +3.3, 4k +3.3, 8k +3.0 (unchanged); held out, conv-41: 2k +4.2 -> +3.1, 4k
+3.6 -> +4.2, 8k +2.6 (unchanged); all three: 2k +2.8 -> +3.2, 4k +3.4 -> +3.6, 8k +2.8."""


def asks(text: str) -> bool:
    """Whether a message ends on a question (its last sentence asks something)."""
    return text.rstrip().rstrip("\"')]").endswith("?")


def answered(
    scores: Mapping[int, float],
    texts: Mapping[int, str],
    neighbours: Mapping[int, tuple[int | None, int | None]],
) -> dict[int, float]:
    """``scores`` with the reply to each scored message that ends on a question raised to
    :data:`ANSWER_WEIGHT` of the question's score (when that is higher)."""
    out = dict(scores)
    for message_id, text in texts.items():
        after = neighbours.get(message_id, (None, None))[1]
        if after is None or after not in out or not asks(text):
            continue
        out[after] = max(out[after], ANSWER_WEIGHT * scores[message_id])
    return out


def rank_passages(
    messages: Iterable[Message],
    scores: Mapping[int, float],
    stems: Sequence[str],
    counter: TokenCounter,
    text_of: Callable[[Message], str],
    weights: Mapping[str, float] | None = None,
    neighbours: Mapping[int, tuple[int | None, int | None]] | None = None,
) -> list[Passage]:
    """Passages of the scored messages, best first.

    A short message is one passage with its message's score. A long message is split
    (:func:`split_passages`); its passages holding query words share its score in proportion to
    the words they hold (a passage with none is offered last, at a tenth of the score).

    Each passage's :attr:`Passage.relevance` is its own :func:`relevance`, or
    :data:`NEIGHBOUR_WEIGHT` times its direct neighbour message's when that is higher (the
    answer that follows a matching question). Without ``weights`` every passage has
    relevance 1.

    Args:
        messages: The scored messages (hits and neighbours).
        scores: Message id -> score from :func:`combine`.
        stems: The query's word prefixes.
        counter: The token counter.
        text_of: Renders a message's content as plain text.
        weights: The query's stems -> idf, for :attr:`Passage.relevance`.
        neighbours: Message id -> ``(previous id, next id)`` as given to :func:`combine`.

    Returns:
        Passages ordered by score, ties by message id.
    """
    listed = [m for m in messages if scores.get(m.id, 0.0) > 0]
    texts = {m.id: text_of(m) for m in listed}
    scores = answered(scores, texts, neighbours or {})
    own = {i: relevance(t, weights) for i, t in texts.items()} if weights is not None else {}
    near: dict[int, set[int]] = {}
    for hit, pair in (neighbours or {}).items():
        for other in pair:
            if other is not None:
                near.setdefault(hit, set()).add(other)
                near.setdefault(other, set()).add(hit)
    out: list[Passage] = []
    for message in listed:
        score = scores[message.id]
        borrowed = max(
            (NEIGHBOUR_WEIGHT * own.get(i, 0.0) for i in near.get(message.id, ())), default=0.0
        )
        pieces = split_passages(texts[message.id], counter, known=message.token_count)
        if len(pieces) == 1:
            rel = max(own[message.id], borrowed) if weights is not None else 1.0
            out.append(Passage(message, 0, 1, pieces[0], score, rel))
            continue
        found = [matches(piece, stems) for piece in pieces]
        total = sum(found) or 1
        for index, piece in enumerate(pieces):
            share = found[index] / total if found[index] else 0.1 / len(pieces)
            rel = max(relevance(piece, weights), borrowed) if weights is not None else 1.0
            out.append(Passage(message, index, len(pieces), piece, score * share, rel))
    out.sort(key=lambda p: (-p.score, p.message.id, p.part))
    return out


SCORE_SHARE = 0.5
"""Where a question's wide pool is ranked by what it holds (:func:`by_relevance`), the weight
of the search's own score (as a share of the best) beside the passage's relevance."""


def by_relevance(passages: Sequence[Passage]) -> list[Passage]:
    """``passages`` ordered by their :attr:`~Passage.relevance` plus :data:`SCORE_SHARE` of
    their score's share of the best one, ties by message id and part.

    For a question that may fill the recall share of the budget (a pool of hundreds of
    messages, most of them sharing only a name with it): ordered by score alone, the
    neighbours of the best hits came before passages holding more of the question's words
    ("Who gave Maria's family money when she was younger?" / "My aunt ... used to help my
    family out when we were struggling": 408th, past the room). Past-budget dev chat, on a
    kept replay (``benchmarks/past_budget_offline.py``): 97.0 -> 97.2 % of the evidence at
    a score share of 0.2, 0.5 or 1 (2: 97.0 %; relevance alone 97.2 %)."""
    top = max((p.score for p in passages), default=0.0) or 1.0
    return sorted(
        passages,
        key=lambda p: (-(p.relevance + SCORE_SHARE * p.score / top), p.message.id, p.part),
    )


def as_passages(messages: Iterable[Message], text_of: Callable[[Message], str]) -> list[Passage]:
    """Whole messages as passages, in the given order (best first), for callers and tests
    that already ranked messages.

    Args:
        messages: Messages, best first.
        text_of: Renders a message's content as plain text.

    Returns:
        One passage per message, scores decreasing.
    """
    listed = list(messages)
    return [
        Passage(m, 0, 1, text_of(m), float(len(listed) - index)) for index, m in enumerate(listed)
    ]
