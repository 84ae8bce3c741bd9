"""Exact identifiers in conversation text, and how many of them a summary kept.

A summary that loses the file names, numbers and code names of the turns it replaces is the
most common way compaction hurts a conversation. The retention figure of a version (how many
identifiers of the covered messages its summary and ledger, as sent, keep) is judged with
:func:`identifier_present`; the same extraction helps the offline summarizer prefer
identifier-rich sentences.

Identifiers are: URLs, ticket keys (``PROJ-432``, ``issue #88``, ``owner/repo#12``; not
``COVID-19`` or ``UTF-8``, which stay names), line references (``line 1234``, ``lines 10-20``,
``L42``, ``src/app/db.py:120``), file paths, numbers with at least two digits or with a decimal
part or a unit, dates, version strings, code names (``snake_case``, ``camelCase``,
``PascalCase`` with an inner capital, ``SCREAMING_CASE``, ``Dotted.names``, ``call()``),
command-line flags, names with digits such as ``claude-haiku-4-5``, ```backticked``` text and
quoted strings.
Korean text works too: ``400자``, ``3턴``, ``「…」`` are recognised.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

Kind = Literal[
    "url", "code", "quote", "ticket", "line", "path", "date", "version", "number", "name"
]

_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`)\]}]+|\bwww\.[^\s<>\"'`)\]}]+", re.IGNORECASE)
_BACKTICK = re.compile(r"`([^`\n]{1,120})`")
_QUOTE = re.compile(
    r"\"([^\"\n]{2,120})\"|“([^”\n]{2,120})”|‘([^’\n]{2,120})’|「([^」\n]{1,120})」"
    r"|『([^』\n]{1,120})』|(?<![\w'])'([^'\n]{2,120})'(?![\w'])"
)
_EXTENSIONS = (
    r"(?:py|pyi|js|jsx|ts|tsx|json|toml|ya?ml|md|txt|rst|"
    r"csv|tsv|sql|db|sqlite|sh|bash|zsh|ps1|bat|ini|cfg|conf|env|lock|log|html?|css|tcss|scss|"
    r"xml|java|kt|go|rs|rb|php|c|h|cc|cpp|hpp|cs|swift|m|r|ipynb|pdf|png|jpe?g|gif|svg|zip|"
    r"gz|tar|whl|proto|graphql|vue|svelte|lua|pl|ex|exs|erl|hs|scala|dart|gradle|dockerfile)"
    r"(?![\w-])"
)
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*"
    r"|(?<![\w/.-])/[\w.@+-]+(?:/[\w.@+-]+)*/?"
    r"|(?<![\w/.-])[\w@+-]+(?:\.[\w-]+)*\." + _EXTENSIONS,
    re.IGNORECASE,
)
_NOT_TICKETS = frozenset(
    (
        *("COVID", "SARS", "MERS", "UTF", "UCS", "SHA", "MD", "ISO", "IEC", "CP", "WIN", "TLS"),
        *("SSL", "AES", "RSA", "GPT", "HTTP", "USB", "DDR", "MPEG", "IPV", "BASE"),
    )
)
"""Prefixes of well-known ``NAME-12`` words that are not ticket keys (``COVID-19``, ``UTF-8``,
``SHA-256``, ``ISO-8601``, ``GPT-4``, ``AES-256``): they are kept whole, as names."""
_TICKET = re.compile(
    r"(?<![\w.#/-])([A-Z][A-Z0-9_]{1,9}-[1-9]\d{0,6})(?![\w-])"  # PROJ-432, ABC-12
    r"|(?<![\w/.-])([\w.-]+/[\w.-]+#\d+)(?![\w-])"  # owner/repo#12
    r"|\b(?i:issue|ticket|bug|pr|mr|pull request)s?\s(#\d+)(?![\w-])"  # issue #88
)
_LINE = re.compile(
    # a file and a line (and column): src/app/db.py:120, db.py:120:5, app/db.py#L10-L20
    r"(?<![\w/.~:-])(?:(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*|[\w@+-]+(?:\.[\w-]+)*\."
    + _EXTENSIONS
    + r")(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)(?![\w:])"
    r"|(?<![\w-])(?i:lines?)\s\d+(?:\s?(?:-|–|to)\s?\d+)?(?![\w])"  # line 1234, lines 10-20
    r"|(?<![\w#-])L\d{2,}(?:-L?\d+)?(?![\w-])",  # L42, L10-L20
    re.IGNORECASE,
)
_DATE = re.compile(
    r"(?<![\w.-])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"(?![\w-])|(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?![\w:])"
    r"|(?<![\w/.])\d{1,4}/\d{1,4}(?:/\d{1,4})?(?![\w/])"
)
_VERSION = re.compile(
    r"(?<![\w.])v\d+(?:\.\d+)*(?:[-+][\w.]+)?(?![\w.])|(?<![\w.])\d+\.\d+\.\d+(?:[-+][\w.]+)?(?![\w])",
    re.IGNORECASE,
)
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?(?![\w])")
_UNITS_EN = (
    r"%|ms|µs|us|ns|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|"
    r"years?|kb|mb|gb|tb|kib|mib|gib|b|k|m|x|px|em|rem|pt|dpi|fps|hz|khz|mhz|ghz|tokens?|"
    r"chars?|characters?|words?|lines?|bytes?|turns?|messages?|msgs?|rps|qps|req/s|usd|eur|"
    r"krw|won|dollars?|cm|mm|km|kg|g|°c|°f"
)
_UNITS_KO = (
    r"자|턴|개|원|초|분|시간|일|주|개월|달|년|월|토큰|번|명|줄|글자|단어|바이트|배|퍼센트|%|회|"
    r"건|층|장|권|페이지|쪽|살|세|점|위|등|달러|만원|천원|억"
)
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<cur>[$€£₩¥])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:_\d+)*(?:\.\d+)?)"
    r"(?:\s?(?P<unit_en>" + _UNITS_EN + r")(?![A-Za-z0-9_])|(?P<unit_ko>" + _UNITS_KO + r"))?"
    r"(?![A-Za-z0-9_]|\.\d)",
    re.IGNORECASE,
)
_CODE_NAME = re.compile(
    r"(?<![\w.])(?:"
    r"_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+_*"  # snake_case / SCREAMING_CASE
    r"|_+[A-Za-z][A-Za-z0-9]+"  # _private
    r"|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with an inner capital
    r"|[A-Za-z_]\w*\(\)"  # call()
    r")(?:\(\))?(?![\w])"
)
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=[^\s,;]+)?(?![\w])")
_DIGIT_NAME = re.compile(
    r"(?<![\w.-])(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+(?![\w-])"
)

_TRAILING = ".,;:!?)]}>'\""
_NOT_NAMES = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m", "u.s", "cf", "al", "et.al"})


def _clean(raw: str) -> str:
    value = raw.strip()
    if value.endswith("()"):
        return value
    return value.rstrip(_TRAILING).strip()


_DIGITS = frozenset("0123456789")
_PASSES: tuple[tuple[re.Pattern[str], Kind, bool, frozenset[str], re.Pattern[str] | None], ...] = (
    # (pattern, kind, value is the first non-empty group, one of these characters must occur,
    #  a cheap pattern that every match of the pass contains: no hit, no pass to run)
    (_URL, "url", False, frozenset("/."), re.compile(r"://|www\.", re.IGNORECASE)),
    (_BACKTICK, "code", True, frozenset("`"), None),
    (_QUOTE, "quote", True, frozenset("\"“‘「『'"), None),
    (_TICKET, "ticket", True, _DIGITS, re.compile(r"[A-Z0-9_]-[1-9]|#\d")),
    (_LINE, "line", False, _DIGITS, re.compile(r"(?i:line)|\w:\d|#L\d|L\d\d")),
    (_DATE, "date", False, _DIGITS, re.compile(r"\d[-:/]\d")),
    (_VERSION, "version", False, _DIGITS, re.compile(r"v\d|\d\.\d", re.IGNORECASE)),
    (_PATH, "path", False, frozenset("/."), re.compile(r"/|\." + _EXTENSIONS, re.IGNORECASE)),
    (_DOTTED, "name", False, frozenset("."), re.compile(r"\w\.[A-Za-z_]")),
    (_NUMBER, "number", False, _DIGITS, None),
    (_FLAG, "name", False, frozenset("-"), re.compile(r"-[A-Za-z]")),
    (_DIGIT_NAME, "name", False, frozenset("-"), re.compile(r"[A-Za-z0-9]-[A-Za-z0-9]")),
    (_CODE_NAME, "name", False, frozenset(), re.compile(r"_|\(\)|[a-z0-9][A-Z]")),
)


_MIGHT_HOLD = (
    re.compile(r"[0-9`\"“‘「『'/_(-]"),
    re.compile(
        r"\.(?:(?<=\w\.)[A-Za-z_]|(?<=[wW][wW][wW]\.)|(?i:"
        + _EXTENSIONS.removesuffix(r"(?![\w-])")
        + r"))"
    ),
    re.compile(r"[a-z0-9][A-Z]"),
)
"""Between them, something every pass needs (its characters, or what its hint matches),
looking at no neighbours beyond the match: a character of the first; ``w.x``, ``www.`` or a
file extension after a dot; a capital after a small letter or digit."""


def might_hold_identifiers(text: str) -> bool:
    """False when neither ``text`` nor any part of it (a line, a sentence) holds an identifier.

    Each pass of the scan needs a character or a short sequence of :data:`_MIGHT_HOLD`; none
    of them depends on what lies around the match, so a text without them has no part with
    them either. True says nothing: the text may still have none.

    Args:
        text: Any text.

    Returns:
        Whether :func:`scan` of the text or of a part of it may find something.
    """
    chars, dotted, camel = _MIGHT_HOLD
    if chars.search(text) or camel.search(text):
        return True
    return "." in text and dotted.search(text) is not None


def _scan(text: str) -> list[tuple[Kind, str]]:
    """Return ``(kind, identifier)`` pairs in priority order, each span used once.

    Each pass blanks what it took, so a URL's path is not counted again as a path. A pass
    whose characters or hint are absent from the text left to it cannot match and is skipped
    (most passes, on most prose).
    """
    found: list[tuple[Kind, str]] = []
    if not might_hold_identifiers(text):
        return found  # no pass could run (three searches instead of up to eleven checks)
    work = text
    present = frozenset(text)
    for pattern, kind, inner, needs, hint in _PASSES:
        if (needs and not needs & present) or (hint is not None and not hint.search(work)):
            continue
        taken: list[tuple[int, int]] = []
        for match in pattern.finditer(work):
            if inner:
                value = next((g for g in match.groups() if g), "").strip()
            else:
                value = _clean(match.group(0))
            taken_as = _accept(kind, value, match)
            if taken_as is not None:
                found.append((taken_as, value))
                taken.append(match.span())
        if taken:
            work = blank(work, taken)
    return found


def blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with each of the ordered, disjoint ``spans`` replaced by as many spaces.

    Args:
        text: Any text.
        spans: ``(start, end)`` offsets, in order, not overlapping.

    Returns:
        The text, as long as before.
    """
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(" " * (end - start))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _accept(kind: Kind, value: str, match: re.Match[str]) -> Kind | None:
    """The kind ``value`` is taken as (usually ``kind``), or ``None``: not an identifier."""
    if kind == "ticket" and value.split("-", 1)[0] in _NOT_TICKETS:
        return "name"  # COVID-19, UTF-8: a name with digits, kept whole, not a ticket
    return kind if _is_identifier(kind, value, match) else None


def _is_identifier(kind: Kind, value: str, match: re.Match[str]) -> bool:
    if not value:
        return False
    if kind == "number":
        num = match.group("num")
        digits = sum(ch.isdigit() for ch in num)
        has_unit = bool(match.group("unit_en") or match.group("unit_ko") or match.group("cur"))
        return digits >= 2 or "." in num or has_unit
    if kind == "name":
        bare = value.removesuffix("()")
        if bare.casefold() in _NOT_NAMES or len(bare) < 2:
            return False
        if value.startswith("-"):
            # a flag: "--json", "-c"; a lone dash word like "-ish" is not one
            return value.startswith("--") or len(value) == 2
    if kind == "path":
        if value in ("/", "//", "./", "../") or value.count("/") == len(value):
            return False
        # "and/or", "yes/no", "input/output": two plain words are not a path
        parts = [p for p in value.split("/") if p]
        if all(p.replace(".", "").isdigit() for p in parts):
            return False  # "8/8", "05/27": a fraction or a date, not a path
        if len(parts) == 2 and not value.startswith(("/", "~", ".")) and "." not in value:
            return all(not p.isalpha() for p in parts)
    if kind == "quote":
        inner = value.strip()
        # a quoted lone lowercase word is a JSON key or a word in scare quotes, not a literal
        return len(inner) >= 2 and any(ch.isalnum() for ch in inner) and not inner.isalpha()
    return True


def extract_identifiers(text: str) -> set[str]:
    """Return the exact identifiers found in ``text``.

    Args:
        text: Any conversation text (English, Korean or mixed; Markdown is fine).

    Returns:
        The identifiers as they are written, without surrounding quotes or backticks.
    """
    return {value for _, value in _scan(text)}


Scan = Callable[[str], list[tuple[Kind, str]]]
"""Something that gives :func:`scan`'s answer for a text (:func:`scan` itself, or a memo)."""


def scan(text: str) -> list[tuple[Kind, str]]:
    """The ``(kind, identifier)`` pairs of ``text``, each span used once (see the module doc).

    Args:
        text: Any conversation text.

    Returns:
        Pairs in the order the passes found them.
    """
    return _scan(text)


class ScanMemo:
    """:func:`scan` that scans each distinct text once: one compaction step reads the same
    message texts for its ledger and for its retention figure. Hold it only as long as the
    texts themselves (it keeps them)."""

    def __init__(self) -> None:
        """An empty memo."""
        self._found: dict[str, list[tuple[Kind, str]]] = {}

    def __call__(self, text: str) -> list[tuple[Kind, str]]:
        """The ``(kind, identifier)`` pairs of ``text`` (see :func:`scan`); do not modify."""
        found = self._found.get(text)
        if found is None:
            found = self._found[text] = _scan(text)
        return found


def normalise_haystack(text: str) -> str:
    """``text`` folded as :func:`retention` searches it (case, digit group separators)."""
    return _normalise_haystack(text)


def identifier_present(haystack: str, value: str, number: bool) -> bool:
    """Whether an identifier occurs in a :func:`normalise_haystack` text, as ``retention``
    judges it (whole word, numbers by value).

    Args:
        haystack: Text from :func:`normalise_haystack`.
        value: The identifier as written.
        number: True for a number (compared by its digits).

    Returns:
        True when it is there.
    """
    needle, is_number = _needle("number" if number else "name", value)
    return _present(haystack, needle, is_number)


def _canonical_number(value: str) -> str:
    match = _NUMBER.fullmatch(value.strip())
    core = match.group("num") if match else value
    # Only digit-group separators go ("8,000", "1_000"), as in the haystack; "0_0" stays.
    return re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", core)


def _needle(kind: Kind, value: str) -> tuple[str, bool]:
    """Return the normalised text to look for and whether it is a bare number."""
    if kind == "number":
        return _canonical_number(value), True
    return value.casefold(), False


def _normalise_haystack(text: str) -> str:
    folded = text.casefold()
    # "8,000" and "8000" are the same figure; "1_000" too.
    return re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", folded)


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NUMBER_BEFORE = _WORD_CHARS | {"."}
_ASCII_DIGITS = frozenset("0123456789")
_ANY_DIGIT = re.compile(r"\d")


def _present(haystack: str, needle: str, number: bool) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as a whole word (a number: as a whole figure).

    Occurrences are found with ``str.find`` and their neighbours checked, which is what the
    patterns ``(?<![A-Za-z0-9_])needle(?![A-Za-z0-9_])`` (each side only when the needle's end
    there is a word character) and, for a number, ``(?<![A-Za-z0-9_.])(?<!\\d,)needle
    (?![0-9]|\\.\\d)`` match, at C speed over a long haystack.
    """
    if not needle:
        return False
    start = haystack.find(needle)
    if start < 0:
        return False
    if number:
        bounded = _number_bounded
    else:
        before = needle[0].isalnum() or needle[0] == "_"
        after = needle[-1].isalnum() or needle[-1] == "_"
        if not (before or after):
            return True

        def bounded(text: str, begin: int, end: int) -> bool:
            if before and begin > 0 and text[begin - 1] in _WORD_CHARS:
                return False
            return not (after and end < len(text) and text[end] in _WORD_CHARS)

    while start >= 0:
        if bounded(haystack, start, start + len(needle)):
            return True
        start = haystack.find(needle, start + 1)
    return False


def _number_bounded(text: str, begin: int, end: int) -> bool:
    """Whether a figure at ``text[begin:end]`` stands alone (not inside a longer one)."""
    if begin > 0:
        if text[begin - 1] in _NUMBER_BEFORE:
            return False
        if begin > 1 and text[begin - 1] == "," and _ANY_DIGIT.match(text[begin - 2]):
            return False
    if end < len(text):
        if text[end] in _ASCII_DIGITS:
            return False
        if text[end] == "." and end + 1 < len(text) and _ANY_DIGIT.match(text[end + 1]):
            return False
    return True


def retention(source_texts: Iterable[str], summary_text: str, scan: Scan = scan) -> tuple[int, int]:
    """Count the identifiers of the sources that the summary kept.

    An identifier counts as kept when it appears in the summary as a whole word (case
    insensitive). Numbers compare by value of their digits: ``8,000 tokens`` is kept by a
    summary that says ``8000``, and ``60s`` by ``60 seconds``.

    Args:
        source_texts: The texts of the messages (and parent summary) the summary replaces.
        summary_text: The summary's text.
        scan: How a text is scanned (a :class:`ScanMemo` shares the work with the ledger).

    Returns:
        ``(kept, total)`` over the distinct identifiers of the sources.
    """
    wanted: dict[tuple[str, bool], None] = {}
    for text in source_texts:
        for kind, value in scan(text):
            wanted.setdefault(_needle(kind, value), None)
    haystack = _normalise_haystack(summary_text)
    kept = sum(1 for needle, number in wanted if _present(haystack, needle, number))
    return kept, len(wanted)
