"""Turning user text into safe FTS5 queries.

Users type anything into search: quotes, ``*``, ``NEAR(``, ``-``, ``AND``. None of it may reach
FTS5 as syntax. Every word becomes a quoted string (a prefix query for the last one), so a
query can never fail to parse.
"""

from __future__ import annotations

import re

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
    """An FTS5 query matching rows that contain every word (the last as a prefix).

    Returns ``None`` when the text has no searchable word.
    """
    found = words(text)
    if not found:
        return None
    quoted = [f'"{w}"' for w in found]
    quoted[-1] += "*"
    return " ".join(quoted)


def match_any(text: str, limit: int = 24) -> str | None:
    """An FTS5 query matching rows with any of the distinctive words of ``text`` (for recall).

    Stopwords and one-letter words are left out; at most ``limit`` distinct words are used.
    """
    seen: dict[str, None] = {}
    for w in words(text):
        if len(w) < 2 or w in STOPWORDS:
            continue
        seen.setdefault(w, None)
        if len(seen) >= limit:
            break
    if not seen:
        return None
    return " OR ".join(f'"{w}"' for w in seen)
