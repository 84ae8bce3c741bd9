"""Which prompt-cache lifetime a request asks for: 5 minutes, or 1 hour when the pauses pay.

Claude's prompt cache keeps a prefix for 5 minutes by default, refreshed by every read; a
breakpoint may ask for 1 hour instead (``"ttl": "1h"``). A 1-hour write costs 2x the input
price instead of 1.25x, a read the model's own read multiplier either way (Claude's
prompt-caching page, "Pricing" and "1-hour cache duration"; 0.1x on most models, 0.05x on
Opus 5.5 and Sonnet 5.5, 0.025x on Fable 5.1 and 5.2: :class:`~tui_chat.core.prices.Prices`).
In a chat the prefix is the whole history sent again, so the choice turns on the
conversation's own pauses and the model's prices:

- a pause of more than 5 minutes (but less than an hour) finds a 5-minute cache cold: the
  whole prefix is written again at 1.25x, where a 1-hour cache reads it at the read price;
- every turn writes its new tokens, at 2x under the 1-hour TTL instead of 1.25x, and a pause
  of more than an hour finds either cache cold (the 1-hour one rewrites at 2x).

The cheaper a read, the more a cold 5-minute cache costs beside it, so a model with cheap
reads reaches for the 1-hour lifetime sooner.

:func:`choose_ttl` prices one turn both ways from the pauses seen so far (the gaps between a
reply and the next prompt, newest :data:`GAPS` of them) and picks the cheaper; with fewer than
:data:`MIN_GAPS` pauses to go by it keeps the default 5 minutes. A chat typed without pauses
never pays the 1-hour premium; one read between meetings does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from tui_chat.core.models import Usage
from tui_chat.core.prices import FALLBACK_PRICES, Prices

CacheTtl = Literal["5m", "1h"]
"""A breakpoint's lifetime."""

FIVE_MINUTES = 300.0
ONE_HOUR = 3_600.0
GAPS = 20
"""The newest pauses the choice looks at."""
MIN_GAPS = 3
"""Fewer pauses than this say nothing yet: the default 5 minutes."""


def turn_price(
    ttl: CacheTtl,
    gaps: Sequence[float],
    prefix: int,
    new: int,
    prices: Prices = FALLBACK_PRICES,
) -> float:
    """Expected input price of one turn (in uncached-token equivalents) under ``ttl``.

    Args:
        ttl: The lifetime asked for.
        gaps: Seconds between each reply and the next prompt.
        prefix: Tokens of the cached prefix a turn sends again.
        new: Tokens a turn adds to the prefix (written every turn).
        prices: The model's card (its write and read multipliers).
    """
    if not gaps:
        return 0.0
    if ttl == "5m":
        life, write = FIVE_MINUTES, prices.write_ratio
    else:
        life, write = ONE_HOUR, prices.write_1h_ratio
    cold = sum(1 for gap in gaps if gap > life) / len(gaps)
    return new * write + prefix * (cold * write + (1 - cold) * prices.read_ratio)


def choose_ttl(
    gaps: Sequence[float], prefix: int, new: int, prices: Prices = FALLBACK_PRICES
) -> CacheTtl:
    """The cheaper lifetime for a conversation with these pauses.

    Args:
        gaps: Seconds between each reply and the next prompt, oldest first (the newest
            :data:`GAPS` are used).
        prefix: Tokens of the request's cached prefix.
        new: Tokens a turn adds (the newest turn's size is a fair guess).
        prices: The model's card.

    Returns:
        ``"1h"`` when it is cheaper over the pauses seen, else ``"5m"``.
    """
    recent = list(gaps)[-GAPS:]
    if len(recent) < MIN_GAPS:
        return "5m"
    hour = turn_price("1h", recent, prefix, new, prices)
    return "1h" if hour < turn_price("5m", recent, prefix, new, prices) else "5m"


def pauses(times: Sequence[tuple[str, str]]) -> list[float]:
    """Seconds between each reply and the prompt after it.

    Args:
        times: ``(role, created_at ISO time)`` of messages in order.

    Returns:
        One gap per prompt that follows a reply; unreadable times are skipped.
    """
    gaps: list[float] = []
    previous: tuple[str, datetime] | None = None
    for role, stamp in times:
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            previous = None
            continue
        if previous is not None and role == "user" and previous[0] == "assistant":
            gaps.append(max(0.0, (moment - previous[1]).total_seconds()))
        previous = (role, moment)
    return gaps


def carried_price(
    gaps: Sequence[float], asked: str = "auto", prices: Prices = FALLBACK_PRICES
) -> float:
    """What one carried prefix token costs a turn, relative to uncached input, given the
    pauses: a read (the model's read multiplier) while the cache is warm, a write when a
    pause outlived it.

    Args:
        gaps: Seconds between each reply and the next prompt (the newest :data:`GAPS`).
        asked: The policy's ``cache_ttl`` (``auto`` is priced as the lifetime it would pick,
            which is never dearer than the 5-minute one).
        prices: The model's card.
    """
    read = prices.read_ratio
    recent = list(gaps)[-GAPS:]
    if len(recent) < MIN_GAPS:
        return read
    five = sum(1 for gap in recent if gap > FIVE_MINUTES) / len(recent)
    hour = sum(1 for gap in recent if gap > ONE_HOUR) / len(recent)
    price_5m = read + (prices.write_ratio - read) * five
    price_1h = read + (prices.write_1h_ratio - read) * hour
    if asked == "5m":
        return price_5m
    if asked == "1h":
        return price_1h
    return min(price_5m, price_1h)


CHANGED_PREFIX = frozenset({"model_changed", "system_changed", "tools_changed", "messages_changed"})
"""Cache diagnostics' reasons for a miss the request made itself (its prefix diverged from
the previous request's), not a lifetime that ran out."""


def _rewrote(usage: Usage) -> bool:
    """Whether the reply's request changed its prefix and wrote most of it again."""
    changed = usage.cache_miss in CHANGED_PREFIX
    return changed and usage.cache_creation_input_tokens > usage.cache_read_input_tokens


def observed_price(replies: Sequence[Usage], prices: Prices = FALLBACK_PRICES) -> float | None:
    """What one carried prefix token cost this conversation's newest replies, relative to
    uncached input, as the API reported it: each reply's prefix tokens read from the cache
    (the read multiplier) and written to it (the write multiplier of their lifetime), summed
    over the newest :data:`GAPS` replies that used the cache; ``None`` with fewer than
    :data:`MIN_GAPS` of them (then :func:`carried_price` infers it from the pauses).

    The pauses tell when a 5-minute cache would have gone cold; the usage tells whether it
    did (a chat continued within the hour on a 1-hour cache, an imported history whose
    stored times are days apart, a cache the server dropped early). A reply whose request
    changed its own prefix (cache diagnostics: :data:`CHANGED_PREFIX`, a fold's new summary,
    an edit, another model) and wrote more than it read is left out: that rewrite is not
    what carrying costs. (A changed tail alone, the last message sent again without its
    recalled excerpts, is reported as a divergence too but reads nearly all of the prefix.)"""
    used = [
        u
        for u in list(replies)[-GAPS:]
        if (u.cache_read_input_tokens or u.cache_creation_input_tokens) and not _rewrote(u)
    ]
    if len(used) < MIN_GAPS:
        return None
    tokens = 0
    paid = 0.0
    for usage in used:
        hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
        five = usage.cache_creation_input_tokens - hour
        read = usage.cache_read_input_tokens
        tokens += read + five + hour
        paid += read * prices.read_ratio + five * prices.write_ratio + hour * prices.write_1h_ratio
    return paid / tokens
