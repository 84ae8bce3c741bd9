"""The model table's rows: each Claude model's window, output limit, thinking and price card.

Every row names the page it was read from and that page's date. The pages are Claude's docs
as stored in the search tool's docs corpus on 2026-12-01; copies of different dates and
languages disagree, and the newest English page wins where there is one (docs/models.md
lists every figure with its page and the disagreements). ``GET /v1/models`` wins for
windows and capabilities where an endpoint gives them (:func:`tui_chat.llm.models.model_info`);
the Models API gives no prices, so prices always come from here.

Tokenizer generations: models from Claude 4.7 on count the same text as about 30 % more
tokens than earlier ones (Haiku 5.5 overview: "the same newer tokenizer as Claude 4.7 and
later models, so the same text counts as approximately 30% more tokens than on Claude Haiku
4.5"); :attr:`Row.tokenizer` is 2 for them, 1 before.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_chat.core.prices import Prices, Rates

__all__ = ["ROWS", "Row"]

# The pages (docs corpus, platform.claude.com/docs/…), with the date each copy shows.
PRICING = "about-claude/pricing (en, copy listing Fable 5.1 and Opus 5, before Opus 5.5: 2026-09)"
OVERVIEW = "models/overview (en; zh-CN copy listing Opus 5.5 / Sonnet 5.5 / Haiku 5.5: 2026-10)"
FABLE_52 = (
    "models/sonnet-5/overview (id copy listing Fable 5.2 at $8 / $40, released 2026-11-09); "
    "cache and fast rates from build-with-claude/fast-mode (en, lists Fable 5.2: 2026-11) and "
    "write-ups of 2026-11-10/12 quoting the pricing page ($0.20 reads, $10 / $16 writes, 2x fast)"
)
OPUS_55 = "models/opus-5-5/overview (zh-CN, released 2026-09): $5 / $8 writes, $0.20 reads (0.05x)"
SONNET_55 = (
    "models/sonnet-5-5/overview (zh-CN, released 2026-09-28) for input, output and writes; its "
    "$0.20 read predates the cut of 2026-10-07 to $0.10 (0.05x) that pricing-page checks of "
    "2026-10-16 and 2026-10-24 report"
)
HAIKU_55 = (
    "models/haiku-5-5/overview (en .md and zh-CN, released 2026-10-07): two tiers at 100,000 "
    "prompt tokens"
)
FAST = (
    "build-with-claude/fast-mode (en, 2026-11): fast mode on Fable 5.2, Opus 5.5; preview on Opus 5"
)


@dataclass(frozen=True, slots=True)
class Row:
    """One model of the table."""

    window: int
    """Context window in tokens."""
    max_output: int
    """Largest ``max_tokens``."""
    thinking: str
    """``adaptive``, ``adaptive-always`` (cannot be turned off), ``enabled`` (the budget form)
    or ``none``."""
    effort: str | None
    """The default ``effort`` (``None``: the model takes none)."""
    tokenizer: int
    """1: before Claude 4.7; 2: the newer tokenizer (about 30 % more tokens)."""
    prices: Prices


def _card(
    rates: tuple[float, float, float, float, float],
    source: str,
    *,
    fast: float | None = None,
    long: tuple[int, tuple[float, float, float, float, float]] | None = None,
) -> Prices:
    """A price card from ``(input, output, 5m write, 1h write, read)`` in USD per MTok."""
    tier = None if long is None else Rates(*long[1])
    return Prices(
        base=Rates(*rates),
        long_threshold=None if long is None else long[0],
        long=tier,
        fast=fast,
        source=source,
    )


_M = 1_000_000
ROWS: dict[str, Row] = {
    "claude-fable-5-2": Row(
        _M,
        128_000,
        "adaptive-always",
        "high",
        2,
        _card((8.0, 40.0, 10.0, 16.0, 0.20), FABLE_52, fast=2.0),
    ),
    "claude-fable-5-1": Row(
        _M,
        128_000,
        "adaptive-always",
        "high",
        2,
        _card((10.0, 50.0, 12.5, 20.0, 0.25), PRICING),
    ),
    "claude-mythos-5-1": Row(
        _M,
        128_000,
        "adaptive-always",
        "high",
        2,
        _card((10.0, 50.0, 12.5, 20.0, 0.25), PRICING + "; limited availability"),
    ),
    "claude-fable-5": Row(
        _M,
        128_000,
        "adaptive-always",
        "high",
        2,
        _card((10.0, 50.0, 12.5, 20.0, 1.0), PRICING),
    ),
    "claude-mythos-5": Row(
        _M,
        128_000,
        "adaptive-always",
        "high",
        2,
        _card((10.0, 50.0, 12.5, 20.0, 1.0), PRICING + "; limited availability"),
    ),
    "claude-opus-5-5": Row(
        _M,
        128_000,
        "adaptive-always",
        "medium",
        2,
        _card((4.0, 20.0, 5.0, 8.0, 0.20), OPUS_55 + "; " + FAST, fast=2.0),
    ),
    "claude-sonnet-5-5": Row(
        _M,
        128_000,
        "adaptive",
        "high",
        2,
        _card((2.0, 10.0, 2.5, 4.0, 0.10), SONNET_55),
    ),
    "claude-haiku-5-5": Row(
        _M,
        128_000,
        "adaptive",
        "medium",
        2,
        _card(
            (0.10, 0.50, 0.125, 0.20, 0.01),
            HAIKU_55,
            long=(100_000, (0.50, 2.50, 0.625, 1.0, 0.05)),
        ),
    ),
    "claude-opus-5": Row(
        _M,
        128_000,
        "adaptive",
        "high",
        2,
        _card((5.0, 25.0, 6.25, 10.0, 0.50), PRICING + "; " + FAST, fast=2.0),
    ),
    "claude-sonnet-5": Row(
        _M,
        128_000,
        "adaptive",
        "high",
        2,
        _card((2.0, 10.0, 2.5, 4.0, 0.20), "models/sonnet-5/overview (zh-CN, 2026-06-30)"),
    ),
    "claude-opus-4-8": Row(
        _M, 128_000, "adaptive", "high", 2, _card((5.0, 25.0, 6.25, 10.0, 0.50), PRICING)
    ),
    "claude-opus-4-7": Row(
        _M, 128_000, "adaptive", "high", 2, _card((5.0, 25.0, 6.25, 10.0, 0.50), PRICING)
    ),
    "claude-opus-4-6": Row(
        _M, 128_000, "adaptive", "high", 1, _card((5.0, 25.0, 6.25, 10.0, 0.50), PRICING)
    ),
    "claude-sonnet-4-6": Row(
        _M, 64_000, "adaptive", "high", 1, _card((3.0, 15.0, 3.75, 6.0, 0.30), PRICING)
    ),
    "claude-sonnet-4-5": Row(
        200_000, 64_000, "enabled", None, 1, _card((3.0, 15.0, 3.75, 6.0, 0.30), PRICING)
    ),
    "claude-haiku-4-5": Row(
        200_000, 64_000, "enabled", None, 1, _card((1.0, 5.0, 1.25, 2.0, 0.10), PRICING)
    ),
    "claude-opus-4-5": Row(
        200_000, 64_000, "enabled", "high", 1, _card((5.0, 25.0, 6.25, 10.0, 0.50), PRICING)
    ),
    "claude-opus-4-1": Row(
        200_000, 32_000, "enabled", None, 1, _card((15.0, 75.0, 18.75, 30.0, 1.50), PRICING)
    ),
    "claude-opus-4-0": Row(
        200_000, 32_000, "enabled", None, 1, _card((15.0, 75.0, 18.75, 30.0, 1.50), PRICING)
    ),
    "claude-sonnet-4-0": Row(
        200_000, 64_000, "enabled", None, 1, _card((3.0, 15.0, 3.75, 6.0, 0.30), PRICING)
    ),
    "claude-3-7-sonnet": Row(
        200_000, 64_000, "enabled", None, 1, _card((3.0, 15.0, 3.75, 6.0, 0.30), PRICING)
    ),
    "claude-3-5-sonnet": Row(
        200_000, 8_192, "none", None, 1, _card((3.0, 15.0, 3.75, 6.0, 0.30), PRICING)
    ),
    "claude-3-5-haiku": Row(
        200_000, 8_192, "none", None, 1, _card((0.8, 4.0, 1.0, 1.6, 0.08), PRICING)
    ),
    "claude-3-opus": Row(
        200_000, 4_096, "none", None, 1, _card((15.0, 75.0, 18.75, 30.0, 1.50), PRICING)
    ),
    "claude-3-haiku": Row(
        200_000, 4_096, "none", None, 1, _card((0.25, 1.25, 0.30, 0.50, 0.03), PRICING)
    ),
}
"""Every model the table knows, newest first within each generation."""
