"""Summarisation shared by the Claude summarizer and the offline one.

A :class:`SummaryInput` describes one new version: the policy, the parent version, and the
whole turns it folds in beyond the parent's coverage. Both summarizers return the complete new
version content (:class:`SummaryOutput`): its text, its segments and its structured fields.

Strategies (DESIGN.md section 4):

- ``running`` (seeds 000, 002, 004): the new text summarises the parent's text plus the new
  turns, with seed 002's structured prompt, at most ``summary_max_tokens`` tokens and, when set,
  ``summary_max_chars`` characters (seed 004: 700, or 400 when the conversation is mostly
  Korean).
- ``segments`` (seeds 001, 003): the parent's segments plus one new segment for the new block,
  sized ``original_chars × compression_rate`` (seed 003 levels pick the rate when
  ``importance`` is on). When the segments outgrow ``summary_max_tokens`` the oldest are merged
  into one higher-level segment.

With ``structured_fields`` (seed 004) decisions, open files and the current task are extracted
deterministically from the new turns, merged with the parent's fields and appended to the text.

A failed summary raises :class:`SummaryError`; an error message is never turned into summary
text. This module is pure: the model is reached only through the :data:`Complete` callable.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import math
import re
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_chat.core.identifiers import extract_identifiers
from tui_chat.core.models import Message, Segment, Summary, Usage
from tui_chat.core.policy import compaction_level
from tui_chat.core.presets import Policy
from tui_chat.core.tokens import get_counter

MARKER = "tui-chat summarizer"
"""Literal text in every summary system prompt (servers and tests route on it)."""

KOREAN_CHAR_SHARE = 4 / 7
"""Seed 004: the running brief is 400 characters in Korean where English gets 700."""

MIN_SEGMENT_CHARS = 40
"""Smallest target for one segment, so a two-line block still says something."""

ROLLUP_RATE = 0.5
"""A roll-up merge aims at this share of the merged segments' characters."""

MAX_ROLLUPS = 8
"""Upper bound on merges for one version (each merge removes at least one segment)."""

MAX_PROMPT_CHARS = 400_000
"""Messages are cut so that one summary prompt stays within the summarizer's window."""

MAX_DECISIONS = 12
"""Decisions kept in the structured fields (the newest win)."""

MAX_OPEN_FILES = 12
"""Open files kept in the structured fields (most recently mentioned last)."""

FIELD_ITEM_CHARS = 200
"""Longest decision or current-task text kept in the fields."""

Complete = Callable[[str, str, int], Awaitable[tuple[str, Usage | None]]]
"""``(system, user, max_tokens) -> (reply text, usage)``: one call to a summarizing model."""


class SummaryError(Exception):
    """A summary could not be produced. Its message is recorded as the version's error."""


@dataclass(frozen=True)
class SummaryInput:
    """Everything one new summary version is made from."""

    policy: Policy
    """The conversation's policy (strategy, targets, fields, limits)."""
    previous: Summary | None
    """The parent version (its text, segments and fields), ``None`` for the first."""
    messages: Sequence[Message]
    """The messages this version folds in beyond the parent's coverage (whole turns)."""
    instructions: str | None = None
    """User instructions given on regenerate ("keep every SQL statement")."""
    pinned_ids: frozenset[int] = frozenset()
    """Messages sent verbatim elsewhere (anchors); the summary need not repeat them."""
    used_ratio: float = 0.0
    """The request's share of the usable window, for seed 003 levels."""


@dataclass(frozen=True)
class SummaryOutput:
    """The complete content of a new summary version."""

    text: str
    """What the memory block carries (segments joined, fields appended)."""
    segments: tuple[Segment, ...]
    """The segments in turn order (empty for the ``running`` strategy)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Structured memory (``decisions``, ``open_files``, ``current_task``) when enabled."""
    summarizer: str = ""
    """The model id, or ``extractive``."""
    usage: Usage | None = None
    """Usage summed over every model call, ``None`` when nothing was reported."""


# --------------------------------------------------------------------------- message text


def _inner_text(block: dict[str, Any]) -> str:
    """Text of one block nested in a tool result (text, a search hit, or its type)."""
    if block.get("type") == "text":
        return str(block.get("text") or "")
    if block.get("url"):
        return f"{block.get('title') or ''} ({block['url']})".strip()
    return f"[{block.get('type')}]"


def _block_text(block: dict[str, Any]) -> tuple[str, str]:
    """Return ``(kind, text)`` for one content block; kind is text, tool_use or tool_result."""
    kind = str(block.get("type", ""))
    if kind == "text":
        return "text", str(block.get("text") or "")
    if kind in ("tool_use", "server_tool_use"):
        args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return "tool_use", f"[tool call {block.get('name', '?')}] {args}"
    if kind == "tool_result" or kind.endswith("_tool_result"):
        inner = block.get("content")
        if isinstance(inner, list):
            body = "\n".join(_inner_text(b) for b in inner if isinstance(b, dict))
        else:
            body = "" if inner is None else str(inner)
        label = "tool error" if block.get("is_error") else "tool result"
        return "tool_result", f"[{label}] {body}".rstrip()
    if kind in ("thinking", "redacted_thinking"):
        return "thinking", ""
    return "other", f"[{kind}]" if kind else ""


def message_parts(message: Message) -> list[tuple[str, str]]:
    """Split a message into ``(kind, text)`` parts (thinking left out).

    Args:
        message: A stored message.

    Returns:
        Its text, tool calls and tool results in order; the plain ``text`` when the content
        blocks carry nothing readable.
    """
    parts = [_block_text(b) for b in message.content]
    kept = [(kind, text) for kind, text in parts if kind != "thinking" and text.strip()]
    if not kept and message.text.strip():
        return [("text", message.text)]
    return kept


def message_body(message: Message) -> str:
    """Return the readable text of a message: its text, tool calls and tool results.

    Args:
        message: A stored message.

    Returns:
        The parts joined by newlines.
    """
    return "\n".join(text for _, text in message_parts(message))


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit].rstrip() + " …[cut]"


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


def _turn_range(messages: Sequence[Message]) -> tuple[int, int]:
    turns = [m.turn for m in messages]
    return (min(turns), max(turns)) if turns else (0, 0)


def _turns_label(turns: tuple[int, int]) -> str:
    first, last = turns
    return f"turn {first}" if first == last else f"turns {first}-{last}"


def segments_text(segments: Iterable[Segment]) -> str:
    """Join segments in order, each headed by its turn range (seed 001's ``[1-3턴] …``).

    Args:
        segments: Segments in turn order.

    Returns:
        The text the memory block carries for them.
    """
    return "\n\n".join(f"[{_turns_label(s.turns)}] {s.text}" for s in segments)


# --------------------------------------------------------------------------- fields (seed 004)

_FIELD_LABELS = ("Decisions:", "Open files:", "Current task:")
_FIELDS_START = re.compile(r"\n\n(?=(?:Decisions|Open files|Current task):)")
_DECISION = re.compile(
    r"\b(?:decid(?:e|ed|ing)|decision|agreed|we(?:'ll| will) (?:use|go with|keep|switch)|"
    r"let's (?:use|go with|keep|switch)|going with|chose|settled on|opted for|instead of|"
    r"switch(?:ed)? to)\b|결정|하기로|기로 했|채택|확정|합의|선택했",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:i prefer|prefer|always|never|don't|do not|please (?:use|keep|avoid)|make sure|"
    r"must(?:n't| not)?)\b|선호|항상|절대|하지 ?마|말아|반드시|꼭 ",
    re.IGNORECASE,
)
_FILE_KEYS = ("path", "file_path", "filename", "file", "filepath", "target_file")


_TWO_ALNUM = re.compile(r"[^\W_].*?[^\W_]", re.DOTALL)


def _sentences(text: str) -> list[str]:
    """Split text into sentences: by line, then after ``.!?`` followed by a space."""
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
        for piece in re.split(r"(?<=[.!?。…])\s+(?=\S)", line):
            piece = piece.strip().lstrip("-*•> ").strip()
            if _TWO_ALNUM.search(piece):
                out.append(piece)
    return out


def _short(text: str, limit: int = FIELD_ITEM_CHARS) -> str:
    return _trim(" ".join(text.split()), limit)


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
            if block.get("type") in ("tool_use", "server_tool_use"):
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
            for sentence in _sentences(text):
                if kind == "text" and _DECISION.search(sentence):
                    decisions.append(_short(sentence))
            for ident in sorted(extract_identifiers(text), key=text.find):
                if _is_file(ident):
                    files.pop(ident, None)
                    files[ident] = None
        if message.role == "user" and not message.has_tool_result:
            request = next(iter(_sentences(message_body(message))), "")
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


def _with_fields(body: str, fields: dict[str, Any]) -> str:
    block = fields_text(fields)
    if not block:
        return body
    return f"{body}\n\n{block}" if body else block


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class _Targets:
    max_chars: int | None
    """Hard cap on the running brief's characters."""
    max_tokens: int
    """Token budget of the running brief, or of all segments together."""
    rate: float
    """Compression rate for a new segment (and the offline running extract)."""
    level: str | None
    """Seed 003 level name when importance picks the rate."""


def _targets(request: SummaryInput) -> _Targets:
    policy = request.policy
    level: str | None = None
    rate = policy.compression_rate
    if policy.importance:
        level, rate = compaction_level(request.used_ratio)
    cap = policy.summary_max_chars
    if cap is not None:
        sample = "\n".join(message_body(m) for m in request.messages)
        if request.previous is not None:
            sample = split_fields(request.previous.text) + "\n" + sample
        if is_mostly_korean(sample):
            cap = max(1, round(cap * KOREAN_CHAR_SHARE))
    return _Targets(
        max_chars=cap, max_tokens=max(1, policy.summary_max_tokens), rate=rate, level=level
    )


def _chars_for_tokens(text: str, tokens: int) -> int:
    """How many characters of text like ``text`` make ``tokens`` tokens."""
    counted = get_counter().count(text)
    per_token = len(text) / counted if counted else 4.0
    return int(tokens * per_token)


def _segment_target(messages: Sequence[Message], rate: float, max_tokens: int) -> tuple[int, int]:
    """Return ``(original_chars, target_chars)`` of a new segment (seed 001's formula, capped
    by the segments' token budget)."""
    bodies = [message_body(m) for m in messages]
    original = sum(len(b) for b in bodies)
    cap = _chars_for_tokens("\n".join(bodies), max_tokens)
    return original, max(MIN_SEGMENT_CHARS, min(int(original * rate), cap))


def _trim(text: str, limit: int) -> str:
    """Cut text to at most ``limit`` characters, at a sentence end or a space when possible."""
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


# --------------------------------------------------------------------------- prompts

_SYSTEM = (
    f"You are the {MARKER}: you compress the older part of a conversation between a user and "
    "an AI assistant into a summary that replaces those messages in the assistant's context. "
    "The assistant continues the conversation from your summary alone, so keep every fact it "
    "will need, copy identifiers exactly, and leave out pleasantries and process. Write in the "
    "language of the conversation. Reply with the summary only, wrapped in <summary></summary> "
    "tags."
)

_CONTENT_GUIDE = """\
Cover, under these headings (leave out a heading with nothing under it):
1. Task overview: the user's goal and requests, constraints and requirements.
2. Work completed: files read, created or modified (exact paths), commands run, key results.
3. Important context: decisions made and the reasons for them; exact identifiers (file paths, \
function, class and variable names, numbers, URLs, versions, quoted strings); errors met and how \
they were resolved; the user's preferences and style requirements.
4. Current state: what happens next, open questions, blockers.
Copy every identifier exactly as written; never round a number or paraphrase a path, name or URL.
Instructions the user gave early stay in force until the user changes them: keep them."""

_SEGMENT_GUIDE = """\
Keep the user's requests and preferences, decisions and their reasons, open questions, and \
every exact identifier (file paths, names, numbers, URLs, versions, quoted strings). Write \
plain prose or short bullets, no headings."""


def _render_messages(messages: Sequence[Message], pinned: frozenset[int], limit: int | None) -> str:
    if limit is None:
        total = sum(len(message_body(m)) for m in messages)
        if total > MAX_PROMPT_CHARS:
            limit = max(500, MAX_PROMPT_CHARS // max(1, len(messages)))
    lines: list[str] = []
    for message in messages:
        role = "USER" if message.role == "user" else "ASSISTANT"
        mark = " (pinned)" if message.id in pinned else ""
        body = _cut(message_body(message), limit)
        lines.append(f"[turn {message.turn}] {role}{mark}: {body}")
    return "\n\n".join(lines)


def _length_line(request: SummaryInput, targets: _Targets) -> str:
    if request.policy.strategy == "segments":
        original, target = _segment_target(request.messages, targets.rate, targets.max_tokens)
        level = f", {targets.level} level" if targets.level else ""
        return (
            f"Length: about {target:,} characters (the original is {original:,} characters, "
            f"compression rate {targets.rate:g}{level}), at most {targets.max_tokens:,} tokens."
        )
    words = max(20, int(targets.max_tokens * 0.75))
    parts = [f"at most {targets.max_tokens:,} tokens (about {words:,} words)"]
    if targets.max_chars is not None:
        parts.append(f"and at most {targets.max_chars:,} characters")
    return "Length: " + " ".join(parts) + "; shorter is fine when less is needed."


def _fields_note(previous: Summary | None) -> str:
    fields = previous.fields if previous is not None else {}
    known = fields_text(fields)
    note = (
        "Decisions, open files and the current task are tracked separately next to the "
        "summary: mention them only where needed to make sense of the rest."
    )
    return f"{note}\nTracked so far:\n{known}" if known else note


def build_summary_prompt(
    request: SummaryInput, *, merge: Sequence[Segment] | None = None
) -> tuple[str, str]:
    """Build the ``(system, user)`` prompts of one summary call.

    Args:
        request: The version being made.
        merge: Segments to merge into one higher-level segment (roll-up) instead of
            summarising the request's messages.

    Returns:
        The system prompt (always containing :data:`MARKER`) and the user prompt.
    """
    policy = request.policy
    targets = _targets(request)
    sections: list[str] = []
    if merge is not None:
        merged = (merge[0].turns[0], merge[-1].turns[1]) if merge else (0, 0)
        chars = sum(s.summary_chars for s in merge)
        target = _rollup_target(merge, targets.max_tokens)
        sections.append(
            f"Merge these consecutive summaries of {_turns_label(merged)} into one higher-level "
            "summary that keeps what the rest of the conversation may still need."
        )
        sections.append(f"<summaries>\n{segments_text(merge)}\n</summaries>")
        sections.append(_SEGMENT_GUIDE)
        sections.append(
            f"Length: about {target:,} characters (the summaries are {chars:,}), at most "
            f"{targets.max_tokens:,} tokens."
        )
    elif policy.strategy == "segments":
        block = _turn_range(request.messages)
        earlier = list(request.previous.segments) if request.previous is not None else []
        if earlier:
            sections.append(
                "Earlier summaries, for context only (do not repeat them):\n"
                f"<earlier_summaries>\n{segments_text(earlier)}\n</earlier_summaries>"
            )
        sections.append(
            f"Summarize {_turns_label(block)} of the conversation:\n<messages>\n"
            f"{_render_messages(request.messages, request.pinned_ids, policy.prompt_char_limit)}"
            "\n</messages>"
        )
        sections.append(_SEGMENT_GUIDE)
        sections.append(_length_line(request, targets))
    else:
        previous = split_fields(request.previous.text) if request.previous is not None else ""
        rendered = _render_messages(request.messages, request.pinned_ids, policy.prompt_char_limit)
        if previous.strip():
            sections.append(
                f"Previous summary:\n<previous_summary>\n{previous}\n</previous_summary>"
            )
            sections.append(
                f"New messages since the previous summary:\n<messages>\n{rendered}\n</messages>"
            )
            sections.append(
                "Write one updated summary that merges the previous summary with the new "
                "messages; drop only what the new messages made obsolete."
            )
        else:
            sections.append(f"Conversation:\n<messages>\n{rendered}\n</messages>")
            sections.append("Summarize the conversation so far.")
        sections.append(_CONTENT_GUIDE)
        sections.append(_length_line(request, targets))
    if merge is None and request.pinned_ids:
        sections.append(
            "Messages marked (pinned) are kept verbatim elsewhere in the assistant's context: "
            "do not repeat their content; refer to them briefly if needed."
        )
    if policy.structured_fields and merge is None:
        sections.append(_fields_note(request.previous))
    if request.instructions and request.instructions.strip():
        sections.append(
            "Instructions from the user for this summary (they take precedence):\n"
            f"{request.instructions.strip()}"
        )
    sections.append("Wrap the whole summary in <summary></summary> tags.")
    return _SYSTEM, "\n\n".join(sections)


# --------------------------------------------------------------------------- extraction

_TAGGED = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
_OPEN_TAG = re.compile(r"<summary>", re.IGNORECASE)
_ERROR_START = re.compile(
    r"^\W*(?:"
    r"(?:an?\s+)?error\s+(?:generating|creating|while|occurred|during|summari[sz]ing)"
    r"|error\s*[:\-(]"
    r"|(?:api|http|request|server|internal)\s+error"
    r"|(?:failed|unable)\s+to\s+(?:generate|create|summari[sz]e|produce|complete)"
    r"|summary\s+(?:generation\s+)?failed"
    r"|i(?:'m|\s+am)\s+(?:sorry|afraid|unable|not able)"
    r"|sorry,"
    r"|i\s+(?:can(?:'|no)?t|cannot|won't|will not)\s+(?:help|assist|summari[sz]e|comply|"
    r"provide|do\s+that|create|produce|fulfil)"
    r"|as\s+an\s+ai\b"
    r"|죄송|요약(?:을|를)?\s*(?:생성|작성)할\s*수\s*없|(?:오류|에러)가\s*발생|요약\s*(?:생성\s*)?실패"
    r")",
    re.IGNORECASE,
)
_ERROR_ANYWHERE = re.compile(
    r"\"type\"\s*:\s*\"error\"|\b(?:overloaded_error|rate_limit_error|invalid_request_error|"
    r"authentication_error|permission_error|api_error|not_found_error|request_too_large)\b"
)


def extract_summary(reply: str) -> str:
    """Take the summary out of a model reply (seed 002's ``<summary>`` tags).

    The first non-empty tagged block wins; a reply cut off after ``<summary>`` keeps what
    follows the tag; a reply without tags is used whole.

    Args:
        reply: The model's reply text.

    Returns:
        The summary text, stripped.

    Raises:
        SummaryError: when the summary is empty or looks like an error message or a refusal
            ("Error generating summary…", "I'm sorry, I can't…").
    """
    body = ""
    for match in _TAGGED.finditer(reply):
        if match.group(1).strip():
            body = match.group(1)
            break
    else:
        opened = _OPEN_TAG.search(reply)
        body = reply[opened.end() :] if opened else reply
        body = re.sub(r"</?summary>", "", body, flags=re.IGNORECASE)
    body = body.strip()
    if not body:
        raise SummaryError("the summarizer returned an empty summary")
    if _ERROR_START.search(body[:300]) or _ERROR_ANYWHERE.search(body[:1000]):
        first_line = body.splitlines()[0][:160]
        raise SummaryError(f"the summarizer returned an error instead of a summary: {first_line}")
    return body


# --------------------------------------------------------------------------- shared assembly


def _add_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return total
    if total is None:
        return more
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        cache_creation_input_tokens=total.cache_creation_input_tokens
        + more.cache_creation_input_tokens,
        cache_read_input_tokens=total.cache_read_input_tokens + more.cache_read_input_tokens,
    )


def _parent_segments(request: SummaryInput) -> list[Segment]:
    """The parent's segments; a parent made with ``running`` becomes one level-1 segment."""
    previous = request.previous
    if previous is None:
        return []
    if previous.segments:
        return list(previous.segments)
    brief = split_fields(previous.text).strip()
    if not brief:
        return []
    first_new = _turn_range(request.messages)[0]
    last = max(1, first_new - 1)
    return [
        Segment(
            turns=(1, last),
            text=brief,
            original_chars=max(len(brief), previous.source_tokens * 4),
            summary_chars=len(brief),
            compression_rate=1.0,
            level=1,
        )
    ]


def segments_tokens(segments: Sequence[Segment]) -> int:
    """Estimate the tokens the segments take in the memory block.

    Args:
        segments: Segments in order.

    Returns:
        Tokens of :func:`segments_text` of them.
    """
    return get_counter().count(segments_text(segments))


RollUp = Generator[list[Segment], str, list[Segment]]
"""Yields the oldest segments to merge, receives the merged text, returns the final list."""


def _roll_up(segments: list[Segment], budget: int) -> RollUp:
    """Merge the oldest segments into higher-level ones until they fit ``budget`` tokens.

    The oldest half (at least two) is merged each round; a lone segment over budget is
    condensed into a higher level by itself. Stops when a merge makes no progress.
    """
    for _ in range(MAX_ROLLUPS):
        if not segments or segments_tokens(segments) <= budget:
            break
        count = 1 if len(segments) == 1 else max(2, math.ceil(len(segments) / 2))
        oldest, rest = segments[:count], segments[count:]
        text = (yield oldest).strip()
        if not text or len(text) >= sum(s.summary_chars for s in oldest):
            break  # no progress: keep what we have rather than loop
        original = sum(s.original_chars for s in oldest)
        merged = Segment(
            turns=(oldest[0].turns[0], oldest[-1].turns[1]),
            text=text,
            original_chars=original,
            summary_chars=len(text),
            compression_rate=round(len(text) / original, 3) if original else 0.0,
            level=max(s.level for s in oldest) + 1,
        )
        segments = [merged, *rest]
    return segments


def _rollup_target(segments: Sequence[Segment], budget: int) -> int:
    """Characters a merge aims at: half the merged text, and at most half the token budget."""
    half = int(sum(s.summary_chars for s in segments) * ROLLUP_RATE)
    cap = _chars_for_tokens("\n".join(s.text for s in segments), max(1, budget // 2))
    return max(MIN_SEGMENT_CHARS, min(half, cap))


def _new_segment(messages: Sequence[Message], text: str, rate: float) -> Segment:
    original = sum(len(message_body(m)) for m in messages)
    return Segment(
        turns=_turn_range(messages),
        text=text,
        original_chars=original,
        summary_chars=len(text),
        compression_rate=rate,
        level=0,
    )


def _check_request(request: SummaryInput) -> None:
    if not request.messages:
        raise SummaryError("no messages to summarize")


def _finish(
    request: SummaryInput,
    body: str,
    segments: Sequence[Segment],
    summarizer: str,
    usage: Usage | None,
) -> SummaryOutput:
    fields: dict[str, Any] = {}
    if request.policy.structured_fields:
        previous = request.previous.fields if request.previous is not None else None
        fields = extract_fields(request.messages, previous)
    text = _with_fields(body.strip(), fields)
    if not text.strip():
        raise SummaryError("the summary is empty")
    return SummaryOutput(
        text=text, segments=tuple(segments), fields=fields, summarizer=summarizer, usage=usage
    )


# --------------------------------------------------------------------------- Claude path


class ModelSummarizer:
    """Summarizes through a language model reached by a :data:`Complete` callable.

    Args:
        complete: Makes one model call (the ``llm`` layer binds the client and model).
        name: The model id recorded as the version's summarizer.
    """

    def __init__(self, complete: Complete, name: str) -> None:
        self._complete = complete
        self.name = name

    async def _call(
        self, request: SummaryInput, system: str, user: str
    ) -> tuple[str, Usage | None]:
        policy = request.policy
        try:
            async with asyncio.timeout(policy.summarizer_timeout):
                reply, usage = await self._complete(system, user, policy.summarizer_max_tokens)
        except SummaryError:
            raise
        except TimeoutError as exc:
            raise SummaryError(
                f"the summary call timed out after {policy.summarizer_timeout:g} s"
            ) from exc
        except Exception as exc:
            raise SummaryError(f"the summary call failed: {exc}") from exc
        return extract_summary(reply), usage

    async def summarize(self, request: SummaryInput) -> SummaryOutput:
        """Make the new version's content with the model.

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields, with the summed usage.

        Raises:
            SummaryError: when a call fails, times out, or returns an empty or error-looking
                reply.
        """
        _check_request(request)
        targets = _targets(request)
        system, user = build_summary_prompt(request)
        text, usage = await self._call(request, system, user)
        if request.policy.strategy == "running":
            if targets.max_chars is not None:
                text = _trim(text, targets.max_chars)
            return _finish(request, text, (), self.name, usage)

        segments = [*_parent_segments(request), _new_segment(request.messages, text, targets.rate)]
        plan = _roll_up(segments, targets.max_tokens)
        try:
            oldest = next(plan)
            while True:
                m_system, m_user = build_summary_prompt(request, merge=oldest)
                merged, more = await self._call(request, m_system, m_user)
                usage = _add_usage(usage, more)
                oldest = plan.send(merged)
        except StopIteration as done:
            segments = done.value
        return _finish(request, segments_text(segments), segments, self.name, usage)


# --------------------------------------------------------------------------- offline path

WEIGHT_PINNED = 1.0
WEIGHT_DECISION = 0.8
WEIGHT_PREVIOUS = 0.75
WEIGHT_TOOL_RESULT = 0.7
WEIGHT_KEYWORD = 0.5
WEIGHT_BASE = 0.2
"""Seed 003 importance weights (pinned, decision, tool result, keyword) and our two extras:
sentences of the parent summary (already distilled, and where early instructions live), and
anything else."""

IDENTIFIER_BONUS = 0.1
"""Added per identifier a sentence would bring that the summary does not hold yet (max 0.3)."""

SENTENCE_MAX_CHARS = 300
"""A longer sentence is cut to this length in an offline summary."""

_STOPWORDS = frozenset(
    {
        *("the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "every", "all"),
        *("any", "keep", "keeping", "please", "make", "sure", "that", "this", "these", "those"),
        *("is", "are", "be", "it", "its", "summary", "summarize", "모든", "그리고", "유지", "요약"),
    }
)

Source = Literal["summary", "user", "assistant", "tool"]


@dataclass(frozen=True)
class _Sentence:
    position: int
    source: Source
    text: str
    weight: float
    """Importance weight (seed 003)."""
    bonus: float
    """Instruction words, the opening request, recency."""
    ids: frozenset[str]
    """Identifiers (case-folded) the sentence carries."""
    keyword_only: bool
    """The weight is the keyword level only because of identifiers."""

    def gain(self, covered: set[str]) -> float:
        """Score given the identifiers already kept: repeats earn nothing (redundancy)."""
        fresh = len(self.ids - covered)
        weight = WEIGHT_BASE if self.keyword_only and not fresh else self.weight
        return weight + min(3 * IDENTIFIER_BONUS, IDENTIFIER_BONUS * fresh) + self.bonus


def _instruction_terms(instructions: str | None) -> set[str]:
    if not instructions:
        return set()
    words = re.findall(r"[\w.-]{3,}", instructions.casefold())
    return {w for w in words if w not in _STOPWORDS}


def _sentence(
    position: int,
    source: Source,
    text: str,
    kind: str,
    *,
    pinned: bool,
    terms: set[str],
    bonus: float,
) -> _Sentence:
    text = _trim(text, SENTENCE_MAX_CHARS)
    ids = frozenset(i.casefold() for i in extract_identifiers(text))
    folded = text.casefold()
    matched = bool(terms) and any(term in folded for term in terms)
    keyword_only = False
    if pinned:
        weight = WEIGHT_PINNED
    elif _DECISION.search(text) or _PREFERENCE.search(text):
        weight = WEIGHT_DECISION
    elif source == "summary":
        weight = WEIGHT_PREVIOUS
    elif kind == "tool_result":
        weight = WEIGHT_TOOL_RESULT
    elif matched or text.rstrip().endswith("?"):
        weight = WEIGHT_KEYWORD
    elif ids:
        weight, keyword_only = WEIGHT_KEYWORD, True
    else:
        weight = WEIGHT_BASE
    if matched:
        bonus += 0.3
    return _Sentence(position, source, text, weight, bonus, ids, keyword_only)


def _candidates(request: SummaryInput, previous_text: str) -> list[_Sentence]:
    terms = _instruction_terms(request.instructions)
    # (source, text, block kind, pinned, opening request)
    raw: list[tuple[Source, str, str, bool, bool]] = [
        ("summary", s, "text", False, False) for s in _sentences(previous_text)
    ]
    first_user = True
    for message in request.messages:
        pinned = message.id in request.pinned_ids
        for kind, text in message_parts(message):
            source: Source = "tool" if kind in ("tool_use", "tool_result") else message.role
            opening = first_user and source == "user"
            raw.extend((source, s, kind, pinned, opening) for s in _sentences(text))
            if opening:
                first_user = False
    last = max(1, len(raw) - 1)
    return [
        _sentence(
            index,
            source,
            text,
            kind,
            pinned=pinned,
            terms=terms,
            # the opening request states the task: keep it (instructions drift away otherwise)
            bonus=0.1 * index / last + (0.15 if opening else 0.0),
        )
        for index, (source, text, kind, pinned, opening) in enumerate(raw)
    ]


def _line(sentence: _Sentence, text: str | None = None) -> str:
    body = sentence.text if text is None else text
    if sentence.source == "summary":
        return body
    label = {"user": "User: ", "tool": "Tool: ", "assistant": ""}[sentence.source]
    return label + body


def _fit(sentence: _Sentence, max_chars: int | None, max_tokens: int | None) -> str:
    """The sentence's line cut to fit the limits on its own (the best one always goes in)."""
    counter = get_counter()
    line = _line(sentence)
    limit = len(line) if max_chars is None else min(len(line), max(1, max_chars))
    line = _trim(line, limit)
    while max_tokens is not None and limit > 1 and counter.count(line) + 1 > max_tokens:
        limit = max(1, int(limit * 0.8))
        line = _trim(line, limit)
    return line


def _select(candidates: Sequence[_Sentence], max_chars: int | None, max_tokens: int | None) -> str:
    """Pick the best sentences within the limits; return them in conversation order.

    Lazy greedy: a sentence's gain only falls as the kept identifiers grow, so a popped
    sentence whose recomputed gain still beats the next stored one is the true best.
    """
    counter = get_counter()
    heap = [(-s.gain(set()), s.position, s) for s in candidates]
    heapq.heapify(heap)
    covered: set[str] = set()
    seen: set[str] = set()
    chosen: list[tuple[int, str]] = []
    chars = tokens = 0
    while heap:
        _, position, sentence = heapq.heappop(heap)
        gain = sentence.gain(covered)
        if heap and gain < -heap[0][0]:
            heapq.heappush(heap, (-gain, position, sentence))
            continue
        key = " ".join(sentence.text.casefold().split())
        if key in seen:
            continue
        line = _line(sentence)
        if not chosen:
            line = _fit(sentence, max_chars, max_tokens)
        cost = len(line) + (1 if chosen else 0)
        weight = counter.count(line) + 1
        if max_chars is not None and chars + cost > max_chars:
            continue
        if max_tokens is not None and tokens + weight > max_tokens:
            continue
        seen.add(key)
        covered |= sentence.ids
        chosen.append((position, line))
        chars += cost
        tokens += weight
    chosen.sort()
    return "\n".join(line for _, line in chosen)


class ExtractiveSummarizer:
    """Offline, deterministic summarizer: keeps the most important sentences verbatim.

    Sentences are scored with seed 003's importance weights (pinned 1.0, decision or stated
    preference 0.8, tool result 0.7, identifier / keyword / question 0.5), 0.75 for sentences
    of the parent summary and 0.2 for anything else, plus 0.1 per identifier not yet kept (at
    most 0.3), 0.3 for words of the user's instructions, 0.15 for the opening request and up to
    0.1 for recency. The best are kept within the same targets the model gets and printed in
    conversation order. No network, no randomness: the same input always gives the same output.
    """

    name = "extractive"

    async def summarize(self, request: SummaryInput) -> SummaryOutput:
        """Make the new version's content offline, in a worker thread (long inputs take a
        second or two of CPU, which must not stall the event loop).

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields (``usage`` is ``None``).

        Raises:
            SummaryError: when there is nothing to summarize.
        """
        return await asyncio.to_thread(self.summarize_sync, request)

    def summarize_sync(self, request: SummaryInput) -> SummaryOutput:
        """The same as :meth:`summarize`, run in the calling thread.

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields.

        Raises:
            SummaryError: when there is nothing to summarize.
        """
        _check_request(request)
        targets = _targets(request)
        if request.policy.strategy == "running":
            previous = split_fields(request.previous.text) if request.previous is not None else ""
            candidates = _candidates(request, previous)
            source = previous + "\n" + "\n".join(message_body(m) for m in request.messages)
            wanted = math.ceil(get_counter().count(source) * targets.rate)
            budget = min(targets.max_tokens, max(64, wanted))
            text = _select(candidates, targets.max_chars, budget)
            return _finish(request, text, (), self.name, None)

        _, target = _segment_target(request.messages, targets.rate, targets.max_tokens)
        block = _select(_candidates(request, ""), target, targets.max_tokens)
        segments = [*_parent_segments(request), _new_segment(request.messages, block, targets.rate)]
        plan = _roll_up(segments, targets.max_tokens)
        rollup = SummaryInput(policy=request.policy, previous=None, messages=())
        try:
            oldest = next(plan)
            while True:
                pool = _candidates(rollup, "\n".join(s.text for s in oldest))
                oldest = plan.send(
                    _select(pool, _rollup_target(oldest, targets.max_tokens), targets.max_tokens)
                )
        except StopIteration as done:
            segments = done.value
        return _finish(request, segments_text(segments), segments, self.name, None)
