"""The strong BM25 probe, the reference recall is measured against."""

from __future__ import annotations

from benchmarks.locomo import Turn, normalise
from benchmarks.probes import StrongBm25Probe


def turns(*texts: str) -> list[Turn]:
    return [
        Turn(f"D1:{i}", "user" if i % 2 else "assistant", t, t, "2023-05-08T13:56:00+00:00")
        for i, t in enumerate(texts, 1)
    ]


def test_stems_and_stop_words_decide_the_rank() -> None:
    probe = StrongBm25Probe(
        turns(
            "What were you doing all day?",
            "I visited my grandmother in the hospital.",
            "Nice weather for a walk today.",
        )
    )
    # "visiting" finds "visited" by its stem; "what"/"were"/"you" are stop words.
    assert probe.ranking("what were you visiting")[0] == 1


def test_a_turn_borrows_half_of_each_neighbours_score() -> None:
    probe = StrongBm25Probe(turns("Did you adopt a pet?", "Yes, a beagle named Max.", "Cool."))
    scores = probe.scores("adopt")
    assert scores[1] == probe.NEIGHBOUR * scores[0]
    assert 2 not in scores


def test_a_turn_that_does_not_fit_is_skipped_and_filling_goes_on() -> None:
    long = "beagle " + "words and more words " * 40
    probe = StrongBm25Probe(turns(long, "the beagle is called Max", "no match at all"))
    small = probe.costs[1]
    chosen = probe.selection("beagle", small + 5)
    assert normalise("the beagle is called Max") in chosen
    assert "words and more words" not in chosen
