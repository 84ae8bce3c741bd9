"""What recall may cost: the folded history counted in full, and no cap after a compact the
user asked for."""

from __future__ import annotations

from dataclasses import replace

from tui_chat.core.cache_ttl import carried_price
from tui_chat.core.models import Summary
from tui_chat.core.presets import PRESETS
from tui_chat.core.request.budget import GIST_SHARE, SMALL_WINDOW, for_window, gist
from tui_chat.core.request.recall_cost import RECALL_COST_SHARE, recall_cap
from tui_chat.core.request.timeline import Timeline

VERSION = Summary(
    id=9,
    conversation_id="c1",
    version=9,
    parent_id=8,
    strategy="segments",
    text="Earlier: a few turns.",
    segments=[],
    covers_to_message_id=369,
    covered_messages=369,
    source_tokens=400,  # the last span and the summary before it
    summary_tokens=300,
    trigger="auto",
    summarizer="extractive",
    status="completed",
    created_at="2026-01-01T00:00:00+00:00",
)


def test_the_folded_history_is_every_covered_token_not_the_last_span() -> None:
    empty = Timeline()  # keep_recent 0: no raw turn to take a mean size from
    share = RECALL_COST_SHARE * carried_price((), "5m")  # of the folded tokens, warm
    # From the last span alone the history "fits" a 3k window and recall gets a few tokens.
    assert recall_cap(VERSION, empty, 3_000, (), "5m") == int(share * 400)
    # Counted in full it does not: recall is what keeps the past, uncapped.
    assert recall_cap(VERSION, empty, 3_000, (), "5m", covered_tokens=20_000) is None
    # At a window it fits, the cap follows the whole history.
    capped = recall_cap(VERSION, empty, 1_000_000, (), "5m", covered_tokens=20_000)
    assert capped == int(share * 20_000) >= 50 * int(share * 400)


def test_a_version_the_user_asked_for_leaves_recall_uncapped() -> None:
    manual = replace(VERSION, trigger="manual")
    assert recall_cap(manual, Timeline(), 1_000_000, (), "5m", covered_tokens=20_000) is None


def test_a_compact_the_user_asks_for_keeps_a_gist_above_a_small_window() -> None:
    adaptive = for_window(PRESETS["adaptive"], 100_000)
    assert adaptive.summary_max_tokens == 10_000
    assert gist(adaptive, 100_000).summary_max_tokens == int(GIST_SHARE * 100_000)
    small = for_window(PRESETS["adaptive"], SMALL_WINDOW)
    assert gist(small, SMALL_WINDOW) == small  # small windows keep their own share
    assert gist(replace(adaptive, recall=False), 100_000).summary_max_tokens == 10_000
    seed = PRESETS["threshold"]
    assert gist(seed, 100_000) == seed  # a seed keeps its own summary


def test_a_carried_token_is_priced_by_what_the_cache_did_where_replies_say_so() -> None:
    from tui_chat.core.cache_ttl import observed_price
    from tui_chat.core.models import Usage
    from tui_chat.core.prices import FALLBACK_PRICES as prices

    warm = Usage(cache_read_input_tokens=9_900, cache_creation_input_tokens=100)
    cold = Usage(cache_creation_input_tokens=10_000)
    assert observed_price([warm, warm]) is None  # too few replies to go by
    four = observed_price([warm, warm, warm, cold])
    assert (
        four
        == (
            3 * (9_900 * prices.read_ratio + 100 * prices.write_ratio) + 10_000 * prices.write_ratio
        )
        / 40_000
    )
    # Stored times a day apart price a cold pause at every turn; the cache stayed warm.
    days = (86_400.0,) * 5
    by_pauses = recall_cap(VERSION, Timeline(), 1_000_000, days, "5m", covered_tokens=20_000)
    by_usage = recall_cap(
        VERSION, Timeline(), 1_000_000, days, "5m", covered_tokens=20_000, replies=[warm] * 5
    )
    assert by_pauses is not None and by_usage is not None
    assert by_usage == int(RECALL_COST_SHARE * observed_price([warm] * 5) * 20_000)  # type: ignore[operator]
    assert by_usage * 10 < by_pauses
    # A fold's rewrite (the prefix changed, as cache diagnostics say) is not a carrying cost.
    folded = Usage(cache_creation_input_tokens=10_000, cache_miss="messages_changed")
    assert observed_price([warm, warm, folded]) is None  # two replies left: too few
    assert observed_price([warm, warm, warm, folded]) == observed_price([warm] * 3)
    # A changed tail (the last message sent again without its excerpts) reads the prefix.
    tail = Usage(
        cache_read_input_tokens=9_900,
        cache_creation_input_tokens=100,
        cache_miss="messages_changed",
    )
    assert observed_price([tail] * 3) == observed_price([warm] * 3)
    # A reply that used no cache (no key, a gateway without caching) says nothing.
    assert observed_price([Usage(input_tokens=5_000)] * 5) is None
