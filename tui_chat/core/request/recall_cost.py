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

from tui_chat.core.cache_ttl import carried_price, observed_price
from tui_chat.core.models import Summary, Usage
from tui_chat.core.payback import RECALL_COST_SHARE, recall_allowance
from tui_chat.core.prices import FALLBACK_PRICES, Prices
from tui_chat.core.request.recall import Passage
from tui_chat.core.request.recall_need import need_weight
from tui_chat.core.request.timeline import Timeline

__all__ = ["RECALL_COST_SHARE", "RELEVANCE_FLOOR", "TELL_FLOOR", "matching", "recall_cap"]

RELEVANCE_FLOOR = 0.1
"""Recalled passages below this relevance (:attr:`~.recall.Passage.relevance`) are left out
where the cost cap applies: on the dev LoCoMo conversations the floor keeps 95.7 % of the
evidence passages among the candidates and cuts the median recall from 76 passages to what
matches (``benchmarks/RESULTS.md``, session 4)."""


TELL_FLOOR = 0.3
"""Where recall is capped, a message that asks nothing (:func:`~.recall_need.asks`: news,
thanks, a reply to what was just said) recalls only the passages holding this share of its
word weight: what it clearly mentions again ("taekwondo" of "I'm off to do some taekwondo!"),
not every passage sharing one of its words. Past-budget chat (``benchmarks/past_budget.py``,
warm): 11 % of the chat lines' recalled passages reached 0.3, 73 % the ordinary floor; the warm
bill 0.761x -> 0.717x (floor 0.25) / 0.692x (0.35) with the same evidence (every question
asks)."""


def recall_cap(
    summary: Summary | None,
    timeline: Timeline,
    limit: int,
    pauses: Sequence[float],
    cache_ttl: str,
    covered_tokens: int = 0,
    prices: Prices = FALLBACK_PRICES,
    replies: Sequence[Usage] = (),
) -> int | None:
    """The most tokens recall may take, or ``None`` (no cap) when there is no summary, when
    the user asked for the version (``manual``: a compact made to shrink the request, not its
    bill, where the cap would leave recall a twentieth of the folded history while the strong
    plain search fills the same request), or when the history it stands for could not be
    carried anyway: it and the raw turns do not fit the model's ``limit`` (a small window,
    where recall is what keeps the past at all).

    The folded history is ``covered_tokens`` (the covered messages' stored counts), or else
    the summary's messages at the raw turns' mean size (a running version's own source counts
    only its last span and the summary before it: a version every three turns made that a
    few hundred tokens, and capped recall near 100 tokens in a history of 20,000).

    A carried token is priced from what the cache did for the newest ``replies`` (their
    reported usage, :func:`~tui_chat.core.cache_ttl.observed_price`), or where they say too
    little from the ``pauses`` (:func:`~tui_chat.core.cache_ttl.carried_price`). Past-budget
    LoCoMo chat kept warm while its stored times are the sessions' dates: the pauses priced a
    tenth of its turns cold (0.17x) where the cache read 99 % of every prefix (0.05x), and
    recall's cap was three times what carrying cost.
    """
    if summary is None or summary.trigger == "manual":
        return None
    raw = timeline.span_tokens(0, len(timeline))
    estimate = int(summary.covered_messages * raw / max(1, len(timeline)))
    folded = max(summary.source_tokens, covered_tokens or estimate)
    if folded + raw > limit:
        return None
    carried = observed_price(replies, prices)
    if carried is None:
        carried = carried_price(pauses, cache_ttl, prices)
    return recall_allowance(folded, carried)


def matching(recalled: Sequence[Passage], need: float = 0.0, asks: bool = True) -> list[Passage]:
    """The passages that match the new message well enough to be sent where recall is capped.

    The floor gives way as the cap does, by the message's need of the folded past
    (:func:`~.recall_need.need_weight`): a message the recent turns say nothing about keeps
    every candidate (its evidence often shares one rare word with it, a name or a place). One
    that ``asks`` nothing keeps only what matches it closely (:data:`TELL_FLOOR`)."""
    floor = RELEVANCE_FLOOR * (1.0 - need_weight(need)) if asks else TELL_FLOOR
    return [p for p in recalled if p.relevance >= floor]
