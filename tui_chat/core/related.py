"""Words related in meaning to a query's words, for recall's non-lexical hop.

"Is my husband coming?" shares no word with "we got married in June"; "my puppy" none with
"the dog". Recall searches words (FTS5), so it also searches a few words *near* the query's in
meaning: ``husband`` → wife, married, marriage; ``puppy`` → dogs, dog, pet; ``guitar`` →
instrument, music.

The vectors are WordLlama's (``wordllama`` on PyPI: 256-d token embeddings trained from a large
language model's, shipped inside the wheel as a 16 MB safetensors file with its tokenizer, so
nothing is ever downloaded). Only the package's files are read (its Python code would reach for
the network when a file is missing). A word's vector is its token's row, or the mean of its
tokens' rows; the candidates are the vocabulary's whole English words (about 10,000), so a
lookup is one 10,000 × 256 product per query word: the same cost for any history, nothing
stored per message.

Measured on the dev LoCoMo conversations (``benchmarks/probes.py``, the strong BM25 probe with
and without these words searched at a third of a word's weight, times its similarity): at
1k/2k/4k tokens of turns 78.0 → 79.6, 83.8 → 85.1, 86.7 → 87.7 %. Sentence vectors of whole
turns fused with BM25 (reciprocal rank fusion) measured worse: 67.3 / 76.6 / 83.6 %.
"""

from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the vectors: a command that never recalls never pays it
    import numpy as np
    import numpy.typing as npt

PACKAGE = "wordllama"
TOKENIZER_FILE = "tokenizers/l2_supercat_tokenizer_config.json"
WEIGHTS_FILE = "weights/l2_supercat_256.safetensors"
MIN_SIMILARITY = 0.4
"""Cosine similarity a word must reach to be searched as related (``husband``/``married``
0.55, ``religious``/``church`` 0.48). Dev LoCoMo, recall's ranking against the strong probe
(``benchmarks/history/RESULTS-2026-11.md``, "Recall against the strong probe: session 6"):
0.5 -> 0.45 -> 0.4 gained +0.2 / +0.2 / +0.8 and then +0.0 / +0.6 / +0.0 points at about
2k / 4k / 8k tokens."""
RELEVANCE_SIMILARITY = 0.5
"""Similarity a related word must reach to count for a passage's relevance (the floor where
recall is capped, :func:`~tui_chat.core.request.recall.related_relevance`): the figure that
floor was measured with, so what passes it is unchanged."""
PER_WORD = 5
KEPT_WORDS = 20_000
"""Words whose nearest vocabulary words are kept (about 1 KB each)."""
"""Most related words taken per query word."""
MIN_LETTERS = 4
"""Shortest candidate word: shorter vocabulary entries are mostly word pieces (``hus``)."""

_SPACE = "\u2581"  # the tokenizer's word-start mark


@dataclass(frozen=True, slots=True)
class Related:
    """A word related to one of the query's, with its similarity in (0, 1]."""

    word: str
    similarity: float
    source: str = ""
    """The query word it is related to (the nearest, when several)."""


class Vectors:
    """WordLlama's token vectors and the vocabulary's whole words (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        """Read the tokenizer and the weights from the installed package's directory."""
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(root / TOKENIZER_FILE))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer
        with safe_open(str(root / WEIGHTS_FILE), framework="np") as handle:
            weights = handle.get_tensor("embedding.weight")
        self._rows: npt.NDArray[np.float16] = weights
        ids: dict[str, int] = {}
        for token, index in sorted(tokenizer.get_vocab().items(), key=lambda item: item[1]):
            word = token[1:]
            whole = token.startswith(_SPACE) and word.isascii() and word.isalpha()
            # The lower-case token first: "▁florida" and "▁Florida" are one candidate.
            if whole and len(word) >= MIN_LETTERS and (word.islower() or word.lower() not in ids):
                ids[word.lower()] = index
        self.words = list(ids)
        self._ids = ids
        matrix = weights[list(ids.values())].astype(np.float32)
        self._matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        self._kept: OrderedDict[tuple[str, int], list[tuple[int, float]]] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(self, words: Sequence[str], count: int) -> list[list[tuple[int, float]]]:
        """Each word's ``count`` most similar vocabulary words (index, similarity), best first.

        A word's list is kept (the last :data:`KEPT_WORDS` words): a conversation asks the same
        words again and again, and a product of the vocabulary's matrix is most of a lookup's
        cost. A row of a matrix product is the same whichever rows share it, so a kept list is
        what a product of the whole query gives; one word alone is a matrix-vector product
        (its last bits differ), so it is worked out as before and not kept.
        """
        import numpy as np

        if len(words) == 1:
            scores = np.stack([self.vector(words[0])]) @ self._matrix.T
            return [_nearest(scores[0], count)]
        with self._lock:  # one lookup at a time: the kept lists stay whole
            kept = self._kept
            missing = [w for w in dict.fromkeys(words) if (w, count) not in kept]
            if missing:
                rows = [self.vector(w) for w in missing]
                batch = rows if len(rows) > 1 else rows * 2  # a matrix product, not a vector's
                scores = np.stack(batch) @ self._matrix.T
                for row, word in enumerate(missing):
                    kept[(word, count)] = _nearest(scores[row], count)
            for word in words:
                kept.move_to_end((word, count))
            out = [kept[(w, count)] for w in words]
            while len(kept) > KEPT_WORDS:
                kept.popitem(last=False)
        return out

    def _encode(self, word: str) -> list[int]:
        return list(self._tokenizer.encode(word, add_special_tokens=False).ids)

    def vector(self, word: str) -> npt.NDArray[np.float32]:
        """A word's unit vector: its own token's row when it is one token, else its tokens'
        mean (a capitalised token when only that form is one: names)."""
        import numpy as np

        index = self._ids.get(word.lower())
        if index is None:
            index = self._tokenizer.token_to_id(_SPACE + word.capitalize())
        ids = [index] if index is not None else self._encode(word)
        vector: npt.NDArray[np.float32] = np.zeros(self._matrix.shape[1], dtype=np.float32)
        if ids:
            vector += self._rows[ids].astype(np.float32).mean(axis=0)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def related(self, words: Sequence[str], per_word: int = PER_WORD) -> list[Related]:
        """Vocabulary words near ``words`` in meaning, best first, each once.

        A candidate that is a form of the query word (one starts the other: ``camp`` of
        ``camping``) is left out: recall's stem search finds it already.

        Args:
            words: Lower-cased query words.
            per_word: Most related words per query word.

        Returns:
            Related words with similarity at least :data:`MIN_SIMILARITY`.
        """
        if not words:
            return []
        asked = [w.lower() for w in words]
        best: dict[str, tuple[float, str]] = {}
        for word, near in zip(asked, self.nearest(asked, per_word + 8), strict=True):
            taken = 0
            for index, similarity in near:
                if similarity < MIN_SIMILARITY or taken >= per_word:
                    break
                candidate = self.words[int(index)]
                if candidate.startswith(word[:MIN_LETTERS]) or word.startswith(candidate):
                    continue
                if any(candidate.startswith(w[:MIN_LETTERS]) for w in asked):
                    continue
                best[candidate] = max(best.get(candidate, (0.0, word)), (similarity, word))
                taken += 1
        ordered = sorted(best.items(), key=lambda item: -item[1][0])
        return [Related(w, s, source) for w, (s, source) in ordered]


def _nearest(scores: npt.NDArray[np.float32], count: int) -> list[tuple[int, float]]:
    """The ``count`` highest of ``scores`` as ``(index, score)``, highest first."""
    return [(index, float(scores[index])) for index in top(scores, count)]


def top(scores: npt.NDArray[np.float32], count: int) -> list[int]:
    """The indices of the ``count`` highest scores, highest first: what
    ``np.argsort(-scores)[:count]`` gives, found by a partial sort (a tenth of the work on the
    vocabulary's 9,000 words). When a score among them is tied (with another of them or with
    the first one left out) the order of ties is the full sort's, so that sort decides."""
    import numpy as np

    negated = -scores
    if count >= len(scores):
        return [int(i) for i in np.argsort(negated)[:count]]
    part = np.argpartition(negated, count)
    chosen = part[:count]
    values = negated[chosen]
    order = np.argsort(values)
    ranked = values[order]
    if bool(np.any(ranked[1:] == ranked[:-1])) or ranked[-1] == negated[part[count]]:
        return [int(i) for i in np.argsort(negated)[:count]]
    return [int(i) for i in chosen[order]]


_LOCK = threading.Lock()
_LOADED: list[Vectors | None] = []


def package_root() -> Path | None:
    """The installed ``wordllama`` package's directory, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return root if (root / WEIGHTS_FILE).is_file() and (root / TOKENIZER_FILE).is_file() else None


def vectors() -> Vectors | None:
    """The shared vectors, read once per process (about 0.3 s, 10 MB); ``None`` when the
    package or its files are missing (recall then searches the query's own words only)."""
    with _LOCK:
        if not _LOADED:
            root = package_root()
            _LOADED.append(Vectors(root) if root is not None else None)
        return _LOADED[0]


def related(words: Sequence[str]) -> list[Related]:
    """Words related to ``words`` in meaning (:meth:`Vectors.related`); none without the
    vectors."""
    loaded = vectors()
    return loaded.related(words) if loaded is not None else []
