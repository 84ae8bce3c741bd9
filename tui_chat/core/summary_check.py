"""The gate a new summary passes before it may become active.

A summary stands in for everything it covers, so a bad one wipes the history: a summarizer
reply of 40,000 tokens once became active, and the next request held only the new message.
:func:`check_summary` keeps that from happening. A summary is refused (the version is recorded
``failed`` with the reason) when it is empty, when it is degenerate (a few words repeated over
and over), when it is mostly escape sequences or control characters, or when it is so far over
its budget that cutting it would keep an arbitrary fraction; a summary somewhat over its budget
is cut to it at a line or sentence end. Either way no summary larger than its budget is ever
activated, so it can never push the recent turns or recall out of the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_chat.core.tokens import TokenCounter

MAX_OVERSHOOT = 4.0
"""A summary more than this many times its budget is refused rather than cut."""
MIN_WORDS = 3
"""Fewer words than this is an empty summary."""
MIN_DISTINCT = 0.01
"""A long summary (400+ words) with fewer distinct words than this share (and than 10) is
degenerate: one phrase repeated, not a summary."""

_WORD = re.compile(r"\w+", re.UNICODE)
_ESCAPES = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?"  # terminal
    r"|\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|e\[|[0-7]{3}|[nrt])"  # escaped
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # other control characters
)
MAX_ESCAPES = 0.1
"""A summary more than this share of whose characters are escape sequences or control
characters is refused: terminal codes or escaped bytes, not a summary."""


class SummaryRejected(ValueError):
    """A summary that must not become active; the message is the reason recorded."""


@dataclass(frozen=True, slots=True)
class Checked:
    """A summary that passed, possibly cut to its budget."""

    text: str
    cut_from: int | None
    """Its size in tokens before it was cut (``None``: not cut)."""


def _cut(text: str, budget: int, counter: TokenCounter) -> str:
    """The longest prefix within ``budget`` tokens ending at a line or sentence end."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    kept = text[:low]
    ends = [kept.rfind("\n"), kept.rfind(". "), kept.rfind(".\n")]
    edge = max(ends)
    if edge > len(kept) // 2:
        kept = kept[: edge + 1]
    return kept.rstrip()


def check_summary(text: str, budget: int, counter: TokenCounter) -> Checked:
    """Pass, cut or refuse a new summary.

    Args:
        text: The summarizer's text.
        budget: The summary budget in tokens (the policy's ``summary_max_tokens``).
        counter: The token counter.

    Returns:
        The summary to store, within ``budget`` tokens.

    Raises:
        SummaryRejected: empty, degenerate, or more than :data:`MAX_OVERSHOOT` times the
            budget; the message says which, with the figures.
    """
    words = _WORD.findall(text)
    if len(words) < MIN_WORDS:
        raise SummaryRejected(f"the summary is empty ({len(words)} words); nothing was activated")
    distinct = len({w.lower() for w in words})
    if len(words) >= 400 and distinct < max(10, MIN_DISTINCT * len(words)):
        raise SummaryRejected(
            f"the summary has no structure: {distinct} distinct words in {len(words):,}; "
            "nothing was activated"
        )
    escaped = sum(len(m.group(0)) for m in _ESCAPES.finditer(text))
    if escaped > MAX_ESCAPES * len(text):
        raise SummaryRejected(
            f"the summary is mostly escape sequences or control characters ({escaped:,} of "
            f"{len(text):,} characters); nothing was activated"
        )
    tokens = counter.count(text)
    if tokens <= budget:
        return Checked(text, None)
    if tokens > MAX_OVERSHOOT * budget:
        raise SummaryRejected(
            f"the summary is {tokens:,} tokens, over {MAX_OVERSHOOT:g}x its budget of "
            f"{budget:,}; nothing was activated (regenerate, or raise summary_max_tokens)"
        )
    return Checked(_cut(text, budget, counter), tokens)
