"""Retrieval probes over LoCoMo turns: what recall is measured against, at the same token
budget. :class:`StrongBm25Probe` is the reference; :class:`Bm25Probe`, a plain BM25,
is kept as one extra row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from benchmarks.locomo import Turn, normalise

_TERM = re.compile(r"\w+")


class Bm25Probe:
    """Plain Okapi BM25 over single turns: the retrieval a 30-line script would do.

    Each turn is a document (its stored text, lower-cased ``\\w+`` words, no stemming, no
    stop words); the question is the query. :meth:`hits` fills a token budget with the best
    turns in rank order and stops at the first that does not fit.
    """

    def __init__(self, turns: Sequence[Turn], k1: float = 1.5, b: float = 0.75) -> None:
        from tui_chat.core.tokens import get_counter

        counter = get_counter()
        self.turns = list(turns)
        self.docs = [_TERM.findall(t.text.lower()) for t in self.turns]
        self.costs = [counter.count(t.text) for t in self.turns]
        self.k1, self.b = k1, b
        self.avg = sum(len(d) for d in self.docs) / max(1, len(self.docs))
        self.freqs: list[dict[str, int]] = []
        df: dict[str, int] = {}
        for doc in self.docs:
            tf: dict[str, int] = {}
            for term in doc:
                tf[term] = tf.get(term, 0) + 1
            self.freqs.append(tf)
            for term in tf:
                df[term] = df.get(term, 0) + 1
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self._ranks: dict[str, list[int]] = {}

    def ranking(self, query: str) -> list[int]:
        """Turn indexes, best first (cached per query)."""
        cached = self._ranks.get(query)
        if cached is not None:
            return cached
        terms = _TERM.findall(query.lower())
        scores: list[tuple[float, int]] = []
        for index, tf in enumerate(self.freqs):
            length = len(self.docs[index])
            score = 0.0
            for term in terms:
                f = tf.get(term)
                if f:
                    norm = f + self.k1 * (1 - self.b + self.b * length / self.avg)
                    score += self.idf[term] * f * (self.k1 + 1) / norm
            if score > 0:
                scores.append((-score, index))
        ranked = [index for _, index in sorted(scores)]
        self._ranks[query] = ranked
        return ranked

    def selection(self, query: str, budget: int) -> str:
        """The text of the best turns that fill ``budget`` tokens, normalised."""
        chosen: list[str] = []
        spent = 0
        for index in self.ranking(query):
            if spent + self.costs[index] > budget:
                break
            spent += self.costs[index]
            chosen.append(self.turns[index].text)
        return normalise("\n".join(chosen))


STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)
"""English stop words (NLTK's list without contractions): what a good search leaves out."""


class StrongBm25Probe:
    """A good plain search, the reference recall must beat: Okapi BM25 over single
    turns with stop words dropped and Snowball (Porter 2) stems (PyStemmer), each turn's score
    smoothed with half of each direct neighbour's score (a question's words often sit in the turn
    before the fact). :meth:`selection` fills a token budget with the best turns in rank
    order, skipping a turn that does not fit and filling on, as a good search would. No
    compaction, no labels: only the turns' text counts against the budget.
    """

    NEIGHBOUR = 0.5

    def __init__(self, turns: Sequence[Turn], k1: float = 1.5, b: float = 0.75) -> None:
        import Stemmer  # type: ignore[import-not-found]

        from tui_chat.core.tokens import get_counter

        self._stemmer = Stemmer.Stemmer("english")
        counter = get_counter()
        self.turns = list(turns)
        self.costs = [counter.count(t.text) for t in self.turns]
        self.k1, self.b = k1, b
        docs = [self.terms(t.text) for t in self.turns]
        self.lengths = [len(d) for d in docs]
        self.avg = sum(self.lengths) / max(1, len(docs))
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for index, doc in enumerate(docs):
            tf: dict[str, int] = {}
            for term in doc:
                tf[term] = tf.get(term, 0) + 1
            for term, f in tf.items():
                self.postings.setdefault(term, []).append((index, f))
        n = len(docs)
        self.idf = {
            t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()
        }
        self._ranks: dict[str, list[int]] = {}

    def terms(self, text: str) -> list[str]:
        """Lower-cased words without stop words, stemmed."""
        words = [w for w in _TERM.findall(text.lower()) if w not in STOP_WORDS]
        return list(self._stemmer.stemWords(words))

    def scores(self, query: str) -> dict[int, float]:
        """Turn index -> smoothed BM25 score (turns scoring 0 left out)."""
        base: dict[int, float] = {}
        for term in set(self.terms(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for index, f in self.postings[term]:
                norm = f + self.k1 * (1 - self.b + self.b * self.lengths[index] / self.avg)
                base[index] = base.get(index, 0.0) + idf * f * (self.k1 + 1) / norm
        smoothed = dict(base)
        for index, score in base.items():
            for near in (index - 1, index + 1):
                if 0 <= near < len(self.turns):
                    smoothed[near] = smoothed.get(near, 0.0) + self.NEIGHBOUR * score
        return smoothed

    def ranking(self, query: str) -> list[int]:
        """Turn indexes, best first (cached per query)."""
        cached = self._ranks.get(query)
        if cached is None:
            scores = self.scores(query)
            cached = sorted(scores, key=lambda i: (-scores[i], i))
            self._ranks[query] = cached
        return cached

    def selection(self, query: str, budget: int) -> str:
        """The text of the best turns that fit ``budget`` tokens (a turn that does not fit is
        skipped), normalised."""
        chosen: list[str] = []
        spent = 0
        for index in self.ranking(query):
            if spent + self.costs[index] <= budget:
                spent += self.costs[index]
                chosen.append(self.turns[index].text)
        return normalise("\n".join(chosen))
