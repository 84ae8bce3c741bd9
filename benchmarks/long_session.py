"""A generated long session: a multi-day work chat over four times the default budget.

Deterministic (one seed). A user and an assistant work together over :data:`DAYS` days,
:data:`TURNS_PER_DAY` exchanges a day, overnight gaps between days and the cost group's pause
model inside a day. Replies carry several paragraphs of English-like text
(:class:`benchmarks.datagen.TextMaker`) as a working chat does, so the whole session is well
over 400k tokens.

Facts are planted as people give them: now and then the user states one in passing ("For the
record, the Halvorsen gate code is QX-4471-b."), with a distinctive subject and an identifier.
Later prompts sometimes come back to an earlier fact ("Remind me: what was the Halvorsen gate
code?"), which is what makes recall run in the replay. Every fact is also a check question:
after a third, two thirds and all of the replay, each fact stated earlier is asked as a draft
and counts as kept when its sentence is in the request (``benchmarks/sessions.py``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

DAYS = 18
TURNS_PER_DAY = 36
SEED = 18
FACT_EVERY = 4
"""About one prompt in this many states a new fact."""
ASK_SHARE = 0.12
"""Share of prompts that come back to an earlier fact."""
NIGHT = 15 * 3_600.0
"""Seconds between a day's last reply and the next day's first prompt (and up to 3 h more)."""

_NAMES = (
    "Halvorsen", "Quayside", "Marigold", "Okonkwo", "Bramblewood", "Castellan", "Vantorre",
    "Ashgrove", "Lindqvist", "Peregrine", "Sorrento", "Kilbride", "Thornbury", "Delacroix",
    "Winterbourne", "Nakamura", "Fairhaven", "Greyfriars", "Montague", "Ravensworth",
)  # fmt: skip
_THINGS = (
    "gate code", "invoice number", "tracking number", "build tag", "hotel booking reference",
    "staging host", "license key", "locker number", "purchase order", "support case",
    "parking permit", "release branch", "vendor contact", "meeting room", "budget code",
)  # fmt: skip
_SAY = (
    "For the record, the {subject} is {value}.",
    "Before I forget: the {subject} is {value}.",
    "Note that the {subject} is {value}.",
    "Also, the {subject} is {value}, keep that in mind.",
)
_ASK = (
    "Remind me: what was the {subject}?",
    "What did I say the {subject} was?",
    "Quick one, the {subject} again?",
)


@dataclass(frozen=True)
class Fact:
    subject: str
    value: str
    sentence: str
    turn: int
    """Index of the prompt that states it."""


@dataclass(frozen=True)
class LongSession:
    user: list[str]
    replies: list[str]
    gaps: list[float]
    """Seconds before each prompt (the ``paused`` pattern)."""
    facts: list[Fact]


def _value(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    form = rng.randrange(3)
    if form == 0:
        return f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(1000, 9999)}"
    if form == 1:
        return f"{rng.choice(letters).lower()}{rng.randint(10, 99)}-{rng.getrandbits(20):05x}"
    return f"#{rng.randint(100_000, 999_999)}"


def generate(days: int = DAYS, per_day: int = TURNS_PER_DAY, seed: int = SEED) -> LongSession:
    """Build the session (same arguments, same session)."""
    from benchmarks.cost import pause_seconds
    from benchmarks.datagen import TextMaker

    rng = random.Random(seed)
    prose = TextMaker(random.Random(seed + 1))
    timing = random.Random(seed + 2)
    subjects = [f"{name} {thing}" for name in _NAMES for thing in _THINGS]
    rng.shuffle(subjects)
    user: list[str] = []
    replies: list[str] = []
    gaps: list[float] = []
    facts: list[Fact] = []
    for day in range(days):
        for turn in range(per_day):
            index = len(user)
            text = prose.paragraph(rng.randint(2, 5))
            if facts and rng.random() < ASK_SHARE:
                fact = rng.choice(facts)
                text = rng.choice(_ASK).format(subject=fact.subject) + " " + text
            if subjects and rng.random() < 1 / FACT_EVERY:
                subject = subjects.pop()
                value = _value(rng)
                sentence = rng.choice(_SAY).format(subject=subject, value=value)
                facts.append(Fact(subject, value, sentence, index))
                text += " " + sentence
            user.append(text)
            parts = [prose.paragraph(rng.randint(4, 7)) for _ in range(rng.randint(4, 7))]
            if rng.random() < 0.3:
                parts.insert(1, prose.code())
            replies.append("\n\n".join(parts))
            if turn == 0 and day > 0:
                gaps.append(NIGHT + timing.uniform(0, 3 * 3_600.0))
            else:
                gaps.append(pause_seconds(timing))
    return LongSession(user, replies, gaps, facts)


def question(fact: Fact) -> str:
    """The check question of a fact, as a user would ask it."""
    return f"What was the {fact.subject}?"
