"""Dates a message names, for date-aware recall.

"What did we decide on 13 October 2023?", "When did I go camping in June?", "what did you say
yesterday": a question that names a day, a month or a recent period is about the messages
written then. :func:`spans` reads those periods from the new message; recall then ranks the
passages written inside one of them higher (:func:`boost`). Only English dates are read: a
month name with or without a day and a year, and the relative words ``today``, ``yesterday``,
``this/last week``, ``last weekend`` and ``this/last month`` (counted from ``now``). A bare year
or a number alone is not a date here: it would take in most of a history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from tui_chat.core.request.recall import Passage

DATE_BOOST = 3.0
"""Score factor of a passage written inside a period the new message names. On the dev LoCoMo
conversations (42 of 497 questions name a date), default minus the strong probe: 2k -2.0 ->
-1.4 points, 4k -2.0 -> -1.6, 8k unchanged; 1.5 gained half of that, 10 the same as 3."""

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b{_YEAR}", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.IGNORECASE)
_MONTH_ONLY = re.compile(rf"\b(?:in|during|of|since|early|late|mid)\s+{_MONTH}\b{_YEAR}", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{4}})\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(today|yesterday|(?:this|last)\s+(?:week|month)|last\s+weekend)\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Span:
    """A period named by a message: from ``first`` to ``last`` (inclusive), in one year or, with
    ``year`` ``None``, in any year (a month or day named without one)."""

    first: tuple[int, int]
    """``(month, day)`` of the first day."""
    last: tuple[int, int]
    """``(month, day)`` of the last day."""
    year: int | None

    def holds(self, day: date) -> bool:
        """Whether ``day`` falls inside the span."""
        if self.year is not None and day.year != self.year:
            return False
        return self.first <= (day.month, day.day) <= self.last


def _days(start: date, end: date) -> list[Span]:
    """Spans covering ``start``..``end`` (one per calendar year crossed)."""
    if start.year == end.year:
        return [Span((start.month, start.day), (end.month, end.day), start.year)]
    return [
        Span((start.month, start.day), (12, 31), start.year),
        Span((1, 1), (end.month, end.day), end.year),
    ]


def _relative(word: str, today: date) -> list[Span]:
    word = " ".join(word.lower().split())
    monday = today - timedelta(days=today.weekday())
    first_of_month = today.replace(day=1)
    before = first_of_month - timedelta(days=1)
    periods = {
        "today": (today, today),
        "yesterday": (today - timedelta(days=1), today - timedelta(days=1)),
        "this week": (monday, today),
        "last week": (monday - timedelta(days=7), monday - timedelta(days=1)),
        "last weekend": (monday - timedelta(days=2), monday - timedelta(days=1)),
        "this month": (first_of_month, today),
        "last month": (before.replace(day=1), before),
    }
    start, end = periods[word]
    return _days(start, end)


def spans(text: str, now: datetime) -> list[Span]:
    """The periods ``text`` names (see the module's docstring), in order of appearance.

    Args:
        text: The new user message.
        now: When it is sent (relative words count from its date).

    Returns:
        The spans; empty when the text names no date.
    """
    found: list[tuple[int, Span]] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= a or match.start() >= b for a, b in taken)

    for pattern, order in ((_DAY_MONTH, "dm"), (_MONTH_DAY, "md")):
        for match in pattern.finditer(text):
            day_text, month_text = match.group(1, 2) if order == "dm" else match.group(2, 1)
            day, month = int(day_text), _MONTHS[month_text.lower()]
            if not 1 <= day <= 31 or not free(match):
                continue
            year = int(match.group(3)) if match.group(3) else None
            found.append((match.start(), Span((month, day), (month, day), year)))
            taken.append(match.span())
    for pattern in (_MONTH_YEAR, _MONTH_ONLY):
        for match in pattern.finditer(text):
            if not free(match):
                continue
            month = _MONTHS[match.group(1).lower()]
            year = int(match.group(2)) if match.group(2) else None
            found.append((match.start(), Span((month, 1), (month, 31), year)))
            taken.append(match.span())
    for match in _RELATIVE.finditer(text):
        found += [(match.start(), span) for span in _relative(match.group(1), now.date())]
    return [span for _, span in sorted(found, key=lambda item: item[0])]


def written_in(created_at: str, named: Sequence[Span]) -> bool:
    """Whether a message written at ``created_at`` (ISO 8601) falls in one of ``named``."""
    try:
        day = date.fromisoformat(created_at[:10])
    except ValueError:
        return False
    return any(span.holds(day) for span in named)


def boost(passages: Sequence[Passage], named: Sequence[Span]) -> list[Passage]:
    """``passages`` with those written inside a named period scored :data:`DATE_BOOST` times
    higher, best first again (the same list order when nothing is named).

    Args:
        passages: Ranked passages.
        named: The periods the new message names (:func:`spans`).

    Returns:
        The passages, re-ranked.
    """
    if not named:
        return list(passages)
    out = [
        replace(p, score=p.score * DATE_BOOST) if written_in(p.message.created_at, named) else p
        for p in passages
    ]
    out.sort(key=lambda p: (-p.score, p.message.id, p.part))
    return out
