"""Recall scoring that matches stems word by word (memoised per word, words cached per text)
finds exactly what one regex scan of the whole text finds, for any text and stems: case,
Unicode, apostrophes, hyphens, digits, Korean, combining marks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_chat.core.models import Message
from tui_chat.core.request.recall import (
    RELATED_WEIGHT,
    Passage,
    matches,
    related_relevance,
    relevance,
)


def _reference_found(text: str, stems: Sequence[str]) -> set[str]:
    """The plain scan: one regex, longest stems first, each match starting a word."""
    ordered = sorted(set(stems), key=len, reverse=True)
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(s) for s in ordered) + r")\w*", re.IGNORECASE | re.UNICODE
    )
    return {m.group(1).lower() for m in pattern.finditer(text)}


def _reference_relevance(text: str, weights: Mapping[str, float]) -> float:
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    found = _reference_found(text, tuple(weights))
    return min(1.0, sum(weights.get(stem, 0.0) for stem in found) / total)


# Letters whose case folds are unusual (long s, Kelvin sign, dotted/dotless i, final sigma,
# sharp s, the combining ypogegrammeni that folds to iota), Korean syllables and jamo,
# apostrophes, hyphens, digits, underscores, spaces and punctuation.
_ALPHABET = list(
    "abcdeiklsxyzABEIKSZ019_'’-‐ .,?!\n\tſKİıΣσςιΙ\u0345ßẞéÉ한국어요는다ㅎㅏ가각간ÅåΩω"
)
_TEXTS = st.text(alphabet=_ALPHABET, max_size=60)
_STEM = st.text(alphabet=_ALPHABET, min_size=1, max_size=4)
_WORD_STEM = st.text(alphabet=list("abeiklsxzſıσςι한국어요가019_éåω"), min_size=1, max_size=4)
_STEMS = st.lists(st.one_of(_WORD_STEM, _WORD_STEM, _STEM), min_size=1, max_size=6)
_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _passage(i: int, text: str) -> Passage:
    message = Message(
        id=i,
        conversation_id="c",
        role="user",
        content=[{"type": "text", "text": text}],
        text=text,
        turn=i,
        token_count=len(text),
        status="complete",
        created_at="2026-01-01T00:00:00+00:00",
    )
    return Passage(message, 0, 1, text, 1.0, 0.0)


@_SETTINGS
@given(texts=st.lists(_TEXTS, min_size=1, max_size=4), stems=_STEMS)
def test_matches_equals_a_whole_text_scan(texts: list[str], stems: list[str]) -> None:
    for text in texts:  # several texts share one stem set's memo
        assert matches(text, stems) == len(_reference_found(text, stems))


@_SETTINGS
@given(
    texts=st.lists(_TEXTS, min_size=1, max_size=4),
    weights=st.dictionaries(_STEM | _WORD_STEM, st.floats(0.0, 9.0), min_size=1, max_size=6),
)
def test_relevance_equals_a_whole_text_scan(texts: list[str], weights: dict[str, float]) -> None:
    for text in texts:
        assert relevance(text, weights) == _reference_relevance(text, weights)


@_SETTINGS
@given(
    texts=st.lists(_TEXTS, min_size=1, max_size=4),
    weights=st.dictionaries(_WORD_STEM, st.floats(0.1, 9.0), min_size=1, max_size=4),
    related=st.lists(_WORD_STEM, min_size=1, max_size=5),
    similarity=st.floats(0.1, 1.0),
)
def test_related_relevance_equals_a_whole_text_scan(
    texts: list[str], weights: dict[str, float], related: list[str], similarity: float
) -> None:
    asked = sorted(weights)
    links = {word: (asked[i % len(asked)], similarity) for i, word in enumerate(related)}
    passages = [_passage(i, text) for i, text in enumerate(texts)]
    total = sum(weights.values())
    try:
        ranked = related_relevance(passages, weights, links)
    except KeyError:  # a text spelling a stem so it lower-cases to another (the scan's own)
        expected_error = any(
            stem not in links for text in texts for stem in _reference_found(text, tuple(links))
        )
        assert expected_error
        return
    for passage, out in zip(passages, ranked, strict=True):
        cover: dict[str, float] = {}
        for found in _reference_found(passage.text, tuple(links)):
            query_stem, share = links[found]
            cover[query_stem] = max(cover.get(query_stem, 0.0), RELATED_WEIGHT * share)
        borrowed = sum(weights[q] * s for q, s in cover.items()) / total
        assert out.relevance == (min(1.0, borrowed) if borrowed > passage.relevance else 0.0)


def test_a_combining_mark_next_to_a_word_is_scanned_whole() -> None:
    """U+0345 is no word character but matches "ι" case-insensitively: a stem can match
    from it, right after a word, which word-by-word matching would miss."""
    text = "a\u0345xyz"
    assert _reference_found(text, ["ιx"]) == {"\u0345x"}
    assert matches(text, ["ιx"]) == 1


def test_a_stem_with_a_hyphen_or_apostrophe_matches_across_words() -> None:
    assert matches("a well-known place, don't", ["well-kn", "don'"]) == 2
    assert matches("a well known place", ["well-kn"]) == 0
    assert relevance("It's here", {"it'": 1.0, "her": 1.0}) == 1.0
