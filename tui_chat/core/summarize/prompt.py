"""The summary prompt (seed 002's structure) and taking the summary out of the reply."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tui_chat.core.blocks import message_body
from tui_chat.core.models import Message, Segment, Summary
from tui_chat.core.summarize.fields import fields_text, split_fields
from tui_chat.core.summarize.segments import (
    rollup_target,
    segments_text,
    turn_range,
    turns_label,
)
from tui_chat.core.summarize.targets import Targets, running_tokens_of, segment_target, targets_for
from tui_chat.core.summarize.text import cut
from tui_chat.core.summarize.types import SummaryError, SummaryInput

MARKER = "tui-chat summarizer"
"""Literal text in every summary system prompt (servers and tests route on it)."""

MAX_PROMPT_CHARS = 400_000
"""Messages are cut so that one summary prompt stays within the summarizer's window."""

SUMMARIZER_ROLE = (
    f"You are the {MARKER}: you compress the older part of a conversation between a user and "
    "an AI assistant into a summary that replaces those messages in the assistant's context. "
    "The assistant continues the conversation from your summary alone, so keep every fact it "
    "will need, copy identifiers exactly, and leave out pleasantries and process. Write in the "
    "language of the conversation. Reply with the summary only, wrapped in <summary></summary> "
    "tags."
)
"""Who the summarizer is and what it replies with (the system prompt of a standalone call)."""

CONTENT_GUIDE = """\
Cover, under these headings (leave out a heading with nothing under it):
1. Task overview: the user's goal and requests, constraints and requirements.
2. Work completed: files read, created or modified (exact paths), commands run, key results.
3. Important context: decisions made and the reasons for them; exact identifiers (file paths, \
function, class and variable names, numbers, URLs, versions, quoted strings); errors met and how \
they were resolved; the user's preferences and style requirements.
4. Current state: what happens next, open questions, blockers.
Copy every identifier exactly as written; never round a number or paraphrase a path, name or URL.
Instructions the user gave early stay in force until the user changes them: keep them."""
"""What a running summary covers (seed 002's headings)."""

SEGMENT_GUIDE = """\
Keep the user's requests and preferences, decisions and their reasons, open questions, and \
every exact identifier (file paths, names, numbers, URLs, versions, quoted strings). Write \
plain prose or short bullets, no headings."""
"""What a segment keeps."""


def _render_messages(messages: Sequence[Message], pinned: frozenset[int], limit: int | None) -> str:
    if limit is None:
        total = sum(len(message_body(m)) for m in messages)
        if total > MAX_PROMPT_CHARS:
            limit = max(500, MAX_PROMPT_CHARS // max(1, len(messages)))
    lines: list[str] = []
    for message in messages:
        role = "USER" if message.role == "user" else "ASSISTANT"
        mark = " (pinned)" if message.id in pinned else ""
        body = cut(message_body(message), limit)
        lines.append(f"[turn {message.turn}] {role}{mark}: {body}")
    return "\n\n".join(lines)


def length_line(request: SummaryInput, targets: Targets) -> str:
    """The prompt's length target (characters at the compression rate for a segment)."""
    if request.policy.strategy == "segments":
        original, target = segment_target(request.messages, targets.rate, targets.max_tokens)
        level = f", {targets.level} level" if targets.level else ""
        return (
            f"Length: about {target:,} characters (the original is {original:,} characters, "
            f"compression rate {targets.rate:g}{level}), at most {targets.max_tokens:,} tokens."
        )
    source = "\n".join(message_body(m) for m in request.messages)
    if request.previous is not None:
        source = request.previous.text + "\n" + source
    tokens = running_tokens_of(targets, source)
    words = max(20, int(tokens * 0.75))
    parts = [
        f"at most {tokens:,} tokens (about {words:,} words; compression rate {targets.rate:g})"
    ]
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
    targets = targets_for(request)
    sections: list[str] = []
    if merge is not None:
        merged = (merge[0].turns[0], merge[-1].turns[1]) if merge else (0, 0)
        chars = sum(s.summary_chars for s in merge)
        target = rollup_target(merge, targets.max_tokens)
        sections.append(
            f"Merge these consecutive summaries of {turns_label(merged)} into one higher-level "
            "summary that keeps what the rest of the conversation may still need."
        )
        sections.append(f"<summaries>\n{segments_text(merge)}\n</summaries>")
        sections.append(SEGMENT_GUIDE)
        sections.append(
            f"Length: about {target:,} characters (the summaries are {chars:,}), at most "
            f"{targets.max_tokens:,} tokens."
        )
    elif policy.strategy == "segments":
        block = turn_range(request.messages)
        earlier = list(request.previous.segments) if request.previous is not None else []
        if earlier:
            sections.append(
                "Earlier summaries, for context only (do not repeat them):\n"
                f"<earlier_summaries>\n{segments_text(earlier)}\n</earlier_summaries>"
            )
        sections.append(
            f"Summarize {turns_label(block)} of the conversation:\n<messages>\n"
            f"{_render_messages(request.messages, request.pinned_ids, policy.prompt_char_limit)}"
            "\n</messages>"
        )
        sections.append(SEGMENT_GUIDE)
        sections.append(length_line(request, targets))
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
        sections.append(CONTENT_GUIDE)
        sections.append(length_line(request, targets))
    sections.extend(closing_sections(request, merging=merge is not None))
    return SUMMARIZER_ROLE, "\n\n".join(sections)


def closing_sections(request: SummaryInput, *, merging: bool = False) -> list[str]:
    """The sections every summary prompt ends with: pins, tracked fields, the user's
    instructions and the ``<summary>`` tags.

    Args:
        request: The version being made.
        merging: True for a roll-up of segments (no pins or fields apply).
    """
    sections: list[str] = []
    if not merging and request.pinned_ids:
        sections.append(
            "Messages marked (pinned) are kept verbatim elsewhere in the assistant's context: "
            "do not repeat their content; refer to them briefly if needed."
        )
    if request.policy.structured_fields and not merging:
        sections.append(_fields_note(request.previous))
    if request.instructions and request.instructions.strip():
        sections.append(
            "Instructions from the user for this summary (they take precedence):\n"
            f"{request.instructions.strip()}"
        )
    sections.append("Wrap the whole summary in <summary></summary> tags.")
    return sections


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
    follows the tag. A reply without the tags did not follow the format the summarizer was
    asked for (a plain recap, a chat answer): it is refused, so the version is kept as failed
    with the reason and the active one stays.

    Args:
        reply: The model's reply text.

    Returns:
        The summary text, stripped.

    Raises:
        SummaryError: when the reply has no ``<summary>`` tag, when the summary is empty, or
            when it looks like an error message or a refusal ("Error generating summary…",
            "I'm sorry, I can't…").
    """
    body = ""
    for match in _TAGGED.finditer(reply):
        if match.group(1).strip():
            body = match.group(1)
            break
    else:
        opened = _OPEN_TAG.search(reply)
        if opened is None:
            if not reply.strip():
                raise SummaryError("the summarizer returned an empty summary")
            start = " ".join(reply.split())[:80]
            raise SummaryError(
                "the summary reply did not follow the format (no <summary>…</summary> tags); "
                f"it began: {start}"
            )
        body = reply[opened.end() :]
        body = re.sub(r"</?summary>", "", body, flags=re.IGNORECASE)
    body = body.strip()
    if not body:
        raise SummaryError("the summarizer returned an empty summary")
    if _ERROR_START.search(body[:300]) or _ERROR_ANYWHERE.search(body[:1000]):
        first_line = body.splitlines()[0][:160]
        raise SummaryError(f"the summarizer returned an error instead of a summary: {first_line}")
    return body
