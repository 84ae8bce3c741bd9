"""The few words around an identifier that say what it is about, for its ledger entry.

``PROJ-432`` or ``line 1234`` alone tells a model little once the turn that typed it is
folded; ``PROJ-432 (#88: the flaky ~ login test)`` says which ticket it is. The phrase is taken
from the clause of the message where the identifier first occurs: a few words on each side
within that sentence, the identifier itself written ``~``. It is stored with the entry and sent
only while the ledger's budget has room once every identifier it can carry is in
(:func:`tui_chat.core.ledger.render`).
"""

from __future__ import annotations

import re

MAX_CHARS = 48
"""Longest phrase kept (characters, the ``~`` included)."""
WORDS_BEFORE = 3
WORDS_AFTER = 5
REACH = 240
"""Characters looked at on each side of the identifier for its clause (a long paste costs no
more than a short message)."""
PER_MESSAGE = 32
"""Phrases taken from one message at most: finding each identifier in a long paste is a scan
of it, and a paste of a thousand identifiers is not read a thousand times."""

_CLAUSE_END = re.compile(r"[.!?](?=\s|$)|[\n;:]\s|\n|[()\[\]]")
_EDGE = " \t,;:—–-\"'`“”‘’()[]{}<>*_#"


def phrase(text: str, value: str) -> str:
    """A short phrase around the first occurrence of ``value`` in ``text``.

    Args:
        text: The message text the identifier was found in.
        value: The identifier, as written.

    Returns:
        ``"words before ~ words after"`` within the identifier's clause, at most
        :data:`MAX_CHARS` characters; ``""`` when the clause holds nothing else.
    """
    at = text.find(value)
    if at < 0:
        return ""
    end = at + len(value)
    start = max(0, at - REACH)
    ends = [m.end() for m in _CLAUSE_END.finditer(text, start, at)]
    before = _words(text[ends[-1] if ends else start : at])
    if not ends and start > 0:
        before = before[1:]  # the reach may have cut a word in two
    stop = _CLAUSE_END.search(text, end, end + REACH)
    after = _words(text[end : stop.start() if stop else end + REACH])[:WORDS_AFTER]
    if not after and stop is not None and stop.group(0) in "?!":
        # "Can you look at PROJ-432? It is the flaky login test": the next sentence says it
        then = _CLAUSE_END.search(text, stop.end(), stop.end() + REACH)
        after = _words(text[stop.end() : then.start() if then else stop.end() + REACH])
        after = after[:WORDS_AFTER]
    before = before[-WORDS_BEFORE:]
    while before or after:
        out = " ".join([*before, "~", *after])
        if len(out) <= MAX_CHARS:
            return out
        # drop the farthest word, from the longer side
        if len(after) >= len(before):
            after.pop()
        else:
            before.pop(0)
    return ""


def _words(text: str) -> list[str]:
    """The words of a span, without punctuation at their edges or words that are only that."""
    return [w for w in (raw.strip(_EDGE) for raw in text.split()) if w]
