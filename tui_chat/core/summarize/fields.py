"""Structured memory (seed 004): decisions, open files and the current task.

They are extracted deterministically from the new turns, merged with the parent's fields and
appended to the summary text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from tui_chat.core.blocks import TOOL_USE_TYPES, message_body, message_parts
from tui_chat.core.identifiers import extract_identifiers
from tui_chat.core.models import Message
from tui_chat.core.summarize.text import sentences, trim

MAX_DECISIONS = 12
"""Decisions kept in the structured fields (the newest win)."""

MAX_OPEN_FILES = 12
"""Open files kept in the structured fields (most recently mentioned last)."""

FIELD_ITEM_CHARS = 200
"""Longest decision or current-task text kept in the fields."""

_FIELD_LABELS = ("Decisions:", "Open files:", "Current task:")
_FIELDS_START = re.compile(r"\n\n(?=(?:Decisions|Open files|Current task):)")
_FILE_KEYS = ("path", "file_path", "filename", "file", "filepath", "target_file")

DECISION = re.compile(
    r"\b(?:decid(?:e|ed|ing)|decision|agreed|we(?:'ll| will) (?:use|go with|keep|switch)|"
    r"let's (?:use|go with|keep|switch)|going with|chose|settled on|opted for|instead of|"
    r"switch(?:ed)? to)\b|결정|하기로|기로 했|채택|확정|합의|선택했",
    re.IGNORECASE,
)
"""A sentence that states a decision (English or Korean)."""

DECISION_STEMS = re.compile(
    r"dec|agreed|we'll|we w|let'|ng w|cho|ettled|opted|tead of|tch"
    r"|결정|하기로|기로 했|채택|확정|합의|선택했"
)
"""A piece of every :data:`DECISION` alternative, to look for in the text's ``lower()``: no
match there, no decision. The pieces hold no ``i`` or ``s``, the two letters that a
case-insensitive pattern also matches to a character (``ı``, ``ſ``) that ``lower()`` leaves
as it is; for any other letter the characters the pattern takes lower to that letter."""


def _short(text: str, limit: int = FIELD_ITEM_CHARS) -> str:
    return trim(" ".join(text.split()), limit)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _is_file(value: str) -> bool:
    if "://" in value or value.startswith("-"):
        return False
    base = value.rstrip("/").rsplit("/", 1)[-1]
    return "/" in value or bool(re.search(r"\.[A-Za-z][\w]{0,9}$", base))


def extract_fields(messages: Sequence[Message], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Extract seed 004's structured memory and merge it with the parent's.

    ``decisions`` are sentences that state a decision (English or Korean keywords);
    ``open_files`` are file paths from tool-call inputs and message text, most recent last;
    ``current_task`` is the first sentence of the newest user request.

    Args:
        messages: The messages folded into the new version.
        previous: The parent version's fields (may be empty or ``None``).

    Returns:
        ``{"decisions": [...], "open_files": [...], "current_task": "..."}``.
    """
    previous = previous or {}
    decisions = [str(d) for d in previous.get("decisions") or []]
    files: dict[str, None] = dict.fromkeys(str(f) for f in previous.get("open_files") or [])
    task = str(previous.get("current_task") or "")
    for message in messages:
        for block in message.content:
            if block.get("type") in TOOL_USE_TYPES:
                args = block.get("input")
                if isinstance(args, dict):
                    for key in _FILE_KEYS:
                        value = args.get(key)
                        if isinstance(value, str) and value.strip():
                            files.pop(value.strip(), None)
                            files[value.strip()] = None
        for kind, text in message_parts(message):
            if kind == "tool_use":
                continue
            for sentence in sentences(text):
                if kind == "text" and DECISION.search(sentence):
                    decisions.append(_short(sentence))
            for ident in sorted(extract_identifiers(text), key=text.find):
                if _is_file(ident):
                    files.pop(ident, None)
                    files[ident] = None
        if message.role == "user" and not message.has_tool_result:
            request = next(iter(sentences(message_body(message))), "")
            if request:
                task = _short(request)
    return {
        "decisions": _dedupe(decisions)[-MAX_DECISIONS:],
        "open_files": list(files)[-MAX_OPEN_FILES:],
        "current_task": task,
    }


def fields_text(fields: dict[str, Any]) -> str:
    """Render structured fields as the block appended to the summary text.

    Args:
        fields: As returned by :func:`extract_fields`.

    Returns:
        The block, or ``""`` when every field is empty.
    """
    lines: list[str] = []
    decisions = list(fields.get("decisions") or [])
    if decisions:
        lines.append("Decisions:")
        lines.extend(f"- {d}" for d in decisions)
    files = list(fields.get("open_files") or [])
    if files:
        lines.append("Open files: " + ", ".join(files))
    task = str(fields.get("current_task") or "")
    if task:
        lines.append(f"Current task: {task}")
    return "\n".join(lines)


def split_fields(text: str) -> str:
    """Return the summary text without its appended fields block.

    Args:
        text: A version's text.

    Returns:
        The brief (or joined segments) alone.
    """
    if text.startswith(_FIELD_LABELS):
        return ""
    return _FIELDS_START.split(text, maxsplit=1)[0]


def with_fields(body: str, fields: dict[str, Any]) -> str:
    """Append the fields block (:func:`fields_text`) to a summary body.

    Args:
        body: The brief or the joined segments (may be empty).
        fields: The structured fields.

    Returns:
        The version's text.
    """
    block = fields_text(fields)
    if not block:
        return body
    return f"{body}\n\n{block}" if body else block
