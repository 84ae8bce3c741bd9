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


def test_cost_trigger_fires_when_it_pays_and_keeps_the_ratio_net() -> None:
    from tui_chat.core.policy import Policy
    from tui_chat.core.triggers import TriggerState, compaction_due

    policy = Policy(trigger="cost", summarizer="claude", ratio=0.75)

    def state(foldable: int, projected: int) -> TriggerState:
        return TriggerState(
            unsummarized_tokens=foldable,
            unsummarized_turns=10,
            current_turn=10,
            projected_tokens=projected,
            usable_window=100_000,
            last_reduction=None,
            tokens_at_last_compaction=None,
            consecutive_failures=0,
            foldable_tokens=foldable,
            summary_tokens=1_000,
        )

    assert compaction_due(policy, state(4_000, 12_000)) is None
    reason = compaction_due(policy, state(30_000, 40_000))
    assert reason is not None and "pays for itself" in reason
    # Nothing worth folding (all recent), but the window is full: the ratio net fires.
    full = compaction_due(policy, state(0, 80_000))
    assert full is not None and "usable window" in full


def test_estimate_per_summarizer() -> None:
    from tui_chat.core.payback import estimate
    from tui_chat.core.policy import Policy

    claude = estimate(Policy(summarizer="claude"), foldable=20_000, summary=1_000, projected=30_000)
    assert claude.prefix == 30_000 and claude.summary == 2_000 and claude.folded == 19_000
    server = estimate(Policy(summarizer="server"), foldable=20_000, summary=1_000, projected=30_000)
    assert server.prefix == 0 and server.uncached == 21_000
    offline = estimate(
        Policy(summarizer="extractive"), foldable=20_000, summary=0, projected=30_000
    )
    assert offline.prefix == offline.uncached == offline.summary == 0
    assert offline.new_prefix == 30_000 - offline.folded


def test_break_even_is_where_the_rule_starts_to_pay() -> None:
    from tui_chat.core.payback import break_even, estimate
    from tui_chat.core.policy import Policy

    policy = Policy(trigger="cost", summarizer="claude")
    at = break_even(policy, fixed=3_000, summary=1_000, usable=100_000)
    assert at is not None and 3_000 < at < 100_000
    foldable = at - 3_000
    assert pays(estimate(policy, foldable=foldable, summary=1_000, projected=at))
    assert not pays(estimate(policy, foldable=foldable - 1, summary=1_000, projected=at - 1))
    assert break_even(policy, fixed=3_000, summary=1_000, usable=3_100) is None
