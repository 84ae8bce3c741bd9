"""The cost trigger's rule: a compaction must pay for itself within the horizon."""

from __future__ import annotations

import pytest

from tui_chat.core.payback import CompactionCost, carried_token_price, one_off, pays, savings


def test_carried_token_price_follows_the_cache_lifetime() -> None:
    assert carried_token_price(0.0) == pytest.approx(0.1)
    assert carried_token_price(1.0) == pytest.approx(1.25)
    assert carried_token_price(0.25) == pytest.approx(0.3875)
    assert carried_token_price(2.0) == carried_token_price(1.0)


def test_worked_example_from_the_docstring() -> None:
    cost = CompactionCost(
        folded=20_000, prefix=30_000, uncached=1_000, summary=1_500, new_prefix=10_000
    )
    # 4 x 20,000 x 0.3875 = 31,000 against 3,000 + 1,000 + 7,500 + 0.8625 x 10,000 = 20,125
    assert savings(cost) == pytest.approx(31_000)
    assert one_off(cost) == pytest.approx(20_125)
    assert pays(cost)


def test_small_folds_and_warm_caches_wait() -> None:
    small = CompactionCost(
        folded=5_000, prefix=30_000, uncached=1_000, summary=1_500, new_prefix=10_000
    )
    assert not pays(small)
    warm = CompactionCost(
        folded=20_000, prefix=30_000, uncached=1_000, summary=1_500, new_prefix=10_000, cold_share=0
    )
    assert not pays(warm)  # read at 0.1x, carrying 20k tokens costs only 2k a turn


def test_offline_summary_costs_only_the_rewrite() -> None:
    cost = CompactionCost(folded=4_000, prefix=0, uncached=0, summary=0, new_prefix=3_000)
    assert one_off(cost) == pytest.approx(0.8625 * 3_000)
    assert pays(cost)
    assert not pays(CompactionCost(folded=0, prefix=0, uncached=0, summary=0, new_prefix=0))
