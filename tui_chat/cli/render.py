"""What the CLI prints: the stable JSON shapes and the text lines of each command.

Everything printed is inert for a terminal: text goes through :func:`inert`, JSON through
:func:`json_text` (which also escapes DEL and the C1 controls).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from tui_chat.core.inert import inert
from tui_chat.core.records import conversation_record, message_record, summary_record
from tui_chat.core.unanswered import refusal_category
from tui_chat.core.web import markdown_body
from tui_chat.engine.usage import usd

if TYPE_CHECKING:
    from tui_chat.core.models import (
        Conversation,
        ConversationInfo,
        Fork,
        Message,
        SearchHit,
        Summary,
    )
    from tui_chat.core.request import BuiltRequest
    from tui_chat.engine.send import SendOutcome

JsonObject = dict[str, object]
"""A JSON object about to be printed."""

C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
"""json.dumps leaves DEL and the C1 controls (U+0080-U+009F, e.g. CSI) raw; a terminal may act
on them, so JSON for the terminal escapes them too (still the same JSON)."""


def out(text: str) -> None:
    """Print ``text`` on standard output, ending it with a newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def json_text(value: object) -> str:
    """``value`` as indented UTF-8 JSON, safe for a terminal."""
    return json.dumps(value, ensure_ascii=False, indent=2).translate(C1_ESCAPES)


def json_out(value: object) -> None:
    """Print ``value`` as JSON (see :func:`json_text`)."""
    out(json_text(value))


# -- JSON shapes ---------------------------------------------------------------------------


def message_json(message: Message, pinned: set[int]) -> JsonObject:
    """The stable JSON shape of a message (``show --json``): its record and whether it is
    pinned."""
    return {**message_record(message), "pinned": message.id in pinned}


def conversation_json(conversation: Conversation) -> JsonObject:
    """The stable JSON shape of a conversation: its record, archived or not, and the summary
    version in force."""
    return {
        **conversation_record(conversation),
        "archived": conversation.archived_at is not None,
        "active_summary_id": conversation.active_summary_id,
    }


def info_json(info: ConversationInfo, fork: Fork | None = None) -> JsonObject:
    """A conversation with its message and token counts (``list --json``), and where it was
    forked from."""
    return {
        **conversation_json(info.conversation),
        "messages": info.message_count,
        "tokens": info.token_count,
        "cost_usd": round(info.cost_usd, 6),
        **fork_json(fork),
    }


def fork_json(fork: Fork | None) -> JsonObject:
    """``parent_id`` and ``parent_message_id`` of a fork (both ``None`` otherwise)."""
    return {
        "parent_id": fork.parent_id if fork else None,
        "parent_message_id": fork.parent_message_id if fork else None,
    }


def summary_json(
    summary: Summary, active_id: int | None, versions: Mapping[int, int]
) -> JsonObject:
    """The stable JSON shape of a summary version (``summaries --json``).

    Args:
        summary: The version.
        active_id: The id of the version in force, if any.
        versions: Version number by summary id, to name the parent.
    """
    return {
        **summary_record(summary),
        "active": summary.id == active_id,
        "reduction": round(summary.reduction, 4),
        "parent_version": versions.get(summary.parent_id) if summary.parent_id else None,
    }


def hit_json(hit: SearchHit) -> JsonObject:
    """The stable JSON shape of a search hit (``search --json``)."""
    return {
        "message_id": hit.message_id,
        "conversation_id": hit.conversation_id,
        "conversation_title": hit.conversation_title,
        "role": hit.role,
        "snippet": hit.marked(),
        "created_at": hit.created_at,
        "rank": hit.rank,
    }


def reply_json(conversation_id: str, outcome: SendOutcome) -> JsonObject:
    """What ``send --json`` and ``retry --json`` print: the messages and any error."""
    pinned: set[int] = set()
    error = outcome.error
    return {
        "conversation_id": conversation_id,
        "user": message_json(outcome.user, pinned) if outcome.user else None,
        "reply": message_json(outcome.reply, pinned),
        "error": None
        if error is None
        else {"kind": error.kind, "message": error.message, "hint": error.hint},
    }


def context_json(built: BuiltRequest, preset: str) -> JsonObject:
    """The next request and its token breakdown (``context --json``)."""
    b = built.breakdown
    return {
        "request": built.request,
        "breakdown": b.to_dict(),
        "sent_message_ids": list(built.sent_message_ids),
        "anchor_ids": list(built.anchor_ids),
        "recalled_ids": list(built.recalled_ids),
        "dropped_message_ids": list(built.dropped_message_ids),
        "fits": built.fits,
        "preset": preset,
    }


# -- text ----------------------------------------------------------------------------------


def conversation_line(info: ConversationInfo, title: str | None = None) -> str:
    """One conversation in ``list``: id, last change, counts and title (``title``: its
    family's, for the branch a family's line opens)."""
    c = info.conversation
    flag = " (archived)" if c.archived_at else ""
    return (
        f"{c.id}  {c.updated_at[:16].replace('T', ' ')}  {info.message_count:>5} msgs "
        f"{info.token_count:>8} tok {usd(info.cost_usd):>9}  {inert(title or c.title)}{flag}"
    )


def print_heading(conversation: Conversation) -> None:
    """The line ``show`` prints before a conversation's messages."""
    out(f"# {inert(conversation.title)}  ({conversation.id}, {conversation.model})")


def print_messages(messages: Iterable[Message], pinned: set[int]) -> None:
    """Messages as ``show`` prints them (a page at a time: memory flat in the length)."""
    for m in messages:
        marks: list[str] = [m.status] if m.status != "complete" else []
        refusal = refusal_category(m)
        if refusal is not None:
            marks = [f"refused: {refusal}"]
        if m.id in pinned:
            marks.append("pinned")
        suffix = f" [{', '.join(marks)}]" if marks else ""
        out(f"\n--- #{m.id} {m.role} {m.created_at[:19].replace('T', ' ')}{suffix}")
        out(inert(markdown_body(m.content, m.text, markdown=False)))  # thinking, sources
        if refusal is not None and m.error:
            out(f"({inert(m.error)})")


def print_context(conversation: Conversation, built: BuiltRequest, preset: str) -> None:
    """The token breakdown, its warnings and the exact request, as ``context`` prints them."""
    b = built.breakdown
    out(f"{conversation.id}  model {conversation.model}  preset {preset}")
    out(
        f"input {b.input_tokens} tokens (calibrated {b.calibrated_tokens}) of {b.usable} usable "
        f"(window {b.window} - max output {b.max_output})"
    )
    if b.counted:
        out(f"counted: {b.counted}")
    if b.price_note:
        out(f"note: {b.price_note}")
    for name, tokens in b.sections.items():
        out(f"  {name:<12}{tokens:>8}")
    for warning in b.warnings:
        out(f"warning: {inert(warning)}")
    out(json_text(built.request))


def print_summary(summary: Summary, active: bool) -> None:
    """One summary version in full, as ``summary``, ``compact`` and ``regenerate`` print it."""
    mark = " (active)" if active else ""
    out(
        f"version {summary.version}{mark}: {summary.status}, {summary.strategy}, "
        f"covers to message #{summary.covers_to_message_id}, "
        f"{summary.source_tokens} -> {summary.summary_tokens} tokens, "
        f"identifiers kept {summary.identifiers_kept}/{summary.identifiers_total} "
        "(summary + ledger as sent), "
        f"by {summary.summarizer or '-'}"
    )
    if summary.call:
        call = summary.call
        out(
            f"summary call: {call.model}, input {call.input_tokens}, cache read "
            f"{call.cache_read_tokens}, cache write {call.cache_write_tokens}, output "
            f"{call.output_tokens}, ${call.cost_usd:.4f}"
        )
    if summary.error:
        out(f"error: {inert(summary.error)}")
    if summary.text:
        out("")
        out(inert(summary.text))


def summary_line(summary: Summary, active: bool, parent_version: int | None) -> str:
    """One summary version in ``summaries``: ``*`` marks the one in force."""
    mark = "*" if active else " "
    parent = f"v{parent_version}" if parent_version else "-"
    error = f"  error: {inert(summary.error)}" if summary.error else ""
    return (
        f"{mark} v{summary.version:<3} {summary.status:<11} "
        f"to #{summary.covers_to_message_id:<6} "
        f"{summary.source_tokens:>7} -> {summary.summary_tokens:<6} tok  "
        f"ids {summary.identifiers_kept}/{summary.identifiers_total}  parent {parent}  "
        f"{summary.summarizer or ''}{error}"
    )
