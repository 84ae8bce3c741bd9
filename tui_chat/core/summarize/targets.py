"""How long a new summary may be: the running brief's caps, a segment's rate and budget."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.core.blocks import message_body
from tui_chat.core.models import Message
from tui_chat.core.summarize.fields import split_fields
from tui_chat.core.summarize.text import fewest_tokens, is_mostly_korean
from tui_chat.core.summarize.types import SummaryInput
from tui_chat.core.tokens import get_counter
from tui_chat.core.triggers import compaction_level

KOREAN_CHAR_SHARE = 4 / 7
"""Seed 004: the running brief is 400 characters in Korean where English gets 700."""

MIN_SEGMENT_CHARS = 40
"""Smallest target for one segment, so a two-line block still says something."""


@dataclass(frozen=True)
class Targets:
    """The length targets of one new version."""

    max_chars: int | None
    """Hard cap on the running brief's characters."""
    max_tokens: int
    """Token budget of the running brief, or of all segments together."""
    rate: float
    """Compression rate for a new segment (and the offline running extract)."""
    level: str | None
    """Seed 003 level name when importance picks the rate."""


def targets_for(request: SummaryInput) -> Targets:
    """The targets of the version ``request`` makes.

    Args:
        request: The version being made.

    Returns:
        Its caps and rate: the Korean share of ``summary_max_chars`` when the text is mostly
        Korean, and the seed 003 level's rate when ``importance`` is on.
    """
    policy = request.policy
    level: str | None = None
    rate = policy.compression_rate
    if policy.importance:
        level, rate = compaction_level(request.used_ratio)
    cap = policy.summary_max_chars
    if cap is not None:
        sample = "\n".join(message_body(m) for m in request.messages)
        if request.previous is not None:
            sample = split_fields(request.previous.text) + "\n" + sample
        if is_mostly_korean(sample):
            cap = max(1, round(cap * KOREAN_CHAR_SHARE))
    return Targets(
        max_chars=cap, max_tokens=max(1, policy.summary_max_tokens), rate=rate, level=level
    )


MAX_RATE = 0.5
"""The largest ``compression_rate``: at it a running summary may use its whole budget."""


def running_tokens(targets: Targets, source_tokens: int) -> int:
    """The token target of a ``running`` summary: ``compression_rate`` of its source, and never
    more than the rate's share of the budget (``summary_max_tokens × rate / 0.5``).

    The second cap is what makes the rate matter in a long conversation, where the source is
    far larger than the budget: 0.1 asks for a fifth of what 0.5 asks for.

    Args:
        targets: The version's targets.
        source_tokens: Tokens of the previous summary plus the new messages.

    Returns:
        The target, at least 64 tokens (and never above ``max_tokens``).
    """
    scaled = math.ceil(targets.max_tokens * min(1.0, targets.rate / MAX_RATE))
    wanted = math.ceil(source_tokens * targets.rate)
    return min(targets.max_tokens, max(64, min(wanted, scaled)))


_LONGEST = 2**53
"""A source longer than any real one: where :func:`running_tokens` stops growing."""


def running_tokens_of(targets: Targets, source: str) -> int:
    """:func:`running_tokens` of a source text, encoding it only when its length matters.

    The target grows with the source up to a cap; a source whose :func:`fewest_tokens` floor
    already reaches the cap has that target whatever its exact count (a long span's chunk
    always does), so only a short source is encoded.

    Args:
        targets: The version's targets.
        source: The previous summary and the new messages, as one text.

    Returns:
        The token target.
    """
    at_least = running_tokens(targets, fewest_tokens(source))
    if at_least == running_tokens(targets, _LONGEST):
        return at_least
    return running_tokens(targets, get_counter().count(source))


def chars_for_tokens(text: str, tokens: int) -> int:
    """How many characters of text like ``text`` make ``tokens`` tokens.

    Args:
        text: A sample of the text (its characters per token are measured).
        tokens: The token budget.

    Returns:
        The characters that fit the budget (4 per token for an empty sample).
    """
    counted = get_counter().count(text)
    per_token = len(text) / counted if counted else 4.0
    return int(tokens * per_token)


def segment_target(messages: Sequence[Message], rate: float, max_tokens: int) -> tuple[int, int]:
    """The size of a new segment: seed 001's formula, capped by the segments' token budget.

    Args:
        messages: The messages the segment summarises.
        rate: The compression rate.
        max_tokens: The token budget of all segments.

    Returns:
        ``(original_chars, target_chars)``.
    """
    bodies = [message_body(m) for m in messages]
    original = sum(len(b) for b in bodies)
    cap = chars_for_tokens("\n".join(bodies), max_tokens)
    return original, max(MIN_SEGMENT_CHARS, min(int(original * rate), cap))
