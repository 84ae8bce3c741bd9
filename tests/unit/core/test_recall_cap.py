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
