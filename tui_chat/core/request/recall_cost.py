"""What recall may cost, and which passages earn a place (docs/design.md, "Recall").

Recall never makes a turn dearer than carrying the history it stands for: recalled text is
sent uncached (1x) where the folded history would be read from the prompt cache (at the
model's read price: 0.1x, 0.05x or 0.025x of input), or written again after a pause longer
than the cache lives: the price follows this conversation's pauses and its model's prices,
:func:`~tui_chat.core.cache_ttl.carried_price`). Where that history
could be carried at all, recall takes at most :data:`RECALL_COST_SHARE` of that price and only
passages that match the new message (:data:`RELEVANCE_FLOOR`); at a small window, where it
could not be carried, recall is what keeps the past and is not capped.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.cache_ttl import carried_price
from tui_chat.core.models import Summary
from tui_chat.core.prices import FALLBACK_PRICES, Prices
from tui_chat.core.request.recall import Passage
from tui_chat.core.request.timeline import Timeline

RELEVANCE_FLOOR = 0.1
"""Recalled passages below this relevance (:attr:`~.recall.Passage.relevance`) are left out
where the cost cap applies: on the dev LoCoMo conversations the floor keeps 95.7 % of the
evidence passages among the candidates and cuts the median recall from 76 passages to what
matches (``benchmarks/RESULTS.md``, session 4)."""

RECALL_COST_SHARE = 0.5
"""Recall may cost at most this share of what carrying the folded history would: a fold must
still save the rest (measured: at the full share recall ate a coding session's savings)."""


def recall_cap(
    summary: Summary | None,
    timeline: Timeline,
    limit: int,
    pauses: Sequence[float],
    cache_ttl: str,
    prices: Prices = FALLBACK_PRICES,
) -> int | None:
    """The most tokens recall may take, or ``None`` (no cap) when there is no summary or the
    history it stands for could not be carried anyway: it and the raw turns do not fit the
    model's ``limit`` (a small window, where recall is what keeps the past at all).

    The folded history is the summary's messages at the raw turns' mean size (a running
    version's own source counts only its last span and the summary before it).
    """
    if summary is None:
        return None
    raw = timeline.span_tokens(0, len(timeline))
    folded = max(summary.source_tokens, int(summary.covered_messages * raw / max(1, len(timeline))))
    if folded + raw > limit:
        return None
    return int(RECALL_COST_SHARE * carried_price(pauses, cache_ttl, prices) * folded)


def matching(recalled: Sequence[Passage]) -> list[Passage]:
    """The passages that match the new message well enough to be sent where recall is capped."""
    return [p for p in recalled if p.relevance >= RELEVANCE_FLOOR]
