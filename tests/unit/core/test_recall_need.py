"""Recall's need: the share of a message's words the recent turns lack lifts its cost cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui_chat.core.request.recall_need import (
    NEED_FROM,
    NEED_FULL,
    need_weight,
    needed_cap,
    novelty,
)


def test_a_message_whose_words_are_all_in_the_recent_turns_needs_nothing() -> None:
    recent = "we talked about the harbour and the blue cabinet"
    assert novelty(["harbour", "cabinet"], [2.0, 3.0], recent) == 0.0


def test_the_missing_share_is_weighed_by_each_word_s_weight() -> None:
    recent = "the harbour office"
    assert novelty(["harbour", "cabinet"], [1.0, 3.0], recent) == 0.75


def test_a_stem_matches_the_forms_it_starts() -> None:
    assert novelty(["danc"], [1.0], "she was dancing all night") == 0.0


def test_a_message_without_searched_words_needs_nothing() -> None:
    assert novelty([], [], "anything") == 0.0


def test_the_cap_holds_below_the_need_threshold_and_lifts_to_the_ceiling_at_full_need() -> None:
    assert needed_cap(1_000, NEED_FROM, 6_000) == 1_000
    assert needed_cap(1_000, 0.0, 6_000) == 1_000
    assert needed_cap(1_000, NEED_FULL, 6_000) == 6_000
    assert 3_490 <= needed_cap(1_000, (NEED_FROM + NEED_FULL) / 2, 6_000) <= 3_500


def test_a_ceiling_below_the_cap_never_lowers_it() -> None:
    assert needed_cap(5_000, 1.0, 2_000) == 5_000


@given(
    st.integers(0, 50_000),
    st.integers(0, 50_000),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_the_cap_grows_with_need_and_stays_between_the_cost_cap_and_the_ceiling(
    cap: int, ceiling: int, low: float, high: float
) -> None:
    low, high = sorted((low, high))
    assert 0.0 <= need_weight(low) <= need_weight(high) <= 1.0
    lower, upper = needed_cap(cap, low, ceiling), needed_cap(cap, high, ceiling)
    assert cap <= lower <= upper <= max(cap, ceiling)
