"""Rows and models: the column lists, the row mappers, and values made storable.

Every repository reads and writes through these, so a column is named and a row is mapped in
exactly one place.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from tui_chat.core.models import (
    Anchor,
    Conversation,
    Message,
    Segment,
    Summary,
    SummaryCall,
    Usage,
)

CONVERSATION_COLUMNS = (
    "id, title, model, system_prompt, settings, created_at, updated_at, archived_at, "
    "active_summary_id"
)
MESSAGE_COLUMNS = (
    "id, conversation_id, role, content, text, turn, token_count, status, model, usage, "
    "stop_reason, created_at, error"
)
SUMMARY_COLUMNS = (
    "id, conversation_id, version, parent_id, strategy, text, segments, fields, "
    "covers_to_message_id, covered_messages, source_tokens, summary_tokens, trigger, "
    "instructions, summarizer, identifiers_kept, identifiers_total, status, error, "
    "lease_owner, lease_expires_at, created_at, completed_at, call_model, call_input_tokens, "
    "call_cache_read_tokens, call_cache_write_tokens, call_output_tokens, call_cost_usd, "
    "compaction_block, ledger, stale"
)


def qualified(columns: str, alias: str) -> str:
    """A column list with every column prefixed by a table alias (``m.id, m.role, …``)."""
    return f"{alias}." + columns.replace(", ", f", {alias}.")


def to_json(value: Any) -> str:
    """Compact JSON as stored in TEXT columns (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def clean_text(text: str) -> str:
    """Make text storable: NUL bytes dropped, lone surrogates replaced."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_value(value: Any) -> Any:
    """:func:`clean_text` applied to every string (and key) inside a JSON-like value."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    return value


def conversation_from(row: sqlite3.Row) -> Conversation:
    """A :class:`Conversation` from a row of :data:`CONVERSATION_COLUMNS`."""
    return Conversation(
        id=row["id"],
        title=row["title"],
        model=row["model"],
        system_prompt=row["system_prompt"],
        settings=json.loads(row["settings"] or "{}"),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        archived_at=row["archived_at"],
        active_summary_id=row["active_summary_id"],
    )


def message_from(row: sqlite3.Row) -> Message:
    """A :class:`Message` from a row of :data:`MESSAGE_COLUMNS`."""
    return Message(
        id=row["id"],
        conversation_id=row["conversation_id"],
        role=row["role"],
        content=json.loads(row["content"]),
        text=row["text"],
        turn=row["turn"],
        token_count=row["token_count"],
        status=row["status"],
        created_at=row["created_at"],
        model=row["model"],
        usage=Usage.from_dict(json.loads(row["usage"])) if row["usage"] else None,
        stop_reason=row["stop_reason"],
        error=row["error"],
    )


def summary_from(row: sqlite3.Row) -> Summary:
    """A :class:`Summary` from a row of :data:`SUMMARY_COLUMNS`."""
    return Summary(
        id=row["id"],
        conversation_id=row["conversation_id"],
        version=row["version"],
        parent_id=row["parent_id"],
        strategy=row["strategy"],
        text=row["text"],
        segments=[Segment.from_dict(s) for s in json.loads(row["segments"] or "[]")],
        covers_to_message_id=row["covers_to_message_id"],
        covered_messages=row["covered_messages"],
        source_tokens=row["source_tokens"],
        summary_tokens=row["summary_tokens"],
        trigger=row["trigger"],
        summarizer=row["summarizer"],
        status=row["status"],
        created_at=row["created_at"],
        instructions=row["instructions"],
        identifiers_kept=row["identifiers_kept"],
        identifiers_total=row["identifiers_total"],
        error=row["error"],
        lease_owner=row["lease_owner"],
        lease_expires_at=row["lease_expires_at"],
        completed_at=row["completed_at"],
        fields=json.loads(row["fields"] or "{}"),
        call=call_from(row),
        compaction_block=compaction_block(row["compaction_block"]),
        ledger=json.loads(row["ledger"] or "[]"),
        stale=row["stale"],
    )


def block_problem(raw: str | None) -> str | None:
    """What is wrong with a stored server-compaction block (``None``: nothing, or no block).

    The block goes back to the API exactly as received; one that is not the JSON object of a
    ``compaction`` block with its text would fail every send (or crash the reader).
    """
    if not raw:
        return None
    try:
        block = json.loads(raw)
    except (ValueError, RecursionError):
        return "not valid JSON"
    if not isinstance(block, dict) or block.get("type") != "compaction":
        return "not a compaction block"
    if not isinstance(block.get("content"), str) or not block["content"]:
        return "a compaction block without its text"
    return None


def compaction_block(raw: str | None) -> dict[str, Any] | None:
    """The stored block, or ``None`` when there is none or it is damaged (:func:`block_problem`):
    the version is then sent as its text summary, and ``doctor`` reports the damage."""
    if not raw or block_problem(raw) is not None:
        return None
    block: dict[str, Any] = json.loads(raw)
    return block


def call_from(row: sqlite3.Row) -> SummaryCall | None:
    """The summary call's cost from a row of :data:`SUMMARY_COLUMNS` (``None``: no call)."""
    if not row["call_model"]:
        return None
    return SummaryCall(
        model=row["call_model"],
        input_tokens=row["call_input_tokens"],
        cache_read_tokens=row["call_cache_read_tokens"],
        cache_write_tokens=row["call_cache_write_tokens"],
        output_tokens=row["call_output_tokens"],
        cost_usd=row["call_cost_usd"],
    )


def anchor_from(row: sqlite3.Row) -> Anchor:
    """An :class:`Anchor` from a row with ``message_id, conversation_id, note, pinned_at``."""
    return Anchor(row["message_id"], row["conversation_id"], row["note"], row["pinned_at"])
