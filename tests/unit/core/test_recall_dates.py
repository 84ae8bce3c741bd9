"""Date-aware recall: the periods a question names, and passages written then ranked first."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from tests.unit.core.test_recall_passages import msg
from tui_chat.core.request.dates import DATE_BOOST, Span, boost, spans, written_in
from tui_chat.core.request.recall import Passage

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)  # a Thursday


def test_days_months_and_years_named_in_a_question() -> None:
    assert spans("what did we decide on October 13, 2023?", NOW) == [Span((10, 13), (10, 13), 2023)]
    assert spans("the store on 1 February, 2023", NOW) == [Span((2, 1), (2, 1), 2023)]
    assert spans("when did I go camping in June?", NOW) == [Span((6, 1), (6, 31), None)]
    assert spans("my setback in October 2023", NOW) == [Span((10, 1), (10, 31), 2023)]
    assert spans("May I ask what you think?", NOW) == []  # "May" alone is not a date
    assert spans("the 2023 plan, item 13", NOW) == []


def test_relative_periods_count_from_now() -> None:
    assert spans("what did you say yesterday?", NOW) == [Span((11, 25), (11, 25), 2026)]
    assert spans("the talk last week", NOW) == [Span((11, 16), (11, 22), 2026)]
    january = datetime(2027, 1, 3, tzinfo=UTC)
    assert spans("last month", january) == [Span((12, 1), (12, 31), 2026)]


def test_passages_written_in_a_named_period_come_first() -> None:
    june = replace(msg(1, "we went camping"), created_at="2023-06-12T10:00:00+00:00")
    july = replace(msg(2, "we went camping again"), created_at="2023-07-02T10:00:00+00:00")
    ranked = [Passage(july, 0, 1, july.text, 2.0), Passage(june, 0, 1, june.text, 1.0)]
    named = spans("When did we go camping in June?", NOW)
    assert written_in(june.created_at, named) and not written_in(july.created_at, named)
    out = boost(ranked, named)
    assert [p.message.id for p in out] == [1, 2]
    assert out[0].score == DATE_BOOST * 1.0
    assert boost(ranked, []) == ranked
