"""Which of a query's stems start a word of a text, for recall's scoring
(:mod:`tui_chat.core.request.recall`): :func:`found`.

A stem is a lower-cased word prefix; a text holds it when a word of the text starts with it,
case-insensitively (one regex of all the stems, longest first, each match running to the
word's end). Recall asks this of every candidate passage (512 and more a hop past the
budget), for each query and hop, while the user types; scanning each text with the regex
again was about half the recorded-request replays' time. So a text is split into its
distinct words once (cached by text), and which stem starts a word is found once per stem
set and word (memoised) with the same regex: the result is the scan's, set iteration order
included.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)


@lru_cache(maxsize=1024)
def _stems_pattern(stems: tuple[str, ...]) -> re.Pattern[str]:
    """One regex finding which stem starts a word (longest stems first); the last 1,024 are
    kept (two a build, a few KB each: a build again for a draft or the gauge compiles none)."""
    ordered = sorted(set(stems), key=len, reverse=True)
    return re.compile(
        r"\b(" + "|".join(re.escape(s) for s in ordered) + r")\w*", re.IGNORECASE | re.UNICODE
    )


@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...] | None:
    """The distinct words (``\\w+`` runs, as written) of ``text`` in order of first
    occurrence (so a set built from them iterates as the regex scan's did); the last 4,096
    texts are kept, so a passage is split into words once for every query and hop.

    ``None`` for a text holding :data:`_EDGE_FOLDS`: a stem could match there across a
    word's edge, so the text is scanned whole."""
    if not _EDGE_FOLDS.isdisjoint(text):
        return None
    return tuple(dict.fromkeys(_WORD.findall(text)))


_EDGE_FOLDS = frozenset("\u0345")
"""The characters that are not word characters but match one case-insensitively (the
combining ypogegrammeni matches "ι"); the only one in Python 3.11's Unicode tables."""
_MEMO_WORDS = 1 << 15
"""Most words one stem set remembers before starting afresh (a pool of 512 chat turns holds
a few thousand; with :func:`_matcher`'s 32 sets, at most about a million entries)."""


class _Matcher:
    """Which stem of a set starts each word, found once per word for that set.

    When every stem is made of word characters only, the stems pattern can only match at a
    word's start and runs to its end, so scanning a text finds exactly what matching each of
    its distinct words alone finds; that is memoised per word (the same regex matching the
    word, so case and Unicode folding stay the regex's own). A stem with another
    character (or an empty one) could match across a word's edge: such a set scans the whole
    text, as before.
    """

    __slots__ = ("memo", "pattern", "wordwise")

    def __init__(self, stems: tuple[str, ...]) -> None:
        self.pattern = _stems_pattern(stems)
        self.wordwise = all(_WORD.fullmatch(stem) for stem in stems)
        self.memo: dict[str, str] = {}
        """Word -> the stem starting it as the word spells it, lower-cased ("" for none)."""

    def found(self, text: str) -> set[str]:
        """The stems (as the text spells them, lower-cased) starting a word of ``text``."""
        words = _words(text) if self.wordwise else None
        if words is None:
            return {m.group(1).lower() for m in self.pattern.finditer(text)}
        memo = self.memo
        try:
            return set(filter(None, map(memo.__getitem__, words)))
        except KeyError:  # words this stem set has not seen: match each once
            if len(memo) > _MEMO_WORDS:
                memo.clear()
            # Read back from this call's own list: recall scores in worker threads, and
            # another may clear the memo between this call's writes and its reads.
            match = self.pattern.match
            stems: list[str] = []
            for word in words:
                stem = memo.get(word)
                if stem is None:
                    hit = match(word)
                    stem = memo[word] = hit.group(1).lower() if hit is not None else ""
                stems.append(stem)
            return set(filter(None, stems))


@lru_cache(maxsize=32)
def _matcher(stems: tuple[str, ...]) -> _Matcher:
    """The last 32 stem sets' matchers (a build uses two or three; a draft rebuilt as it is
    typed reuses them)."""
    return _Matcher(stems)


def found(text: str, stems: tuple[str, ...]) -> set[str]:
    """The stems starting a word of ``text`` (the regex scan's result, memoised by word)."""
    return _matcher(stems).found(text)
