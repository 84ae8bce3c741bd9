"""How much a new message needs the folded past: the share of its words the recent turns lack.

A message that carries on the talk of the last few turns finds its words there, and what it
needs of the past is already in the request; a message about something the recent turns never
mention (a question about last month, an old plan picked up again) can only be answered from
the folded history. Recall's cost cap (:mod:`~.recall_cost`) is sized for the first kind; for
the second the cap and the relevance floor give way, by :func:`need_weight`, up to the recall
budget's own maximum.

Measured on the dev LoCoMo chats replayed past their budget (``benchmarks/past_budget.py``):
the median chat line lacks 54 % of its (idf-weighted) words in the last
:data:`RECENT_MESSAGES` messages, the median question about the chat 83 %. With the gate
(and the cost share 0.5 -> 0.2) evidence went from 86.7 % to 89.5 % and the warm bill from
1.06x to 0.87x sending everything (paused 0.63x -> 0.57x).

Only a message that asks (:func:`asks`) is lifted, and its need is weighed over the whole
message (what it also says of the recent talk dilutes it: weighed over the asking sentences
alone, the past-budget chat's warm bill rose from 0.70x to 0.74x sending everything).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

RECENT_MESSAGES = 20
"""Messages at the end of the raw turns a new message's words are looked for in."""

NEED_FROM = 0.65
"""Below this share of missing word weight recall keeps its cost cap (on the past-budget chat
12 % of the chat lines and 71 % of the questions lack 70 % or more)."""
NEED_FULL = 0.85
"""From this share on the cap is lifted to the recall budget's own maximum."""


def novelty(stems: Sequence[str], weights: Sequence[float], recent: str) -> float:
    """The share of the message's word weight whose stems the recent text lacks.

    Args:
        stems: The message's searched words as lower-case stems (prefixes of their forms).
        weights: Each stem's weight (its idf), in the order of ``stems``.
        recent: The recent turns' text, lower-cased.

    Returns:
        A share in [0, 1]; 0 for a message without searched words.
    """
    total = sum(weights)
    if total <= 0:
        return 0.0
    missing = sum(w for stem, w in zip(stems, weights, strict=True) if stem not in recent)
    return missing / total


_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_ABBREVIATION = re.compile(
    r"\b(?:(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc)\.(?=\s)|(?:[A-Za-z]|e\.g|i\.e)\.(?=\S|\s+[a-z]))"
)
"""A period that ends an abbreviation (``U.S.``, ``Dr. Seuss``, ``e.g.``), not a sentence."""


def _plain(text: str) -> str:
    """``text`` with abbreviations' periods taken out, for telling sentences apart."""
    return _ABBREVIATION.sub(lambda m: m.group()[:-1], text)


_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z]+\b")
_OPENERS = ".!?\"'([:"
"""What a word after which starts a sentence (or a quote, or a line's ``Name:``)."""


def names(text: str) -> set[str]:
    """The words ``text`` writes capitalised inside a sentence (names: ``Melanie``, ``Paris``,
    ``LGBTQ``), lower-cased; a sentence's first word and ``I`` are not names."""
    out: set[str] = set()
    text = _plain(text)
    for match in _CAPITALISED.finditer(text):
        before = text[: match.start()].rstrip(" \t")
        if before and before[-1] not in _OPENERS and before[-1] != "\n":
            out.add(match.group().lower())
    return out


def lookup(text: str) -> bool:
    """Whether ``text`` is a lookup into the past: one line of one sentence that asks (ends
    on ``?``) about someone or something it names (:func:`names`): "What do Melanie's kids
    like?", "When did Maria meet Jean?". It asks for a fact, which may lie anywhere in the
    folded past, and its other words are often in the recent turns too ("kids", "like"),
    which is why :func:`novelty` alone rated most such questions below the need that lifts
    the cap. A chat line that carries on the talk is a statement or several sentences.

    On the past-budget chat (``benchmarks/past_budget.py``) most of its 495 questions and
    none of its 756 chat lines are lookups. Tried first: a lookup only where a name is missing
    from the recent turns (310 questions): 93.3 % of the evidence against 96.2 %, the
    questions about the two people of the last session kept to the cost cap."""
    if not text.rstrip().endswith("?"):
        return False  # before the abbreviations are looked for in a long draft
    body = _plain(text.strip())
    if len([s for s in _SENTENCE_END.split(body) if s.strip()]) != 1:
        return False
    return bool(names(body))


_SENTENCE = re.compile(r"[^.!?\uff1f\n]*(?:[.!?\uff1f]+[\"')\]]*|\n|$)")
_QUESTION_END = re.compile(r"[?\uff1f][\"')\]]*\s*$")
_ASKING_START = re.compile(
    r"\s*(?:what|which|who|whom|whose|when|where|why|how"
    r"|remind|recall|list|summari[sz]e|tell me|show me|find)\b",
    re.IGNORECASE,
)


def asks(text: str) -> bool:
    """Whether ``text`` asks something: a sentence that is a question (ends on ``?``), or
    that opens like one or like a request for what was said ("what was the port we used",
    "remind me of the plan", "list the files we changed").

    Only a message that asks may take recall past its cost cap (:func:`need_weight`): one that
    tells (news, thanks, a reply to the other side), even about something the recent turns
    never mention, gets the passages the cap holds that match it closely
    (:data:`~tui_chat.core.request.recall_cost.TELL_FLOOR`). On the past-budget chat
    (``benchmarks/past_budget.py``, warm) 84 chat lines lacked 65 % or more of their words
    and took 303k tokens of recall, 255k of them in the 71 lines that ask nothing (session
    openers about the news, thanks); every question about the chat asks."""
    return any(_QUESTION_END.search(part) or _ASKING_START.match(part) for part in _sentences(text))


_AUXILIARY = r"(?:has|have|had|does|do|did|is|are|was|were)"
_GATHERING = (
    re.compile(r"\b(?:both|in common)\b", re.IGNORECASE),
    re.compile(r"^\s*how many\b", re.IGNORECASE),
    re.compile(
        r"^\s*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\b|(?:[\w+-]+\s+){0,2}?"
        r"(?:(?!(?:this|is|was|does|has|his|its|us|yours|hers|ours)\b)\w+[^s\W]s|people|children)"
        rf"\s+{_AUXILIARY}\b)",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:likely\b|(?i:would|might|could)\s+(?!(?:I|You|We|They)\b)[A-Z][a-z]*\b)"),
)
"""A list ("What activities has Melanie done…", "What kinds of music does he…"), a comparison
("…both…", "…in common?"), a count ("How many…") or a judgement about someone ("Would John be
open to…", "…likely…")."""


def gathers(text: str) -> bool:
    """Whether ``text`` asks something whose answer is gathered from many turns, not looked up
    in one (:data:`_GATHERING`: a list, a comparison, a count, a judgement about someone).

    Recall finds turns by their words, and such an answer lies in turns that mostly share
    none with the question ("What activities has Melanie done with her family?" is answered by
    "we went camping last weekend"): after a compact the request may keep only some of them.
    On the dev LoCoMo chats, one manual compact at the model's own window
    (``benchmarks/compact_preview.py``) dropped the evidence of 39 of 495 questions; 29 of
    those gather, and 64 of the 456 others."""
    return any(
        _QUESTION_END.search(part) and any(p.search(part) for p in _GATHERING)
        for part in _sentences(text)
    )


def _sentences(text: str) -> list[str]:
    """The sentences of ``text`` (abbreviations' periods end none), blank ones left out."""
    return [m.group() for m in _SENTENCE.finditer(_plain(text)) if m.group().strip()]


QUESTION_FROM = 0.85
"""From this share of missing word weight recall may grow past the ordinary maximum
(:func:`question_ceiling`)."""
QUESTION_FULL = 0.95
"""From this share on it may fill the recall share of the working budget."""


def need_weight(share: float, start: float | None = None, full: float | None = None) -> float:
    """How far the cost cap gives way for a message lacking ``share`` of its words (0 to 1;
    ``start`` and ``full``: where it starts and ends, :data:`NEED_FROM` and :data:`NEED_FULL`
    unless given)."""
    start = NEED_FROM if start is None else start
    full = NEED_FULL if full is None else full
    return min(1.0, max(0.0, (share - start) / (full - start)))


def question_ceiling(recall_max: int, recall_share: float | None, usable: int, need: float) -> int:
    """The most tokens recall may take for a message whose need of the folded past is
    ``need``: ``recall_max`` (the ordinary maximum) at no need, rising by
    :func:`need_weight` to the recall share of the working budget (``recall_share`` x
    ``usable``; the ordinary maximum where the policy gives recall no share).

    A question about what the recent turns never mention can only be answered from the
    folded past, and a plain search needs room to find it: on the past-budget chat the strong
    search keeps 87.9 % of the evidence in 6k tokens, 95.6 % in 16.6k and 97.2 % in 20k.
    A message that carries on the recent talk keeps the ordinary maximum (and its cost cap).
    """
    wide = int(recall_share * usable) if recall_share is not None else recall_max
    if wide <= recall_max:
        return recall_max
    return recall_max + int(need_weight(need, QUESTION_FROM, QUESTION_FULL) * (wide - recall_max))


def needed_cap(cap: int, need: float, ceiling: int) -> int:
    """The recall cap for a message whose need is ``need`` (:func:`need_weight`): from the
    cost cap at no need up to ``ceiling`` (the recall budget's own maximum) at full need."""
    if ceiling <= cap:
        return cap
    return cap + int(need_weight(need) * (ceiling - cap))
