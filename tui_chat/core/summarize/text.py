"""Text helpers shared by the summarizers: sentences, cutting, and the script of a text."""

from __future__ import annotations

import re

_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_LATIN = re.compile(r"[A-Za-z]")


def is_mostly_korean(text: str) -> bool:
    """True when Hangul outweighs Latin script (syllables count double: one is a word chunk).

    Args:
        text: Any text.

    Returns:
        Whether a Korean length limit should apply.
    """
    hangul = len(_HANGUL.findall(text))
    latin = len(_LATIN.findall(text))
    return hangul > 0 and hangul * 2 >= latin


_TWO_ALNUM = re.compile(r"[^\W_].*?[^\W_]", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?。…])\s+(?=\S)")


def sentences(text: str) -> list[str]:
    """Split text into sentences: by line, then after ``.!?`` followed by a space.

    Lines inside a fenced code block are kept whole; list and quote markers are dropped, and
    pieces without two letters or digits are left out.

    Args:
        text: Any text.

    Returns:
        The sentences in order.
    """
    out: list[str] = []
    in_code = False
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not line:
            continue
        if in_code:
            out.append(line)
            continue
        for piece in _SENTENCE_END.split(line):
            piece = piece.strip().lstrip("-*•> ").strip()
            if _TWO_ALNUM.search(piece):
                out.append(piece)
    return out


_NOT_TOKENIZER_SPACE = re.compile(r"[\x1c-\x1f]")
"""Characters ``str.split`` takes for whitespace and Unicode's ``White_Space`` does not."""


def fewest_tokens(text: str) -> int:
    """A floor on the ``cl100k_base`` token count of ``text``, without encoding it.

    The encoding cuts text into pieces before it merges bytes into tokens, and each piece
    gives at least one token. Its pieces are a run of letters (with one leading character
    that is not a letter, digit or line break), one to three digits, a run of punctuation
    (with one leading space and trailing line breaks), a contraction, or whitespace only: the
    characters of a piece that are not whitespace are next to each other, so two words (runs
    of non-whitespace) never share a piece, and there are at least as many tokens as words.
    ``str.split`` separates words at Unicode whitespace, as the encoding's ``\\s`` does, and
    also at ``\\x1c``-``\\x1f``; a text holding one of those gets the floor of 0.

    Args:
        text: Any text.

    Returns:
        A number of tokens the text has at least.
    """
    if _NOT_TOKENIZER_SPACE.search(text):
        return 0
    return len(text.split())


def trim(text: str, limit: int) -> str:
    """Cut text to at most ``limit`` characters, at a sentence end or a space when possible.

    Args:
        text: Any text (it is stripped first).
        limit: The most characters the result may have.

    Returns:
        The text, or its cut start (ending with ``…`` when cut inside a sentence).
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[:limit]
    window = text[: limit - 1]
    ends = [m.end() for m in re.finditer(r"[.!?。…](?=\s)|\n", window)]
    if ends and ends[-1] >= limit // 2:
        return window[: ends[-1]].rstrip()
    space = window.rfind(" ")
    if space >= limit // 2:
        window = window[:space]
    return window.rstrip() + "…"


def cut(text: str, limit: int | None) -> str:
    """Cut a message body for a summary prompt, marking the cut.

    Args:
        text: The body.
        limit: The most characters kept, ``None`` for no limit.

    Returns:
        The body, or its first ``limit`` characters followed by `` …[cut]``.
    """
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + " …[cut]"
