"""The past-budget benchmark's chat: the dev conversations as one chronological chat."""

from __future__ import annotations

import itertools

import pytest

from benchmarks.common import LOCOMO_DIR

pytestmark = pytest.mark.skipif(not LOCOMO_DIR.exists(), reason="../shared/data/locomo missing")


def test_the_chat_keeps_every_line_once_in_date_order_with_its_speaker_and_a_unique_id() -> None:
    from benchmarks.locomo import normalise
    from benchmarks.past_budget import CONVERSATIONS, build_chat

    chat = build_chat()
    ids = [t.dia_id for t in chat.turns]
    assert len(ids) == len(set(ids))
    assert {i.split(":")[0] for i in ids} == set(CONVERSATIONS)
    stamps = [e.when for e in chat.exchanges]
    assert stamps == sorted(stamps)
    sent = normalise("\n".join(f"{e.prompt}\n{e.reply}" for e in chat.exchanges))
    for turn in chat.turns:
        assert normalise(turn.text) in sent
        speaker, _, said = turn.text.partition(": ")
        assert speaker and said.startswith(turn.original[:20])
    # Sessions are days apart: the replay's clock and the stored times see real gaps.
    firsts = [e.when for e in chat.exchanges if e.first_of_session]
    assert len(firsts) == 70
    gaps = sorted((b - a).total_seconds() for a, b in itertools.pairwise(firsts))
    assert gaps[len(gaps) // 2] > 3_600


def test_the_budget_is_the_chat_over_its_ratio_and_questions_span_every_third() -> None:
    from benchmarks.past_budget import RATIO, budget_for, build_chat
    from tui_chat.core.tokens import get_counter

    chat = build_chat()
    counter = get_counter()
    total = sum(counter.count(e.prompt) + counter.count(e.reply) for e in chat.exchanges)
    assert abs(total / budget_for(chat) - RATIO) < 0.1
    thirds = {third for _, third in chat.questions}
    assert thirds == {0, 1, 2}
    assert all(e in chat.texts for q, _ in chat.questions for e in q.evidence)


def test_a_split_holds_only_the_conversations_asked_for() -> None:
    from benchmarks.past_budget import build_chat

    chat = build_chat(names=["conv-30"])
    assert {t.dia_id.split(":")[0] for t in chat.turns} == {"conv-30"}
    assert all(e.startswith("conv-30:") for q, _ in chat.questions for e in q.evidence)
