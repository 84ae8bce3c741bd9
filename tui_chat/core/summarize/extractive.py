"""The offline path: a deterministic summary of the most important sentences, kept verbatim."""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from tui_chat.core.blocks import message_body, message_parts
from tui_chat.core.identifiers import extract_identifiers, might_hold_identifiers
from tui_chat.core.summarize.fields import DECISION, DECISION_STEMS, split_fields
from tui_chat.core.summarize.output import finish, require_messages
from tui_chat.core.summarize.segments import (
    new_segment,
    parent_segments,
    roll_up,
    rollup_target,
    segments_text,
)
from tui_chat.core.summarize.targets import running_tokens_of, segment_target, targets_for
from tui_chat.core.summarize.text import fewest_tokens, sentences, trim
from tui_chat.core.summarize.types import SummaryInput, SummaryOutput
from tui_chat.core.tokens import get_counter

WEIGHT_PINNED = 1.0
WEIGHT_DECISION = 0.8
WEIGHT_PREVIOUS = 0.75
WEIGHT_TOOL_RESULT = 0.7
WEIGHT_KEYWORD = 0.5
WEIGHT_BASE = 0.2
"""Seed 003 importance weights (pinned, decision, tool result, keyword) and our two extras:
sentences of the parent summary (already distilled, and where early instructions live), and
anything else."""

IDENTIFIER_BONUS = 0.1
"""Added per identifier a sentence would bring that the summary does not hold yet (max 0.3)."""

SENTENCE_MAX_CHARS = 300
"""A longer sentence is cut to this length in an offline summary."""

_PREFERENCE = re.compile(
    r"\b(?:i prefer|prefer|always|never|don't|do not|please (?:use|keep|avoid)|make sure|"
    r"must(?:n't| not)?)\b|선호|항상|절대|하지 ?마|말아|반드시|꼭 ",
    re.IGNORECASE,
)

_PREFERENCE_STEMS = re.compile(
    r"prefer|alway|never|don't|do not|plea|make|mu|선호|항상|절대|하지|말아|반드시|꼭 "
)
"""A piece of every :data:`_PREFERENCE` alternative, as :data:`DECISION_STEMS` is for
:data:`DECISION` (looked for in the text's ``lower()``)."""

_STOPWORDS = frozenset(
    {
        *("the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "every", "all"),
        *("any", "keep", "keeping", "please", "make", "sure", "that", "this", "these", "those"),
        *("is", "are", "be", "it", "its", "summary", "summarize", "모든", "그리고", "유지", "요약"),
    }
)

Source = Literal["summary", "user", "assistant", "tool"]
"""Where a candidate sentence comes from (tool calls and results are ``tool``)."""


class _Sentence(NamedTuple):
    """One candidate sentence with its score parts (a tuple: hundreds of thousands are made
    for a long span)."""

    position: int
    source: Source
    text: str
    weight: float
    """Importance weight (seed 003)."""
    bonus: float
    """Instruction words, the opening request, recency."""
    ids: frozenset[str]
    """Identifiers (case-folded) the sentence carries."""
    keyword_only: bool
    """The weight is the keyword level only because of identifiers."""

    def gain(self, covered: set[str]) -> float:
        """Score given the identifiers already kept: repeats earn nothing (redundancy)."""
        fresh = len(self.ids - covered)
        weight = WEIGHT_BASE if self.keyword_only and not fresh else self.weight
        return weight + min(3 * IDENTIFIER_BONUS, IDENTIFIER_BONUS * fresh) + self.bonus


def _instruction_terms(instructions: str | None) -> set[str]:
    if not instructions:
        return set()
    words = re.findall(r"[\w.-]{3,}", instructions.casefold())
    return {w for w in words if w not in _STOPWORDS}


Reading = tuple[str, frozenset[str], bool]
"""What a candidate's text gives by itself: the text as kept (trimmed), the identifiers it
carries (case-folded) and whether it states a decision or a preference."""


_Block = tuple[bool, bool]
"""What a whole text block lacks: ``(no identifier can be in it, a decision can be)``."""


def _block(text: str) -> _Block:
    """:data:`_Block` of a text (its sentences are parts of it; a cut one ends in ``…``)."""
    # lower() maps each character on its own (but a Greek sigma, which no stem holds), so a
    # stem in the lower() of a part of the text is in the text's lower() too
    lowered = text.lower()
    may_decide = bool(DECISION_STEMS.search(lowered) or _PREFERENCE_STEMS.search(lowered))
    return not might_hold_identifiers(text), may_decide


def _read(text: str, block: _Block) -> Reading:
    """Read one sentence of a text block, knowing what the whole block lacks (:func:`_block`):
    no part of a block without an identifier's characters has one unless trimming changed it,
    and no part of a block without a decision's stems states one."""
    whole = len(text) <= SENTENCE_MAX_CHARS  # trim gives it back unchanged (it is stripped)
    plain, may_decide = block
    text = trim(text, SENTENCE_MAX_CHARS)
    if plain and whole:
        ids: frozenset[str] = frozenset()
    else:
        ids = frozenset(i.casefold() for i in extract_identifiers(text))
    return text, ids, may_decide and _states_a_decision(text)


def _sentence(
    position: int,
    source: Source,
    reading: Reading,
    kind: str,
    *,
    pinned: bool,
    terms: set[str],
    bonus: float,
) -> _Sentence:
    text, ids, decides = reading
    folded = text.casefold()
    matched = bool(terms) and any(term in folded for term in terms)
    keyword_only = False
    if pinned:
        weight = WEIGHT_PINNED
    elif decides:
        weight = WEIGHT_DECISION
    elif source == "summary":
        weight = WEIGHT_PREVIOUS
    elif kind == "tool_result":
        weight = WEIGHT_TOOL_RESULT
    elif matched or text.rstrip().endswith("?"):
        weight = WEIGHT_KEYWORD
    elif ids:
        weight, keyword_only = WEIGHT_KEYWORD, True
    else:
        weight = WEIGHT_BASE
    if matched:
        bonus += 0.3
    return _Sentence(position, source, text, weight, bonus, ids, keyword_only)


def _states_a_decision(text: str) -> bool:
    """A decision or a stated preference (the two patterns run only where their stems are)."""
    lowered = text.lower()
    if DECISION_STEMS.search(lowered) and DECISION.search(text):
        return True
    return bool(_PREFERENCE_STEMS.search(lowered) and _PREFERENCE.search(text))


def _candidates(
    request: SummaryInput, previous_text: str, known: Mapping[str, Reading] | None = None
) -> tuple[list[_Sentence], dict[str, Reading]]:
    """Every candidate sentence, the previous summary's first.

    Args:
        request: The version being made.
        previous_text: The summary the new text continues (its sentences are candidates).
        known: Readings of sentences of an earlier summary (a long span is folded in chunks,
            each into the text of the one before: most of its sentences come back).

    Returns:
        The candidates, and the readings of the previous summary's sentences.
    """
    terms = _instruction_terms(request.instructions)
    known = known or {}
    block = _block(previous_text)
    summary: dict[str, Reading] = {}
    # (source, reading, block kind, pinned, opening request)
    raw: list[tuple[Source, Reading, str, bool, bool]] = []
    for s in sentences(previous_text):
        reading = summary.get(s) or known.get(s) or _read(s, block)
        summary[s] = reading
        raw.append(("summary", reading, "text", False, False))
    first_user = True
    for message in request.messages:
        pinned = message.id in request.pinned_ids
        for kind, text in message_parts(message):
            source: Source = "tool" if kind in ("tool_use", "tool_result") else message.role
            opening = first_user and source == "user"
            block = _block(text)
            raw.extend((source, _read(s, block), kind, pinned, opening) for s in sentences(text))
            if opening:
                first_user = False
    last = max(1, len(raw) - 1)
    candidates = [
        _sentence(
            index,
            source,
            reading,
            kind,
            pinned=pinned,
            terms=terms,
            # the opening request states the task: keep it (instructions drift away otherwise)
            bonus=0.1 * index / last + (0.15 if opening else 0.0),
        )
        for index, (source, reading, kind, pinned, opening) in enumerate(raw)
    ]
    return candidates, summary


def _line(sentence: _Sentence, text: str | None = None) -> str:
    body = sentence.text if text is None else text
    if sentence.source == "summary":
        return body
    label = {"user": "User: ", "tool": "Tool: ", "assistant": ""}[sentence.source]
    return label + body


def _fit(sentence: _Sentence, max_chars: int | None, max_tokens: int | None) -> str:
    """The sentence's line cut to fit the limits on its own (the best one always goes in)."""
    counter = get_counter()
    line = _line(sentence)
    limit = len(line) if max_chars is None else min(len(line), max(1, max_chars))
    line = trim(line, limit)
    while max_tokens is not None and limit > 1 and counter.count(line) + 1 > max_tokens:
        limit = max(1, int(limit * 0.8))
        line = trim(line, limit)
    return line


def _select(candidates: Sequence[_Sentence], max_chars: int | None, max_tokens: int | None) -> str:
    """Pick the best sentences within the limits; return them in conversation order.

    Lazy greedy: a sentence's gain only falls as the kept identifiers grow, so a popped
    sentence whose recomputed gain still beats the next stored one is the true best.
    """
    counter = get_counter()
    heap = [(-s.gain(set()), s.position, s) for s in candidates]
    heapq.heapify(heap)
    covered: set[str] = set()
    seen: set[str] = set()
    chosen: list[tuple[int, str]] = []
    chars = tokens = 0
    while heap:
        _, position, sentence = heapq.heappop(heap)
        gain = sentence.gain(covered)
        if heap and gain < -heap[0][0]:
            heapq.heappush(heap, (-gain, position, sentence))
            continue
        line = _line(sentence)
        if not chosen:
            line = _fit(sentence, max_chars, max_tokens)
        cost = len(line) + (1 if chosen else 0)
        if max_chars is not None and chars + cost > max_chars:
            continue
        if max_tokens is not None and tokens + fewest_tokens(line) + 1 > max_tokens:
            continue  # too long whatever its exact count: not encoded (most of a long span)
        key = " ".join(sentence.text.casefold().split())
        if key in seen:
            continue
        weight = counter.count(line) + 1
        if max_tokens is not None and tokens + weight > max_tokens:
            continue
        seen.add(key)
        covered |= sentence.ids
        chosen.append((position, line))
        chars += cost
        tokens += weight
    chosen.sort()
    return "\n".join(line for _, line in chosen)


class ExtractiveSummarizer:
    """Offline, deterministic summarizer: keeps the most important sentences verbatim.

    Sentences are scored with seed 003's importance weights (pinned 1.0, decision or stated
    preference 0.8, tool result 0.7, identifier / keyword / question 0.5), 0.75 for sentences
    of the parent summary and 0.2 for anything else, plus 0.1 per identifier not yet kept (at
    most 0.3), 0.3 for words of the user's instructions, 0.15 for the opening request and up to
    0.1 for recency. The best are kept within the same targets the model gets and printed in
    conversation order. No network, no randomness: the same input always gives the same output.
    """

    name = "extractive"

    def __init__(self) -> None:
        """A summarizer; it keeps what it read of the last summary it continued."""
        self._summary_readings: dict[str, Reading] = {}

    async def summarize(self, request: SummaryInput) -> SummaryOutput:
        """Make the new version's content offline, in a worker thread (long inputs take a
        second or two of CPU, which must not stall the event loop).

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields (``usage`` is ``None``).

        Raises:
            SummaryError: when there is nothing to summarize.
        """
        return await asyncio.to_thread(self.summarize_sync, request)

    def summarize_sync(self, request: SummaryInput) -> SummaryOutput:
        """The same as :meth:`summarize`, run in the calling thread.

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields.

        Raises:
            SummaryError: when there is nothing to summarize.
        """
        require_messages(request)
        targets = targets_for(request)
        if request.policy.strategy == "running":
            previous = split_fields(request.previous.text) if request.previous is not None else ""
            candidates, self._summary_readings = _candidates(
                request, previous, self._summary_readings
            )
            source = previous + "\n" + "\n".join(message_body(m) for m in request.messages)
            budget = running_tokens_of(targets, source)
            text = _select(candidates, targets.max_chars, budget)
            return finish(request, text, (), self.name, None)

        _, target = segment_target(request.messages, targets.rate, targets.max_tokens)
        block = _select(_candidates(request, "")[0], target, targets.max_tokens)
        segments = [*parent_segments(request), new_segment(request.messages, block, targets.rate)]
        plan = roll_up(segments, targets.max_tokens)
        rollup = SummaryInput(policy=request.policy, previous=None, messages=())
        try:
            oldest = next(plan)
            while True:
                pool, _ = _candidates(rollup, "\n".join(s.text for s in oldest))
                oldest = plan.send(
                    _select(pool, rollup_target(oldest, targets.max_tokens), targets.max_tokens)
                )
        except StopIteration as done:
            segments = done.value
        return finish(request, segments_text(segments), segments, self.name, None)
