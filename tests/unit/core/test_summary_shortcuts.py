"""The offline summarizer's shortcuts give the answers of the work they skip.

Each shortcut is a necessary condition checked first (a floor on a token count, a pattern that
every match of a costlier one contains); these properties are what makes skipping exact.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tui_chat.core.identifiers import extract_identifiers, might_hold_identifiers
from tui_chat.core.policy import Policy
from tui_chat.core.summarize.extractive import _PREFERENCE, _PREFERENCE_STEMS, _block, _read
from tui_chat.core.summarize.fields import DECISION, DECISION_STEMS
from tui_chat.core.summarize.targets import Targets, running_tokens, running_tokens_of
from tui_chat.core.summarize.text import fewest_tokens, sentences
from tui_chat.core.tokens import get_counter

COUNTER = get_counter()

_pieces = st.sampled_from(
    [
        *("word", " ", "  ", "\n", "\t", "\r\n", "\x0b", "\x1c", "\x1f", "\x85", "\u2028"),
        *("\u3000", "\xa0", ".", ",", "'s", "'", '"', "`", "-", "_", "()", "/", "12", "3"),
        *("4.5", "www.", ".py", ".PY", "a.b", "aB", "x1", "한국어", "😀", "İ", "ı", "ſ", "K"),
        *("Decided", "WE WILL keep", "going with", "inſtead of", "ALWAYS", "don't", "mustn't"),
        *("결정", "하지 마", "꼭 ", "switched to", "let's use", "opted for", "please avoid"),
    ]
)
_texts = st.one_of(st.text(max_size=120), st.lists(_pieces, max_size=40).map("".join))


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_texts)
@example("a\x1cb c")
@example("  leading and trailing  ")
def test_a_text_has_at_least_as_many_tokens_as_words(text: str) -> None:
    assert COUNTER.count(text) >= fewest_tokens(text)


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_texts, st.integers(1, 100_000), st.sampled_from([0.1, 0.3, 0.5]))
def test_the_running_target_is_the_one_of_the_exact_count(
    text: str, max_tokens: int, rate: float
) -> None:
    targets = Targets(max_chars=None, max_tokens=max_tokens, rate=rate, level=None)
    assert running_tokens_of(targets, text) == running_tokens(targets, COUNTER.count(text))


def test_a_long_source_is_not_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    targets = Targets(max_chars=None, max_tokens=Policy().summary_max_tokens, rate=0.3, level=None)
    source = "plain words of a long span " * 2_000

    def refuse(_text: str) -> int:
        raise AssertionError("encoded")

    monkeypatch.setattr(COUNTER, "count", refuse)
    assert running_tokens_of(targets, source) == running_tokens(targets, 10**9)


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_texts)
@example("see a.PY now")
@example("call run() or userId")
@example("WWW.example.org")
def test_a_text_that_cannot_hold_an_identifier_has_none_in_any_sentence(text: str) -> None:
    if might_hold_identifiers(text):
        return
    assert not extract_identifiers(text)
    for sentence in sentences(text):
        assert not extract_identifiers(sentence)


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_texts)
@example("We decıded to keep it")  # dotless i: the pattern takes it for "i"
@example("WE'LL USE IT")
@example("İnstead of that")
@example("Make ſure it runs")
def test_every_decision_or_preference_holds_its_stem(text: str) -> None:
    lowered = text.lower()
    if DECISION.search(text):
        assert DECISION_STEMS.search(lowered)
    if _PREFERENCE.search(text):
        assert _PREFERENCE_STEMS.search(lowered)


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(st.lists(_pieces, max_size=120).map("".join))
@example("We decided on src/a.py. " + "x" * 400 + " .py")  # a sentence cut by trim
@example("Plain words here. Make ſure it runs. WE'LL USE IT")
def test_a_sentence_reads_the_same_with_what_its_block_lacks(text: str) -> None:
    block = _block(text)
    for sentence in sentences(text):
        assert _read(sentence, block) == _read(sentence, (False, True))
