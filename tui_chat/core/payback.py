"""Compact when it pays: the cost trigger, and which summary call is cheaper.

Prompt caching makes a long conversation cheap between compactions (its prefix is read at
the model's read price: 0.1x of input on most models, 0.05x on Opus 5.5 and Sonnet 5.5,
0.025x on Fable 5.1 and 5.2) and a compaction expensive at first: the summary call costs
something, and the next request writes its new prefix to the cache at the model's write price
(1.25x). Compacting too early wastes money; compacting too late carries tokens that every
turn pays for again, and a turn that comes after the 5-minute cache lifetime pays the write
price for all of them. Every multiplier is the chat model's own (``policy.prices``, filled
from the model table by the engine), never a constant.

The rule, in input-token equivalents of the chat model (``r`` its read and ``w`` its write
multiplier)::

    per-turn price of a carried token   m = r + (w - r) x cold_share
    saving per later turn               folded x m - recall
    one-off cost                        summary_call + (w - m) x new_prefix
    compact when                        horizon x (folded x m - recall) >= one-off cost

``recall`` is what the first fold adds to every later turn uncached (excerpts of the folded
history, at most half of what carrying it costs). ``folded`` is what the compaction takes out
of every later request (the span it covers plus the summary it replaces, minus the summary it
writes). ``cold_share`` is the share of turns that arrive after the cache expired (a pause
longer than 5 minutes). ``summary_call`` is the price of the call that writes the summary, at
the prices of the model it runs on: a continuation of the cached conversation reads the prefix
at the chat model's read price, adds its instruction uncached and pays its output; a
standalone call sends the span uncached to the summarizer model (each at its own card, a
long-prompt tier included); ``auto``/``claude`` take the cheaper of the two
(:func:`cheaper_call`, the same choice the compaction worker makes), and the offline
summarizer costs nothing. A compaction pays for itself when the tokens it removes save,
within ``horizon`` turns, more than it costs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_chat.core.policy import Policy
from tui_chat.core.prices import Prices

__all__ = [
    "INSTRUCTION_TOKENS",
    "RECALL_COST_SHARE",
    "CompactionCost",
    "SummaryCalls",
    "break_even",
    "call_usd",
    "carried_token_price",
    "cheaper_call",
    "estimate",
    "one_off",
    "pays",
    "recall_allowance",
    "savings",
]

INSTRUCTION_TOKENS = 1_000
"""About what a continuation adds uncached: the last reply's tail and the summary instruction."""

RECALL_COST_SHARE = 0.2
"""Recall may cost at most this share of what carrying the folded history would (the request
builder's cap, :func:`tui_chat.core.request.recall_cost.recall_cap`, and the recall a first
fold is expected to start, :func:`estimate`): a fold must still save the rest (measured: at the
full share recall ate a coding session's savings). A message that needs the folded past more
than its recent turns give may take more (:mod:`~tui_chat.core.request.recall_need`): with
that, 0.2 rather than 0.5 cut the past-budget chat's warm bill from 1.19x to 0.87x sending
everything for 1.2 points of evidence."""


def recall_allowance(folded: int, carried: float, recalled: float = 1.0) -> int:
    """The most recalled tokens a turn may send for ``folded`` tokens of history that would
    cost ``carried`` each to carry (a multiple of the input price: a read, or a write after a
    cold pause), when a recalled token costs ``recalled`` (uncached: 1x). In tokens, so the
    cheaper a model's reads beside its input, the less recall a fold may buy."""
    return int(RECALL_COST_SHARE * carried * max(0, folded) / max(recalled, 1e-9))


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
        read: The chat model's cache read price over its input price.
        write: The chat model's 5-minute cache write price over its input price.
        call: The summary call's price in the chat model's input-token equivalents, when
            it was priced at its own model's card (``None``: priced from ``prefix``,
            ``uncached`` and ``summary`` at the chat model's multipliers).
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
    read: float = 0.1
    write: float = 1.25
    call: float | None = None


def carried_token_price(cold_share: float, read: float = 0.1, write: float = 1.25) -> float:
    """What one carried prefix token costs per turn, relative to uncached input: a read
    while the cache is warm, a write for the share of turns that find it cold."""
    cold = min(1.0, max(0.0, cold_share))
    return read + (write - read) * cold


def one_off(cost: CompactionCost) -> float:
    """The compaction's own cost: the summary call and the rewritten prefix."""
    m = carried_token_price(cost.cold_share, cost.read, cost.write)
    call = cost.call
    if call is None:
        call = cost.read * cost.prefix + cost.uncached + cost.output_ratio * cost.summary
    return call + (cost.write - m) * cost.new_prefix


def savings(cost: CompactionCost) -> float:
    """What not carrying ``folded`` tokens saves over ``horizon`` turns, less the uncached
    recall the fold brings into each of them."""
    carried = carried_token_price(cost.cold_share, cost.read, cost.write)
    per_turn = max(0, cost.folded) * carried - max(0, cost.recall)
    return cost.horizon * per_turn


def call_usd(prices: Prices, *, uncached: int, output: int, read: int = 0) -> float:
    """What one call costs in USD at a model's card: ``uncached`` input, ``read`` cache-read
    input and ``output`` tokens, at the tier its prompt (``uncached + read``) falls in."""
    rates = prices.rates(uncached + read)
    return (rates.input * uncached + rates.read * read + rates.output * output) / 1_000_000


@dataclass(frozen=True)
class SummaryCalls:
    """The two ways Claude can write a summary, priced at their models' cards (USD)."""

    continuation: float
    """Continuing the cached chat request on the chat model: the prefix read from the cache,
    the instruction uncached, the summary as output."""
    standalone: float
    """A fresh call to the summarizer model: the span and the instruction uncached."""

    @property
    def cheaper(self) -> str:
        """``continuation`` or ``standalone`` (a tie keeps the continuation: it reads the
        whole conversation)."""
        return "standalone" if self.standalone < self.continuation else "continuation"


def cheaper_call(policy: Policy, *, prefix: int, span: int, written: int) -> SummaryCalls:
    """Price a continuation of the cached chat request against a standalone summary call.

    Args:
        policy: The conversation's policy (its chat and summarizer models' cards).
        prefix: Tokens of the chat request a continuation repeats (read from the cache).
        span: Tokens of the history the summary covers (what a standalone call sends).
        written: Expected summary tokens (the output of either call).
    """
    return SummaryCalls(
        continuation=call_usd(
            policy.prices, read=prefix, uncached=INSTRUCTION_TOKENS, output=written
        ),
        standalone=call_usd(
            policy.summarizer_prices, uncached=span + INSTRUCTION_TOKENS, output=written
        ),
    )


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
        a ``claude`` (or ``auto``) summary is the cheaper of a continuation that reads the
        request from the cache and a standalone call to ``summarizer_model``, a model id is
        that model standalone, a ``server`` compaction sends its span uncached, and the
        offline summarizer costs nothing; each at the card of the model it runs on.
    """
    source = foldable + summary
    cap = min(policy.summary_max_tokens, policy.summarizer_max_tokens)
    written = min(cap, int(policy.compression_rate * source))
    folded = source - written
    prices = policy.prices
    unit = prices.base.input / 1_000_000 or 1e-6  # USD of one uncached chat-input token
    call: float | None = None
    if policy.summarizer == "extractive":
        prefix = uncached = output = 0
    elif policy.summarizer == "server":
        prefix, uncached, output = 0, source, written
        call = call_usd(prices, uncached=source, output=written) / unit
    else:
        prefix, uncached, output = projected, INSTRUCTION_TOKENS, written
        calls = cheaper_call(policy, prefix=projected, span=source, written=written)
        standalone = policy.summarizer not in ("auto", "claude")  # a model id
        usd = calls.standalone if standalone else min(calls.continuation, calls.standalone)
        call = usd / unit
    # The first fold starts recall: its excerpts travel uncached with every later turn, at
    # most the request builder's cap (its share of what carrying the folded history costs).
    recall = 0
    if policy.recall and summary == 0:
        carried = carried_token_price(
            policy.cache_cold_share, prices.read_ratio, prices.write_ratio
        )
        recall = min(policy.recall_budget_tokens, recall_allowance(source, carried))
    return CompactionCost(
        recall=recall,
        folded=folded,
        prefix=prefix,
        uncached=uncached,
        summary=output,
        new_prefix=max(0, projected - folded),
        horizon=policy.payback_turns,
        cold_share=policy.cache_cold_share,
        output_ratio=prices.output_ratio,
        read=prices.read_ratio,
        write=prices.write_ratio,
        call=call,
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
