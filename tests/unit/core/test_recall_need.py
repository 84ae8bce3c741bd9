"""Recall's need: the share of a message's words the recent turns lack lifts its cost cap."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui_chat.core.request.recall_need import (
    NEED_FROM,
    NEED_FULL,
    QUESTION_FROM,
    QUESTION_FULL,
    gathers,
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


def _folded_inputs(need: float, passages: int = 2) -> Any:
    from dataclasses import replace

    from tests.unit.core.test_request_builder import History, inputs, summary
    from tui_chat.core.presets import resolve_policy

    old = History(start=3)
    found = [old.add("user", "crate 1003 went to dock four on Tuesday")]
    for i in range(passages - 1):
        found.append(old.add("assistant", f"crates {i} are usually stacked by weight at dock"))
    recent = History(start=1_000)
    recent.turn("and then?", "then it rained")
    policy = replace(
        resolve_policy(),
        budget=None,
        recall_share=None,
        recall_budget_tokens=4_000,
        recall_max_tokens=4_000,
    )
    built = inputs(
        recent.messages,
        "where did crate 1003 go?",
        policy=policy,
        window=200_000,
        max_output=8_000,
        summary_=replace(summary(covers_to=999), source_tokens=40_000),
        recalled=found,
    )
    strong, *weak = built.recalled
    recalled = [replace(strong, relevance=0.8), *(replace(p, relevance=0.05) for p in weak)]
    return replace(built, recalled=recalled, recall_need=need)


def test_a_message_the_recent_turns_cover_gets_only_passages_over_the_floor() -> None:
    from tests.unit.core.test_request_builder import build_alone as build_request

    assert build_request(_folded_inputs(0.0)).recalled_ids == (3,)


def test_a_message_that_needs_the_folded_past_gets_passages_below_the_floor_too() -> None:
    from tests.unit.core.test_request_builder import build_alone as build_request

    assert set(build_request(_folded_inputs(1.0)).recalled_ids) == {3, 4}


def test_a_message_that_only_tells_keeps_only_the_passages_that_match_it_closely() -> None:
    from dataclasses import replace

    from tests.unit.core.test_request_builder import build_alone as build_request
    from tui_chat.core.request.recall_cost import RELEVANCE_FLOOR, TELL_FLOOR

    folded = _folded_inputs(0.0, passages=3)
    strong, middling, weak = folded.recalled
    mid = (RELEVANCE_FLOOR + TELL_FLOOR) / 2
    assert RELEVANCE_FLOOR < mid < TELL_FLOOR
    middling = replace(middling, relevance=mid)
    asked = replace(folded, recalled=[strong, middling, weak])
    told = replace(asked, recall_asks=False)
    assert set(build_request(asked).recalled_ids) == {strong.message.id, middling.message.id}
    assert build_request(told).recalled_ids == (strong.message.id,)
    # Where recall is not capped (a small window, a compact the user asked for) it keeps all.
    small = replace(told, context_window=20_000, max_output=8_000)
    assert middling.message.id in build_request(small).recalled_ids


def test_the_cost_cap_holds_without_need_and_gives_way_to_it() -> None:
    from tests.unit.core.test_request_builder import build_alone as build_request
    from tui_chat.core.request.recall_cost import RECALL_COST_SHARE

    cap = RECALL_COST_SHARE * 0.1 * 40_000  # a warm read is 0.1x on this model
    capped = build_request(_folded_inputs(0.0, passages=120)).breakdown.sections["recall"]
    lifted = build_request(_folded_inputs(1.0, passages=120)).breakdown.sections["recall"]
    assert 0 < capped <= cap + 1
    assert lifted > 2 * cap


def test_a_question_s_ceiling_rises_from_the_ordinary_maximum_to_the_recall_share() -> None:
    from tui_chat.core.request.recall_need import question_ceiling

    assert question_ceiling(6_000, 0.55, 30_000, 0.0) == 6_000
    assert question_ceiling(6_000, 0.55, 30_000, QUESTION_FROM) == 6_000
    assert question_ceiling(6_000, 0.55, 30_000, QUESTION_FULL) == 16_500
    middle = (QUESTION_FROM + QUESTION_FULL) / 2
    assert 6_000 < question_ceiling(6_000, 0.55, 30_000, middle) < 16_500


def test_without_a_recall_share_or_with_a_small_budget_the_ordinary_maximum_holds() -> None:
    from tui_chat.core.request.recall_need import question_ceiling

    assert question_ceiling(6_000, None, 30_000, 1.0) == 6_000
    assert question_ceiling(6_000, 0.55, 8_000, 1.0) == 6_000


def test_a_message_that_needs_the_folded_past_reads_a_larger_pool() -> None:
    from tui_chat.engine.build.recall import QUESTION_MESSAGES, RECALL_MESSAGES, pool_size

    assert pool_size(0.0) == pool_size(QUESTION_FROM) == RECALL_MESSAGES
    assert pool_size(QUESTION_FULL) == QUESTION_MESSAGES * RECALL_MESSAGES


def _question_inputs(need: float) -> Any:
    from dataclasses import replace

    from tests.unit.core.test_request_builder import History, inputs, summary
    from tui_chat.core.presets import resolve_policy

    old = History(start=3)
    found = [
        old.add("user", f"crate {1_000 + i} went to dock {i % 7} with the blue pallets and tape")
        for i in range(900)
    ]
    recent = History(start=5_000)
    recent.turn("and then?", "then it rained")
    policy = replace(resolve_policy(), budget=30_000, recall_max_excerpts=300)
    built = inputs(
        recent.messages,
        "where did the crates go?",
        policy=policy,
        window=200_000,
        max_output=8_000,
        summary_=replace(summary(covers_to=4_999), source_tokens=40_000),
        recalled=found,
    )
    return replace(built, recall_need=need)


def test_a_question_about_the_folded_past_may_fill_the_recall_share_of_the_budget() -> None:
    from tests.unit.core.test_request_builder import build_alone as build_request

    ordinary = build_request(_question_inputs(0.0)).breakdown.sections["recall"]
    question = build_request(_question_inputs(1.0))
    assert ordinary <= 6_000
    assert 6_000 < question.breakdown.sections["recall"] <= 16_500
    # More excerpts than the ordinary count: the count grows with the limit.
    assert len(question.recalled_ids) > 300


def test_names_are_the_words_capitalised_inside_a_sentence() -> None:
    from tui_chat.core.request.recall_need import names

    assert names("What do Melanie's kids like?") == {"melanie"}
    assert names("Where did I go? To Paris, said Jon.\nWhy") == {"paris", "jon"}
    assert names("Jon: What gave you the idea?") == set()


def test_a_one_sentence_question_about_a_name_is_a_lookup() -> None:
    from tui_chat.core.request.recall_need import lookup

    assert lookup("What do Melanie's kids like?")
    assert lookup("  When did Maria meet Jean?\n")
    assert not lookup("Tell me what Melanie's kids like.")  # asks nothing
    assert not lookup("Hey Jon. What do Melanie's kids like?")  # two sentences
    assert not lookup("Melanie:\nWhat do her kids like?")  # two lines
    assert not lookup("What do the kids like?")  # names nothing
    # An abbreviation's period ends no sentence, and the name after it is still a name.
    assert lookup("What areas of the U.S. has John been to?")
    assert lookup("Would Caroline like Dr. Seuss books?")
    assert not lookup("I went to plan B. Then what did Jon do?")


def test_a_message_asks_with_a_question_or_a_request_for_what_was_said() -> None:
    from tui_chat.core.request.recall_need import asks

    assert asks("How are you? I went camping.")
    assert asks("what was the port we used")  # a question typed without its mark
    assert asks("Thanks. Remind me of the plan.")
    assert asks("다음 주에 뭐 해?")
    assert not asks("Jon: Thanks, Gina! I'm excited.")
    assert not asks("[Session 3]\nCaroline: Hey Mel! Long time no talk.")
    assert not asks("I love this list of things.")  # a request word inside a sentence


def test_a_message_asks_when_any_of_its_sentences_does() -> None:
    from tui_chat.core.request.recall_need import asks

    assert asks("John: Definitely, it's essential. Is there anything specific she needs?")
    assert asks("Thanks. Remind me of the plan.")
    assert asks("We went to the U.S. in May. What did we see there?")
    assert not asks("We went to the U.S. in May. It was great, e.g. the parks.")


@pytest.mark.parametrize(
    "text",
    [
        "What activities has Melanie done with her family?",
        "What LGBTQ+ events has Caroline participated in?",
        "What types of pottery have Melanie and her kids made?",
        "What do Jon and Gina both have in common?",
        "How many children does Melanie have?",
        "Would John be open to moving to another country?",
        "What would Caroline's political leaning likely be?",
        "Thanks. Which tests did we skip?",
    ],
)
def test_a_list_a_comparison_a_count_or_a_judgement_gathers(text: str) -> None:
    assert gathers(text)


@pytest.mark.parametrize(
    "text",
    [
        "When did Maria meet Jean?",
        "What is this?",
        "What does this class do?",
        "Would you rewrite this function?",
        "What was the port we used?",
        "We could both go to the harbour.",  # tells: asks nothing
        "",
    ],
)
def test_a_lookup_a_request_or_a_statement_does_not_gather(text: str) -> None:
    assert not gathers(text)
