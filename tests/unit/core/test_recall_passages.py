"""Passage recall: scores over two hops, neighbours, passages of long messages, budgets."""

from __future__ import annotations

from dataclasses import replace

from tui_chat.core.models import Message
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.core.request.budget import SMALL_MEMORY_SHARE, SMALL_WINDOW, budgets, for_window
from tui_chat.core.request.recall import (
    ANSWER_WEIGHT,
    NEIGHBOUR_WEIGHT,
    SECOND_HOP_WEIGHT,
    Hit,
    asks,
    combine,
    expansion_terms,
    rank_passages,
    split_passages,
)
from tui_chat.core.summary_check import SummaryRejected, check_summary
from tui_chat.core.tokens import get_counter

COUNTER = get_counter()


def msg(i: int, text: str) -> Message:
    return Message(
        id=i,
        conversation_id="c",
        role="user",
        content=[{"type": "text", "text": text}],
        text=text,
        turn=i,
        token_count=COUNTER.count(text),
        status="complete",
        created_at="2026-01-01T00:00:00+00:00",
    )


def test_neighbours_of_a_hit_share_its_score() -> None:
    scores = combine([Hit(10, 4.0)], [Hit(20, 2.0)], {10: (9, 11), 20: (19, None)})
    assert scores[10] == 4.0
    assert scores[11] == NEIGHBOUR_WEIGHT * 4.0 and scores[9] == NEIGHBOUR_WEIGHT * 4.0
    assert scores[20] == SECOND_HOP_WEIGHT * 2.0
    assert 21 not in scores


def test_a_hits_score_spreads_two_steps_at_the_weight_squared() -> None:
    # 10's neighbours are known, and theirs: 8 and 12 take a quarter (0.5 ** 2) of 10's score.
    neighbours = {10: (9, 11), 9: (8, 10), 11: (10, 12), 30: (29, None)}
    scores = combine([Hit(10, 4.0), Hit(30, 2.0)], [], neighbours)
    assert scores[8] == scores[12] == NEIGHBOUR_WEIGHT**2 * 4.0
    assert 7 not in scores and 13 not in scores  # no further than two steps
    assert scores[29] == NEIGHBOUR_WEIGHT * 2.0
    assert 28 not in scores  # 29's own neighbours unknown: the walk stops there


def test_second_hop_terms_are_the_rarest_words_the_question_lacks() -> None:
    terms = expansion_terms(
        ["Max the beagle loves the lake"], ["dog"], {"max": 3, "beagle": 2, "lake": 40, "loves": 1}
    )
    assert terms[:2] == ["beagle", "max"]
    assert "loves" not in terms  # only in the passage itself: leads nowhere


def test_a_long_message_is_recalled_by_its_matching_paragraph() -> None:
    body = "\n\n".join(f"paragraph {i} " + "filler words here " * 30 for i in range(6))
    body += "\n\nthe deployment key rotates every ninety days"
    long = msg(1, body)
    assert len(split_passages(body, COUNTER)) > 1
    passages = rank_passages([long], {1: 5.0}, ["rotat"], COUNTER, lambda m: m.text)
    assert "rotates every ninety days" in passages[0].text
    assert passages[0].parts > 1


def test_shares_become_budgets_that_follow_the_window() -> None:
    policy = Policy(
        trigger="tokens", summary_share=0.1, recall_share=0.5, recent_share=0.2, pins_share=0.1
    )
    small, large = for_window(policy, 3_000), for_window(policy, 100_000)
    # A small window's summary takes at most 5 % (budget.SMALL_MEMORY_SHARE).
    assert small.summary_max_tokens == 150 and large.summary_max_tokens == 10_000
    assert small.recall_budget_tokens == 1_500
    assert large.recall_budget_tokens == policy.recall_max_tokens  # capped: cheap requests
    assert small.threshold_tokens == 600 and small.keep_recent_tokens == 300
    assert budgets(small, 3_000)["recent"] == 600
    assert for_window(Policy(), 3_000) == Policy()  # no shares: unchanged


def test_an_oversized_or_empty_summary_is_cut_or_refused() -> None:
    text = "\n".join(f"Decision {i}: keep file src/m{i}.py as it is." for i in range(60))
    checked = check_summary(text, 300, COUNTER)
    assert checked.cut_from is not None and COUNTER.count(checked.text) <= 300
    try:
        check_summary(text * 20, 300, COUNTER)
    except SummaryRejected as exc:
        assert "over 4x its budget" in str(exc)
    else:
        raise AssertionError("a 40x summary was accepted")
    for bad in ("", "ok", "spam " * 2_000):
        try:
            check_summary(bad, 300, COUNTER)
        except SummaryRejected:
            continue
        raise AssertionError(f"{bad[:20]!r} was accepted")


def test_recall_stems_are_snowball_stems_kept_to_a_prefix_of_the_word() -> None:
    from tui_chat.store.fts import recall_phrase, stem_prefix

    assert stem_prefix("mention") == "mention"  # not "ment", which matches "mentor"
    assert stem_prefix("mentioned") == "mention"
    assert stem_prefix("visited") == "visit"
    assert stem_prefix("dancing") == "danc"
    assert stem_prefix("promotions") == "promot"
    assert stem_prefix("art") is None  # short words are matched exactly
    assert recall_phrase("visiting") == '"visit"*'
    # A short stem is searched by its exact forms: "pets" finds "pet", "hiking" finds "hike".
    assert recall_phrase("pet") == '"pet" OR "pets"'
    assert recall_phrase("pets") == '"pets" OR "pet"'
    assert '"hike"' in recall_phrase("hiking")


def test_relevance_is_the_share_of_the_querys_information_a_passage_holds() -> None:
    from tui_chat.core.request.recall import idf, relevance

    weights = {"figurin": idf(1, 600), "melani": idf(300, 600)}
    assert relevance("These figurines I bought for Melanie", weights) == 1.0
    rare_only = relevance("These figurines I bought yesterday", weights)
    common_only = relevance("Melanie, how are you?", weights)
    assert 0.8 < rare_only < 1.0
    assert common_only < 0.2
    assert relevance("nothing in common", weights) == 0.0
    assert relevance("anything", {}) == 0.0


def test_a_passage_borrows_half_a_neighbours_relevance() -> None:
    from tui_chat.core.request.recall import idf

    question, answer, other = msg(1, "Did you adopt a pet?"), msg(2, "Yes, Max."), msg(9, "pet")
    weights = {"adopt": idf(1, 100), "pet": idf(50, 100)}
    passages = rank_passages(
        [question, answer, other],
        {1: 3.0, 2: 1.5, 9: 0.5},
        list(weights),
        COUNTER,
        lambda m: m.text,
        weights,
        {1: (None, 2), 9: (8, None)},
    )
    by_id = {p.message.id: p.relevance for p in passages}
    assert by_id[1] == 1.0
    assert by_id[2] == NEIGHBOUR_WEIGHT * by_id[1]
    assert 0.0 < by_id[9] < 0.5


def test_chit_chat_searches_for_nothing() -> None:
    from tui_chat.store.fts import recall_terms

    for text in ("haha nice", "ok thanks", "see you tomorrow", "Thanks!", "nice one", "wow"):
        assert recall_terms(text) == [], text
    assert recall_terms("thanks! when did we adopt the beagle?") == ["adopt", "beagle"]


def test_recalled_passages_are_sized_exactly_and_labelled_briefly() -> None:
    from tui_chat.core.request.recall import as_passages
    from tui_chat.core.request.render import RECALL_HEADER
    from tui_chat.core.request.selection import Selector, recall_text

    messages = [msg(i, f"we talked about topic number {i} at some length") for i in range(1, 41)]
    selector = Selector(
        Policy(recall_max_excerpts=100), COUNTER, [], as_passages(messages, lambda m: m.text)
    )
    whole = recall_text(selector.recall(set(), 100_000))
    assert "#1 user: we talked about topic number 1" in whole
    # A limit the whole section just fits takes every passage: none is left out on an estimate.
    chosen = Selector(
        Policy(recall_max_excerpts=100), COUNTER, [], as_passages(messages, lambda m: m.text)
    ).recall(set(), COUNTER.count(whole))
    assert len(chosen) >= 39  # a line break may merge with its neighbour in the count
    assert COUNTER.count(RECALL_HEADER) < 40


def test_a_build_s_stem_patterns_stay_compiled_across_a_long_replay() -> None:
    from tui_chat.core.request import stems as stems_module

    pattern = stems_module._stems_pattern
    queries = [(f"alpha{i}", f"beta{i}", "gamma") for i in range(600)]  # 300 builds' worth
    for stems in queries:
        pattern(stems)
    hits = pattern.cache_info().hits
    for stems in queries:
        pattern(stems)
    assert pattern.cache_info().hits == hits + len(queries)


def test_the_reply_to_a_matching_question_ranks_with_the_question() -> None:
    question = msg(10, "Got any tips for getting started on it?")
    reply = msg(11, "Research agencies first and talk to families who have done it.")
    statement = msg(20, "Getting started was hard for me.")
    after = msg(21, "Research helps a lot.")
    neighbours = {10: (9, 11), 11: (10, 12), 20: (19, 21), 21: (20, 22)}
    scores = combine([Hit(10, 4.0), Hit(20, 4.0)], [], neighbours)
    assert scores[11] == scores[21] == NEIGHBOUR_WEIGHT * 4.0
    ranked = rank_passages(
        [question, reply, statement, after],
        scores,
        ["start"],
        COUNTER,
        lambda m: m.text,
        neighbours=neighbours,
    )
    by_id = {p.message.id: p.score for p in ranked}
    # The reply to a question takes ANSWER_WEIGHT of its score; the reply to a statement
    # keeps the neighbour's share.
    assert by_id[11] == ANSWER_WEIGHT * 4.0 > by_id[21] == NEIGHBOUR_WEIGHT * 4.0
    assert [p.message.id for p in ranked][:3] == [10, 20, 11]
    assert asks("Where did you go? ")
    assert asks('She asked "why?"') and not asks("Why not. Fine.")


def test_a_small_window_keeps_a_seed_summary_to_its_memory_share_where_recall_fills() -> None:
    turns = PRESETS["turns"]
    assert turns.recall_fill and turns.summary_max_tokens == 2_000
    assert for_window(turns, 4_000).summary_max_tokens == int(SMALL_MEMORY_SHARE * 4_000)
    assert for_window(turns, SMALL_WINDOW + 1).summary_max_tokens == 2_000  # a big window
    no_fill = replace(turns, recall_fill=False)
    assert for_window(no_fill, 4_000).summary_max_tokens == 2_000
    assert for_window(replace(turns, recall=False), 4_000).summary_max_tokens == 2_000
    session = PRESETS["session"]  # already below the share: its own budget stays
    small = replace(session, summary_max_tokens=100)
    assert for_window(small, 4_000).summary_max_tokens == 100


def test_a_question_s_wide_pool_is_ordered_by_what_each_passage_holds() -> None:
    from tui_chat.core.request.recall import Passage, by_relevance

    neighbour = Passage(msg(1, "ok, sounds good"), 0, 1, "ok, sounds good", 4.0, 0.05)
    holder = Passage(msg(2, "my aunt helped my family"), 0, 1, "my aunt helped", 1.0, 0.5)
    best = Passage(msg(3, "money for the family"), 0, 1, "money for the family", 4.0, 0.6)
    # By score the neighbour of the best hit came before the passage holding more words.
    assert [p.message.id for p in by_relevance([neighbour, holder, best])] == [3, 2, 1]
    # The search's score still counts: at equal relevance the better-scored passage first.
    other = Passage(msg(4, "family"), 0, 1, "family", 2.0, 0.5)
    assert [p.message.id for p in by_relevance([holder, other])] == [4, 2]
