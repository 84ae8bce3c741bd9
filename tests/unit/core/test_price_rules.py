"""The cost rules weigh the prices of the model in use, not constants.

A cache read is 0.1x of input on most models, 0.05x on Opus 5.5 and Sonnet 5.5 and 0.025x on
Fable 5.1 (docs/models.md): the ``cost`` trigger, the TTL choice, the recall cap and the
continuation-versus-standalone summary choice all follow the chat model's card, and a
standalone call is priced at the summarizer model's card (its long-prompt tier included).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tui_chat.core.cache_ttl import carried_price, choose_ttl
from tui_chat.core.payback import break_even, cheaper_call, estimate, one_off
from tui_chat.core.policy import Policy
from tui_chat.llm.models import model_info


def priced(chat: str, standalone: str = "claude-haiku-5-5", **settings: object) -> Policy:
    """A policy on ``chat`` whose standalone summary calls run on ``standalone``."""
    policy = replace(Policy(), **settings)  # type: ignore[arg-type]
    return replace(
        policy, prices=model_info(chat).prices, summarizer_prices=model_info(standalone).prices
    )


def test_a_carried_token_costs_the_models_own_read_price() -> None:
    gaps: list[float] = [10.0] * 10  # a chat typed without pauses: every turn reads
    assert carried_price(gaps, "5m", model_info("claude-opus-5").prices) == pytest.approx(0.1)
    assert carried_price(gaps, "5m", model_info("claude-opus-5-5").prices) == pytest.approx(0.05)
    assert carried_price(gaps, "5m", model_info("claude-fable-5-1").prices) == pytest.approx(0.025)


def test_the_ttl_choice_follows_the_read_price() -> None:
    # One pause in 20 outlives 5 minutes: with reads at 0.1x the 1-hour premium on each new
    # token is not worth it; with reads at 0.025x the cold 5-minute rewrite weighs more.
    gaps = [600.0] + [30.0] * 19
    prefix, new = 12_600, 1_000
    assert choose_ttl(gaps, prefix, new, model_info("claude-opus-5").prices) == "5m"
    assert choose_ttl(gaps, prefix, new, model_info("claude-fable-5-1").prices) == "1h"


def test_cheaper_reads_make_a_compaction_pay_later() -> None:
    # Carrying history costs half as much on Opus 5.5 as on Opus 5: folding it pays later.
    five = priced("claude-opus-5", trigger="cost", summarizer="claude")
    five_five = priced("claude-opus-5-5", trigger="cost", summarizer="claude")
    at_five = break_even(five, fixed=3_000, summary=1_000, usable=500_000)
    at_five_five = break_even(five_five, fixed=3_000, summary=1_000, usable=500_000)
    assert at_five is not None and at_five_five is not None and at_five_five > at_five


def test_recall_is_capped_at_the_models_read_price() -> None:
    sonnet_5 = estimate(priced("claude-sonnet-5"), foldable=5_000, summary=0, projected=15_000)
    sonnet_55 = estimate(priced("claude-sonnet-5-5"), foldable=5_000, summary=0, projected=15_000)
    # The builder's share (0.2) of carrying 5,000 tokens, a quarter of the turns cold:
    # 0.2 x (read + (1.25 - read) x 0.25) x 5,000, the read the model's own.
    assert sonnet_5.recall == int(0.2 * (0.1 + 1.15 * 0.25) * 5_000)
    assert sonnet_55.recall == int(0.2 * (0.05 + 1.2 * 0.25) * 5_000)
    assert sonnet_55.recall < sonnet_5.recall


def test_a_long_cached_opus_prefix_is_continued_a_short_one_goes_to_haiku() -> None:
    policy = priced("claude-opus-5-5")
    # 500k read from the cache at $0.20/MTok beats 480k sent to Haiku 5.5 past its 100k tier.
    long = cheaper_call(policy, prefix=500_000, span=480_000, written=2_000)
    assert long.cheaper == "continuation"
    assert long.continuation == pytest.approx((500_000 * 0.2 + 1_000 * 4 + 2_000 * 20) / 1e6)
    assert long.standalone == pytest.approx((481_000 * 0.5 + 2_000 * 2.5) / 1e6)
    # 60k of Opus prefix (its output at $20/MTok) against 50k at Haiku's $0.10 / $0.50.
    short = cheaper_call(policy, prefix=60_000, span=50_000, written=2_000)
    assert short.cheaper == "standalone"
    assert short.standalone == pytest.approx((51_000 * 0.1 + 2_000 * 0.5) / 1e6)


def test_the_cost_rule_prices_the_summary_call_at_its_models_card() -> None:
    auto = priced("claude-opus-5-5", summarizer="auto")
    cost = estimate(auto, foldable=50_000, summary=0, projected=60_000)
    calls = cheaper_call(auto, prefix=60_000, span=50_000, written=cost.summary)
    # In Opus 5.5 input-token equivalents ($4/MTok): the cheaper call, here Haiku's.
    assert cost.call == pytest.approx(calls.standalone / 4e-6)
    haiku = priced("claude-opus-5-5", summarizer="claude-haiku-5-5")
    standalone = estimate(haiku, foldable=50_000, summary=0, projected=60_000)
    assert standalone.call == pytest.approx(cost.call)
    opus_only = priced("claude-opus-5-5", "claude-opus-5-5", summarizer="claude-opus-5-5")
    dear = estimate(opus_only, foldable=50_000, summary=0, projected=60_000)
    assert one_off(dear) > one_off(cost)
