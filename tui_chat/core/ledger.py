"""The identifier ledger: every exact identifier of a summarised span, with where it occurs.

A prose summary cannot keep every path, hash and error code of two hundred turns within its
length cap, and a model that gets ``src/app/db.py`` wrong is worse than one that says nothing.
So each summary version carries a ledger beside its text: the identifiers of the messages it
covers (its parent's ledger plus the new span), each with its kind and the ids of the messages
where it occurs. The ledger is sent in the memory block within a budget of its own (and what
the summary leaves of its budget), ranked pinned first, then what the user typed, then most
recent, then most frequent.

Kinds: ``ticket`` (``PROJ-432``, ``issue #88``), ``line`` (``line 1234``, ``db.py:120``,
``L42``), ``path``, ``url``, ``hash`` (commit hashes), ``error`` (error codes and exception
names), ``code`` (function and class names, backticked code), ``version``, ``number``
(numbers with units, dates), ``person`` (people's names) and ``quote`` (quoted strings).
Extraction reuses :mod:`tui_chat.core.identifiers` and adds hashes, error codes and names.
An entry of a kind whose value says little (:data:`ABOUT_KINDS`: tickets, line references,
numbers, hashes) keeps a short phrase from where it first occurs
(:mod:`tui_chat.core.ledger_context`), sent when the budget has room after every identifier it
can carry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tui_chat.core import identifiers
from tui_chat.core.identifiers import (
    Kind,
    Scan,
    blank,
    identifier_present,
    normalise_haystack,
)
from tui_chat.core.ledger_context import PER_MESSAGE, phrase
from tui_chat.core.models import Message
from tui_chat.core.tokens import TokenCounter

KINDS: tuple[str, ...] = (
    "ticket",
    "line",
    "path",
    "url",
    "hash",
    "error",
    "code",
    "version",
    "number",
    "person",
    "quote",
)
"""Ledger kinds, in the order the memory block lists them."""

ABOUT_KINDS = frozenset(("ticket", "line", "number", "hash"))
"""Kinds whose value alone says little (``PROJ-432``, ``line 1234``, ``250 ms``, a hash): their
entries keep the words around them. A path, a URL or a function name says what it is."""

LEDGER_HEADER = (
    "## Identifier ledger\nExact identifiers of the summarized messages, by kind, some with "
    "(#newest message: words around it, ~ for it). Copy them from here, never from memory."
)

_HASH = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
_ERROR = re.compile(
    r"(?<![\w.])(?:[A-Z][A-Za-z]*(?:Error|Exception|Warning)|E[A-Z]{3,}|(?!L\d)[A-Z]{1,4}\d{3,5}"
    r"|(?:ERR|ERROR)_[A-Z0-9_]+|HTTP \d{3}|errno \d+)(?![\w])"
)
_PERSON = re.compile(r"(?<=[a-z,;:] )(?:[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?)(?![\w])")
_STAMP = re.compile(r"(?m)^[ \t]*\[[^\]\n]{0,80}?\d{1,2}:\d{2}[^\]\n]{0,80}\]")
"""A bracketed line opening that stamps a time (``[12:03]``, ``[Session 3, 8:30 pm on 1 January,
2023]``): when a message was written, which it keeps itself, not an identifier of what it says."""
_SPEAKER = re.compile(r"(?m)^[ \t]*[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?: ")
"""A transcript's speaker label at a line's start (``Maria: ``): the word after it opens a
sentence, so its capital says nothing about a name."""
_NOT_PEOPLE = frozenset((
    "I", "I'm", "I've", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
    "Sunday", "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December", "Python", "JavaScript", "TypeScript",
    "Rust", "Linux", "Windows", "Docker", "Git", "GitHub", "SQL", "SQLite", "Postgres", "The",
    "This", "That", "It", "We", "You", "They", "He", "She", "OK", "Yes", "No", "English",
    "Korean", "API", "CLI", "TUI", "JSON", "HTTP", "URL",
))  # fmt: skip
"""Capitalised words after a small word that are not people's names."""

_CODE_KIND: Mapping[str, str] = {
    "ticket": "ticket",
    "line": "line",
    "url": "url",
    "path": "path",
    "quote": "quote",
    "code": "code",
    "version": "version",
    "number": "number",
    "date": "number",
    "name": "code",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One identifier in the ledger."""

    kind: str
    value: str
    message_ids: tuple[int, ...]
    """Messages where it occurs, oldest first (at most :data:`MAX_IDS` kept)."""
    count: int
    """Occurrences over the span (messages holding it)."""
    context: str = ""
    """Words around its first occurrence, itself written ``~`` (``""``: none)."""
    typed: bool = False
    """The user wrote it in a message of their own (it ranks before what only replies say)."""

    def to_json(self) -> dict[str, Any]:
        """Serialise for the summary row."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "value": self.value,
            "ids": list(self.message_ids),
            "n": self.count,
        }
        if self.context:
            data["ctx"] = self.context
        if self.typed:
            data["u"] = 1
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        """Read an entry written by :meth:`to_json`."""
        return cls(
            str(data["kind"]),
            str(data["value"]),
            tuple(data["ids"]),
            int(data["n"]),
            str(data.get("ctx", "")),
            bool(data.get("u", 0)),
        )

    @property
    def last_id(self) -> int:
        """The newest message holding it."""
        return self.message_ids[-1] if self.message_ids else 0


MAX_IDS = 8
"""Message ids kept per entry: the first, then the newest."""


_PRE_PASSES: tuple[tuple[re.Pattern[str], str, re.Pattern[str]], ...] = (
    # (pattern, kind, a cheap pattern that every match contains: no hit, no pass to run)
    (_HASH, "hash", re.compile(r"[0-9]")),
    (_ERROR, "error", re.compile(r"\d|E[A-Z]|Error|Exception|Warning")),
)
"""The ledger's own kinds, taken (and blanked) before :func:`identifiers.scan` runs."""


def extract(text: str, scan: Scan = identifiers.scan) -> list[tuple[str, str]]:
    """The ``(kind, value)`` identifiers of a text, each once, in the ledger's kinds.

    Args:
        text: Any conversation text.
        scan: How a text is scanned for the shared kinds (a :class:`ScanMemo` reuses a scan
            of the same text made for another purpose).

    Returns:
        Identifiers in order of discovery.
    """
    found: dict[tuple[str, str], None] = {}
    work = blank(text, [m.span() for m in _STAMP.finditer(text)]) if "[" in text else text
    for pattern, kind, hint in _PRE_PASSES:
        if not hint.search(work):
            continue
        spans: list[tuple[int, int]] = []
        for match in pattern.finditer(work):
            found.setdefault((kind, match.group(0)), None)
            spans.append(match.span())
        if spans:
            work = blank(work, spans)
    # A text the ledger's own passes left whole is scanned as itself (``scan`` may have it).
    for kind, value in (scan if work == text else identifiers.scan)(work):
        found.setdefault((_kind(kind, value), value), None)
    openings = {m.end() for m in _SPEAKER.finditer(work)} if ": " in work else set()
    for match in _PERSON.finditer(work):
        name = match.group(0)
        if name.split()[0] not in _NOT_PEOPLE and match.start() not in openings:
            found.setdefault(("person", name), None)
    return list(found)


def _kind(kind: Kind, value: str) -> str:
    return _CODE_KIND.get(kind, "code")


def build(
    messages: Sequence[Message], parent: Sequence[Entry] = (), scan: Scan = identifiers.scan
) -> list[Entry]:
    """The ledger of a new version: the parent's entries plus the new span's identifiers.

    Args:
        messages: The messages the new version folds in (after the parent's coverage).
        parent: The parent version's ledger.
        scan: How a text is scanned (see :func:`extract`).

    Returns:
        Entries in first-seen order.
    """
    table: dict[tuple[str, str], tuple[list[int], int]] = {
        (e.kind, e.value): (list(e.message_ids), e.count) for e in parent
    }
    contexts = {(e.kind, e.value): e.context for e in parent}
    typed = {(e.kind, e.value) for e in parent if e.typed}
    for message in messages:
        phrases = PER_MESSAGE
        for key in extract(message.text, scan):
            ids, count = table.get(key, ([], 0))
            if not ids and key[0] in ABOUT_KINDS and phrases > 0:
                contexts[key] = phrase(message.text, key[1])
                phrases -= 1
            if message.role == "user":
                typed.add(key)
            ids.append(message.id)
            if len(ids) > MAX_IDS:
                del ids[1]  # keep the first and the newest
            table[key] = (ids, count + 1)
    return [
        Entry(kind, value, tuple(ids), n, contexts.get((kind, value), ""), (kind, value) in typed)
        for (kind, value), (ids, n) in table.items()
    ]


def ranked(entries: Iterable[Entry], pinned: Iterable[int] = ()) -> list[Entry]:
    """Entries most worth sending first: in a pinned message, then typed by the user, then
    most recent, then most frequent."""
    pins = set(pinned)

    def key(entry: Entry) -> tuple[int, int, int, int]:
        in_pin = any(i in pins for i in entry.message_ids)
        return (0 if in_pin else 1, 0 if entry.typed else 1, -entry.last_id, -entry.count)

    return sorted(entries, key=key)


def _entry_text(entry: Entry, rich: bool) -> str:
    """An entry as the ledger lists it: its value, and (``rich``) its newest message and its
    context phrase."""
    if not rich:
        return entry.value
    where = f"#{entry.last_id}" if entry.message_ids else ""
    about = ": ".join(x for x in (where, entry.context) if x)
    return f"{entry.value} ({about})" if about else entry.value


def room(ledger_budget: int, summary_cap: int, summary_tokens: int) -> int:
    """The ledger's budget in a memory block: its own share plus what the summary section
    leaves of its cap (the two travel together; a short summary leaves the room to the exact
    identifiers instead of to nothing).

    Args:
        ledger_budget: The ledger's own budget (its share of the usable window).
        summary_cap: The summary section's budget.
        summary_tokens: The summary section as sent.

    Returns:
        Tokens the ledger may take.
    """
    return ledger_budget + max(0, summary_cap - summary_tokens)


def render(
    entries: Sequence[Entry],
    budget: int,
    counter: TokenCounter,
    pinned: Iterable[int] = (),
    already: str = "",
    keep: bool = True,
) -> tuple[str, list[Entry]]:
    """The ledger section within ``budget`` tokens: the best-ranked entries, listed by kind.

    Args:
        entries: The active version's ledger.
        budget: Tokens the section may take.
        counter: The token counter.
        pinned: Ids of pinned messages (their identifiers rank first).
        already: Text sent next to it (the summary): identifiers it holds are not repeated.
        keep: Keep the answer for the next call with the same inputs (a request build does;
            a retention figure of some other version would only push the build's out).

    Returns:
        ``(section text, entries sent)``; the empty string when nothing fits.
    """
    if budget <= 0 or not entries:
        return "", []
    work = _render if keep else _render.__wrapped__
    text, sent = work(tuple(entries), budget, counter, tuple(sorted(set(pinned))), already)
    return text, list(sent)


@lru_cache(maxsize=16)
def _render(
    entries: tuple[Entry, ...],
    budget: int,
    counter: TokenCounter,
    pinned: tuple[int, ...],
    already: str,
) -> tuple[str, tuple[Entry, ...]]:
    """:func:`render`, kept for the last inputs: every build of a conversation renders the same
    ledger against the same summary until one of them changes (about 20 ms for 600 entries)."""
    if already:
        haystack = normalise_haystack(already)
        entries = tuple(
            e for e in entries if not identifier_present(haystack, e.value, e.kind == "number")
        )
    spent = counter.count(LEDGER_HEADER) + 4 * len(KINDS)
    chosen: list[Entry] = []
    order = ranked(entries, pinned)
    for entry in order:  # first every identifier that fits, bare
        cost = counter.count(entry.value) + 1
        if spent + cost > budget:
            continue
        chosen.append(entry)
        spent += cost
    carried = _carried_paths(chosen)
    if carried:  # a path a chosen line reference spells out (db.py in db.py:120) goes
        gone = {e for e in chosen if e.kind == "path" and e.value in carried}
        chosen = [e for e in chosen if e not in gone]
        spent -= sum(counter.count(e.value) + 1 for e in gone)
        taken = set(chosen) | gone
        for entry in order:  # and its room goes to the next that fit
            cost = counter.count(entry.value) + 1
            if entry in taken or spent + cost > budget:
                continue
            chosen.append(entry)
            spent += cost
    rich: set[Entry] = set()
    for entry in chosen:  # then, best first, what each is about, while there is room
        extra = counter.count(_entry_text(entry, True)) - counter.count(entry.value)
        if extra > 0 and spent + extra <= budget:
            rich.add(entry)
            spent += extra
    text = _section(chosen, rich)
    if rich and counter.count(text) > budget:
        rich.clear()
        text = _section(chosen, rich)
    if chosen and counter.count(text) > budget:  # the best that fit: a binary search
        chosen = chosen[: _longest_fitting(chosen, rich, counter, budget)]
        text = _section(chosen, rich)
    return (text if chosen else ""), tuple(chosen)


def _longest_fitting(
    chosen: Sequence[Entry], rich: set[Entry], counter: TokenCounter, budget: int
) -> int:
    """The length of the longest prefix of ``chosen`` whose section fits ``budget`` (the whole
    does not; the empty one does): O(log n) sections counted, not one per entry dropped (the
    retention of a 3,000-message backlog's version took 12 s dropping ~600 entries one by one)."""
    fits, too_long = 0, len(chosen)
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if counter.count(_section(chosen[:middle], rich)) <= budget:
            fits = middle
        else:
            too_long = middle
    return fits


_FILE_LINE = re.compile(r"(.+?)(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)")


def _carried_paths(chosen: Sequence[Entry]) -> set[str]:
    """Paths that the chosen line references (``src/app/db.py:120``) hold whole."""
    paths: set[str] = set()
    for entry in chosen:
        if entry.kind == "line":
            match = _FILE_LINE.fullmatch(entry.value)
            if match:
                paths.add(match.group(1))
    return paths


def _section(chosen: Sequence[Entry], rich: set[Entry]) -> str:
    if not chosen:
        return ""
    lines = [LEDGER_HEADER]
    for kind in KINDS:
        items = [
            _entry_text(e, e in rich)
            for e in sorted(chosen, key=lambda e: e.last_id)
            if e.kind == kind
        ]
        if items:
            lines.append(f"{kind}: " + "; ".join(items))
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Retention:
    """How many identifiers of each kind a text kept, and which it lost."""

    kept: dict[str, int]
    total: dict[str, int]
    missing: list[tuple[str, str]]

    @property
    def rate(self) -> float:
        """Share kept over every kind (1.0 when there is nothing to keep)."""
        total = sum(self.total.values())
        return sum(self.kept.values()) / total if total else 1.0

    def to_json(self) -> dict[str, Any]:
        """``{"by_kind": {kind: {"kept", "total"}}, "kept", "total", "not_kept": [...]}``."""
        return {
            "kept": sum(self.kept.values()),
            "total": sum(self.total.values()),
            "by_kind": {
                k: {"kept": self.kept.get(k, 0), "total": self.total[k]}
                for k in KINDS
                if self.total.get(k)
            },
            "not_kept": [{"kind": k, "value": v} for k, v in self.missing],
        }


def retention(
    source_texts: Iterable[str], kept_text: str, scan: Scan = identifiers.scan
) -> Retention:
    """Per-kind retention of the sources' identifiers in ``kept_text`` (summary + ledger).

    Presence is judged as :func:`tui_chat.core.identifiers.retention` judges it (whole word,
    case-insensitive, numbers by value).

    Args:
        source_texts: Texts of the covered messages.
        kept_text: What the memory block carries for them.
        scan: How a text is scanned (see :func:`extract`).

    Returns:
        Kept and total counts per kind, and the identifiers not kept.
    """
    wanted: dict[tuple[str, str], None] = {}
    for text in source_texts:
        for key in extract(text, scan):
            wanted.setdefault(key, None)
    return _judge(wanted, kept_text)


def ledger_retention(entries: Iterable[Entry], kept_text: str) -> Retention:
    """:func:`retention` of the messages a complete ledger was built from, without them.

    A ledger made by :func:`build` over every covered message (each version's parent ledger
    plus its span) holds exactly the identifiers :func:`retention` would extract from those
    messages, in the same first-seen order; so this gives the same answer reading only the
    ledger.

    Args:
        entries: A complete ledger.
        kept_text: What the memory block carries for its messages.

    Returns:
        Kept and total counts per kind, and the identifiers not kept.
    """
    return _judge(dict.fromkeys((e.kind, e.value) for e in entries), kept_text)


def _judge(wanted: Iterable[tuple[str, str]], kept_text: str) -> Retention:
    """Which of the ``wanted`` ``(kind, value)`` identifiers ``kept_text`` holds."""
    haystack = normalise_haystack(kept_text)
    kept: dict[str, int] = {}
    total: dict[str, int] = {}
    missing: list[tuple[str, str]] = []
    for kind, value in wanted:
        total[kind] = total.get(kind, 0) + 1
        if identifier_present(haystack, value, kind == "number"):
            kept[kind] = kept.get(kind, 0) + 1
        else:
            missing.append((kind, value))
    return Retention(kept, total, missing)


def to_json(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Serialise a ledger for the summary row."""
    return [e.to_json() for e in entries]


def from_json(data: Any) -> list[Entry]:
    """Read a ledger written by :func:`to_json` (anything else reads as empty)."""
    if not isinstance(data, list):
        return []
    out: list[Entry] = []
    for item in data:
        try:
            out.append(Entry.from_json(item))
        except (KeyError, TypeError, ValueError):
            continue
    return out
