"""Turning user text into safe FTS5 queries.

Users type anything into search: quotes, ``*``, ``NEAR(``, ``-``, ``AND``. None of it may reach
FTS5 as syntax. Every word becomes a quoted string (a prefix query for the last one), so a
query can never fail to parse.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer  # type: ignore[import-not-found]

_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def words(text: str) -> list[str]:
    """The searchable words of ``text`` (letters and digits, any script), lower-cased."""
    return [w.lower() for w in _WORD.findall(text.replace("\x00", " "))]


def match_all(text: str) -> str | None:
    """An FTS5 query matching rows that contain every piece of ``text`` (the last as a prefix).

    Each whitespace-separated piece becomes one quoted phrase (inner quotes doubled), so no
    user text is ever FTS5 syntax, and FTS5's own tokenizer splits and folds the piece exactly
    as it did the stored text (Python's idea of a word differs for combining accents, e.g.
    ``e\u0301cole``, and for case folding of newer scripts). A piece with punctuation is a
    phrase: ``foo-bar`` matches "foo-bar" and "foo bar".

    Returns ``None`` when the text has no searchable word.
    """
    if not words(text):
        return None
    # Cleaned as stored text is (NUL dropped, lone surrogates replaced), so the pieces match.
    text = text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    quoted = ['"' + piece.replace('"', '""') + '"' for piece in text.split()]
    quoted[-1] += "*"
    return " ".join(quoted)


MIN_STEM = 4
"""Shortest prefix searched as ``stem*``: shorter ones match too many unrelated words."""


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=4096)
def stem_prefix(word: str) -> str | None:
    """A prefix that matches the inflected and derived forms of an English word.

    The word's Snowball (Porter 2) stem, kept to the part it shares with the word:
    ``visited`` → ``visit`` (visit, visits, visiting), ``dancing`` → ``danc``,
    ``promotions`` → ``promot``, ``mentioned`` and ``mention`` → ``mention`` (not "mentor").
    The index is not stemmed, so recall searches ``stem*`` instead. Returns ``None`` when the
    word should be matched exactly (short, non-ASCII, digits, or a stem under
    :data:`MIN_STEM` letters).

    Args:
        word: A lower-cased word.

    Returns:
        The prefix, or ``None``.
    """
    if not word.isascii() or not word.isalpha() or len(word) < MIN_STEM:
        return None
    stem = _stemmer().stemWord(word)
    shared = 0
    while shared < min(len(stem), len(word)) and stem[shared] == word[shared]:
        shared += 1
    return word[:shared] if shared >= MIN_STEM else word


def recall_phrase(word: str) -> str:
    """The FTS5 expression recall uses for one word: its stem as a prefix (``"visit"*``),
    both forms of a ``-y``/``-ies`` noun (``"city" OR "cities"``), the exact forms of a word
    with a short stem (``"pet" OR "pets"``, ``"hiking" OR "hike" OR "hikes"``), or the exact
    word (digits, other scripts).

    Args:
        word: A lower-cased word from :func:`recall_terms`.

    Returns:
        A self-contained FTS5 expression (safe: only letters and digits inside quotes).
    """
    if word.endswith("ies") and len(word) > MIN_STEM:
        return f'"{word[:-3]}y" OR "{word}"'
    if word.endswith("y") and len(word) > MIN_STEM:
        return f'"{word}" OR "{word[:-1]}ies"'
    if not word.isascii() or not word.isalpha():
        return f'"{word}"'
    stem = _stemmer().stemWord(word)
    prefix = stem_prefix(word)
    if prefix is not None and stem.startswith(prefix[:MIN_STEM]) and len(stem) >= MIN_STEM:
        if prefix.endswith("e"):
            # "hike"* misses "hiking" (the e goes before -ing): that form is searched too.
            return f'"{prefix}"* OR "{prefix[:-1]}ing"'
        return f'"{prefix}"*'
    # A short stem ("pet", "hike" of "hiking"): its exact forms, a prefix would match too much.
    forms = dict.fromkeys((word, stem, stem + "s"))
    return " OR ".join(f'"{form}"' for form in forms)


FILLERS = frozenset(
    [
        "thanks",
        "thank",
        "thx",
        "ty",
        "ok",
        "okay",
        "kk",
        "haha",
        "hahaha",
        "hah",
        "heh",
        "lol",
        "lmao",
        "nice",
        "cool",
        "great",
        "awesome",
        "wow",
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "hi",
        "hey",
        "hello",
        "bye",
        "goodbye",
        "night",
        "morning",
        "amazing",
        "sounds",
        "tomorrow",
        "soon",
        "talk",
        "later",
        "makes",
        "sense",
        "hear",
        "doing",
        "much",
        "glad",
        "oh",
        "ah",
        "hmm",
        "alright",
        "gotcha",
        "agreed",
        "totally",
        "definitely",
        "absolutely",
        "indeed",
        "good",
        "see",
        "please",
        "one",
    ]
)
"""Acknowledgements, greetings and reactions: a message of only these ("haha nice", "ok
thanks", "see you tomorrow") asks nothing of the past, so recall does not search for them."""


def recall_terms(text: str, limit: int = 24) -> list[str]:
    """The distinctive words of ``text`` used for recall: no stopwords, fillers
    (:data:`FILLERS`) or one-letter words, each once, at most ``limit``.

    Args:
        text: The new user message.
        limit: Most words kept.

    Returns:
        Lower-cased words in order of appearance.
    """
    seen: dict[str, None] = {}
    for w in words(text):
        if len(w) < 2 or w in STOPWORDS or w in FILLERS:
            continue
        seen.setdefault(w, None)
        if len(seen) >= limit:
            break
    return list(seen)


def match_any(text: str, limit: int = 24) -> str | None:
    """An FTS5 query matching rows with any of the distinctive words of ``text`` (for recall).

    Stopwords and one-letter words are left out; at most ``limit`` distinct words are used.
    English words are searched by their stem as a prefix (``visited`` finds "visit",
    "visiting"), so a question finds the message that said it in another form.
    """
    phrases = [recall_phrase(w) for w in recall_terms(text, limit)]
    return " OR ".join(phrases) if phrases else None
