"""Compact when it pays: the cost trigger.

Prompt caching makes a long conversation cheap between compactions (its prefix is read at
0.1x the input price) and a compaction expensive at first: the summary call costs something,
and the next request writes its new prefix to the cache at 1.25x. Compacting too early wastes
money; compacting too late carries tokens that every turn pays for again, and a turn that comes
after the 5-minute cache lifetime pays 1.25x for all of them.

The rule, in input-token equivalents of the chat model (output tokens weigh ``output_ratio``,
5 for every current Claude model)::

    per-turn price of a carried token   m = 0.1 + (1.25 - 0.1) x cold_share
    saving per later turn               folded x m - recall
    one-off cost                        summary_call + (1.25 - m) x new_prefix
    compact when                        horizon x (folded x m - recall) >= one-off cost

``recall`` is what the first fold adds to every later turn uncached (excerpts of the folded
history, at most 0.1x of it). ``folded`` is what the compaction takes out of every later
request (the span it covers plus the summary it replaces, minus the summary it writes).
``cold_share`` is the share of turns that arrive after the cache expired (a pause longer than
5 minutes): a conversation's pauses decide whether carried tokens are read at 0.1x or written
again at 1.25x. ``summary_call`` is the price of the call that writes the summary: a
continuation of the cached conversation reads the prefix at 0.1x, adds its instruction
uncached, and pays its output; the offline summarizer costs nothing. A compaction pays for
itself when the tokens it removes save, within ``horizon`` turns, more than it costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_chat.core.policy import Policy

__all__ = [
    "CACHE_READ",
    "CACHE_WRITE",
    "INSTRUCTION_TOKENS",
    "CompactionCost",
    "break_even",
    "carried_token_price",
    "estimate",
    "one_off",
    "pays",
    "savings",
]

INSTRUCTION_TOKENS = 1_000
"""About what a continuation adds uncached: the last reply's tail and the summary instruction."""

CACHE_READ = 0.1
"""Price of a cache read relative to uncached input."""

CACHE_WRITE = 1.25
"""Price of a 5-minute cache write relative to uncached input."""


@dataclass(frozen=True)
class CompactionCost:
    """The figures the rule weighs, in tokens.

    Attributes:
        folded: Tokens every later request no longer carries.
        prefix: Tokens of the current request the summary call reads from the cache
            (0 for a summarizer that reads nothing).
        uncached: Tokens the summary call sends uncached (reply, instruction, or the span
            itself when the call cannot reuse the cache).
        summary: Expected output tokens of the summary call (0 for the offline summarizer).
        new_prefix: Tokens of the first request after the compaction, written to the cache.
        horizon: Turns within which the compaction must pay for itself.
        cold_share: Share of turns that find the cache expired (0–1).
        output_ratio: Output price over input price (5 for current Claude models).
    """

    folded: int
    prefix: int
    uncached: int
    summary: int
    new_prefix: int
    horizon: int = 4
    cold_share: float = 0.25
    output_ratio: float = 5.0
    recall: int = 0
    """Uncached tokens recall will add to every later turn because of this fold (the first
    fold starts recall; a later one only moves it)."""


def carried_token_price(cold_share: float) -> float:
    """What one carried prefix token costs per turn, relative to uncached input."""
    cold = min(1.0, max(0.0, cold_share))
    return CACHE_READ + (CACHE_WRITE - CACHE_READ) * cold


def one_off(cost: CompactionCost) -> float:
    """The compaction's own cost: the summary call and the rewritten prefix."""
    m = carried_token_price(cost.cold_share)
    call = CACHE_READ * cost.prefix + cost.uncached + cost.output_ratio * cost.summary
    return call + (CACHE_WRITE - m) * cost.new_prefix


def savings(cost: CompactionCost) -> float:
    """What not carrying ``folded`` tokens saves over ``horizon`` turns, less the uncached
    recall the fold brings into each of them."""
    per_turn = max(0, cost.folded) * carried_token_price(cost.cold_share) - max(0, cost.recall)
    return cost.horizon * per_turn


def pays(cost: CompactionCost) -> bool:
    """Whether the compaction pays for itself within ``horizon`` turns."""
    return cost.folded > 0 and savings(cost) >= one_off(cost)


def estimate(policy: Policy, *, foldable: int, summary: int, projected: int) -> CompactionCost:
    """The figures of a compaction that folds ``foldable`` tokens now.

    Args:
        policy: The conversation's policy (summarizer, summary size, horizon, cold share).
        foldable: Tokens of the raw messages the next version would fold.
        summary: Tokens of the active summary it would replace.
        projected: Tokens of the next request as it stands.

    Returns:
        The cost figures: the new summary is expected at ``compression_rate`` of what it
        folds, at most ``summary_max_tokens`` and the summary call's ``summarizer_max_tokens``;
        a ``claude`` (or ``auto``) summary reads the
        request from the cache, a ``server`` compaction sends its span uncached, and the
        offline summarizer costs nothing.
    """
    source = foldable + summary
    cap = min(policy.summary_max_tokens, policy.summarizer_max_tokens)
    written = min(cap, int(policy.compression_rate * source))
    folded = source - written
    if policy.summarizer == "extractive":
        prefix = uncached = output = 0
    elif policy.summarizer == "server":
        prefix, uncached, output = 0, source, written
    else:
        prefix, uncached, output = projected, INSTRUCTION_TOKENS, written
    # The first fold starts recall: its excerpts travel uncached with every later turn, at
    # most what carrying the folded history would cost (the request builder's cap).
    recall = 0
    if policy.recall and summary == 0:
        recall = min(policy.recall_budget_tokens, int(0.5 * CACHE_READ * source))
    return CompactionCost(
        recall=recall,
        folded=folded,
        prefix=prefix,
        uncached=uncached,
        summary=output,
        new_prefix=max(0, projected - folded),
        horizon=policy.payback_turns,
        cold_share=policy.cache_cold_share,
    )


def break_even(policy: Policy, *, fixed: int, summary: int, usable: int) -> int | None:
    """The request size from which folding its raw turns pays for itself (the gauge's
    "compact" marker under the ``cost`` trigger).

    Args:
        policy: The conversation's policy.
        fixed: Tokens of the request that are not raw turns (system, pins, summary, ledger,
            recall).
        summary: Tokens of the active summary.
        usable: The usable window.

    Returns:
        ``fixed`` plus the smallest foldable size that pays, or ``None`` when even the whole
        window would not.
    """

    def paying(foldable: int) -> bool:
        return pays(
            estimate(policy, foldable=foldable, summary=summary, projected=fixed + foldable)
        )

    low, high = 1, max(1, usable - fixed)
    if not paying(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if paying(middle):
            high = middle
        else:
            low = middle + 1
    return fixed + low
