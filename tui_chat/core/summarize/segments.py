"""Segments (seeds 001, 003): one summary per block of turns, rolled up past their budget."""

from __future__ import annotations

import math
from collections.abc import Generator, Iterable, Sequence

from tui_chat.core.blocks import message_body
from tui_chat.core.models import Message, Segment
from tui_chat.core.summarize.fields import split_fields
from tui_chat.core.summarize.targets import MIN_SEGMENT_CHARS, chars_for_tokens
from tui_chat.core.summarize.types import SummaryInput
from tui_chat.core.tokens import get_counter

ROLLUP_RATE = 0.5
"""A roll-up merge aims at this share of the merged segments' characters."""

MAX_ROLLUPS = 8
"""Upper bound on merges for one version (each merge removes at least one segment)."""


def turn_range(messages: Sequence[Message]) -> tuple[int, int]:
    """The first and last turn of some messages.

    Args:
        messages: Messages in order.

    Returns:
        ``(first, last)``, ``(0, 0)`` for none.
    """
    turns = [m.turn for m in messages]
    return (min(turns), max(turns)) if turns else (0, 0)


def turns_label(turns: tuple[int, int]) -> str:
    """A turn range as a reader says it.

    Args:
        turns: ``(first, last)``.

    Returns:
        ``turn 3`` or ``turns 1-3``.
    """
    first, last = turns
    return f"turn {first}" if first == last else f"turns {first}-{last}"


def segments_text(segments: Iterable[Segment]) -> str:
    """Join segments in order, each headed by its turn range (seed 001's ``[1-3턴] …``).

    Args:
        segments: Segments in turn order.

    Returns:
        The text the memory block carries for them.
    """
    return "\n\n".join(f"[{turns_label(s.turns)}] {s.text}" for s in segments)


def segments_tokens(segments: Sequence[Segment]) -> int:
    """Estimate the tokens the segments take in the memory block.

    Args:
        segments: Segments in order.

    Returns:
        Tokens of :func:`segments_text` of them.
    """
    return get_counter().count(segments_text(segments))


def parent_segments(request: SummaryInput) -> list[Segment]:
    """The parent's segments; a parent made with ``running`` becomes one level-1 segment.

    Args:
        request: The version being made.

    Returns:
        The segments the new version starts from (empty for the first version).
    """
    previous = request.previous
    if previous is None:
        return []
    if previous.segments:
        return list(previous.segments)
    brief = split_fields(previous.text).strip()
    if not brief:
        return []
    first_new = turn_range(request.messages)[0]
    last = max(1, first_new - 1)
    return [
        Segment(
            turns=(1, last),
            text=brief,
            original_chars=max(len(brief), previous.source_tokens * 4),
            summary_chars=len(brief),
            compression_rate=1.0,
            level=1,
        )
    ]


def new_segment(messages: Sequence[Message], text: str, rate: float) -> Segment:
    """The level-0 segment that summarises ``messages``.

    Args:
        messages: The messages of the new block.
        text: Its summary.
        rate: The compression rate it was made for.

    Returns:
        The segment.
    """
    original = sum(len(message_body(m)) for m in messages)
    return Segment(
        turns=turn_range(messages),
        text=text,
        original_chars=original,
        summary_chars=len(text),
        compression_rate=rate,
        level=0,
    )


RollUp = Generator[list[Segment], str, list[Segment]]
"""Yields the oldest segments to merge, receives the merged text, returns the final list."""


def roll_up(segments: list[Segment], budget: int) -> RollUp:
    """Merge the oldest segments into higher-level ones until they fit ``budget`` tokens.

    The oldest half (at least two) is merged each round; a lone segment over budget is
    condensed into a higher level by itself. Stops when a merge makes no progress.

    Args:
        segments: The segments in order.
        budget: Tokens they may take.

    Returns:
        A generator that yields the oldest segments to merge, receives the merged text, and
        returns the final segments.
    """
    for _ in range(MAX_ROLLUPS):
        if not segments or segments_tokens(segments) <= budget:
            break
        count = 1 if len(segments) == 1 else max(2, math.ceil(len(segments) / 2))
        oldest, rest = segments[:count], segments[count:]
        text = (yield oldest).strip()
        if not text or len(text) >= sum(s.summary_chars for s in oldest):
            break  # no progress: keep what we have rather than loop
        original = sum(s.original_chars for s in oldest)
        merged = Segment(
            turns=(oldest[0].turns[0], oldest[-1].turns[1]),
            text=text,
            original_chars=original,
            summary_chars=len(text),
            compression_rate=round(len(text) / original, 3) if original else 0.0,
            level=max(s.level for s in oldest) + 1,
        )
        segments = [merged, *rest]
    return segments


def rollup_target(segments: Sequence[Segment], budget: int) -> int:
    """Characters a merge aims at: half the merged text, and at most half the token budget.

    Args:
        segments: The segments being merged.
        budget: The token budget of all segments.

    Returns:
        The target characters (at least ``MIN_SEGMENT_CHARS``).
    """
    half = int(sum(s.summary_chars for s in segments) * ROLLUP_RATE)
    cap = chars_for_tokens("\n".join(s.text for s in segments), max(1, budget // 2))
    return max(MIN_SEGMENT_CHARS, min(half, cap))
