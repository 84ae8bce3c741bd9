"""What a JSON export carries beyond its messages, and how an import restores it: every
summary version (its text, segments, fields, ledger, cost and compaction block, its parent, and
which one is in force) and where a fork came from.

Message ids in the file are the exporting database's; an import maps them to its own by
position, so a version covers the same messages and its ledger points at them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.core.models import Fork, Segment, Summary, utc_now
from tui_chat.core.records import summary_record
from tui_chat.store.repository import Store

MAX_IMPORT_SUMMARIES = 10_000

_STATUSES = ("completed", "failed")
_STRATEGIES = ("running", "segments")
_TRIGGERS = ("auto", "manual", "regenerate", "emergency")
_COUNTS = (
    "covered_messages",
    "source_tokens",
    "summary_tokens",
    "identifiers_kept",
    "identifiers_total",
)


class RestoreError(ValueError):
    """A summary or fork entry of an export that cannot be restored (where and why)."""


def summary_export(summary: Summary, active_id: int | None) -> dict[str, Any]:
    """One version as the JSON export writes it (everything an import needs to restore it)."""
    return {
        "id": summary.id,
        **summary_record(summary),
        "parent_id": summary.parent_id,
        "ledger": summary.ledger,
        "active": summary.id == active_id,
    }


def fork_export(fork: Fork | None) -> dict[str, Any] | None:
    """Where a conversation was forked from, as the JSON export writes it."""
    if fork is None:
        return None
    return {"parent_id": fork.parent_id, "parent_message_id": fork.parent_message_id}


def _int(item: Mapping[str, Any], key: str, where: str, default: int | None = 0) -> int | None:
    value = item.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RestoreError(f"{where}.{key} must be a whole number >= 0")
    return value


def _str(item: Mapping[str, Any], key: str, where: str, default: str | None = "") -> str | None:
    value = item.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str):
        raise RestoreError(f"{where}.{key} must be a string")
    return value


def _choice(item: Mapping[str, Any], key: str, where: str, allowed: Sequence[str]) -> str:
    value = item.get(key, allowed[0])
    if value not in allowed:
        raise RestoreError(f"{where}.{key} must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def _typed(item: Mapping[str, Any], key: str, where: str, kind: type, default: Any) -> Any:
    value = item.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, kind):
        raise RestoreError(f"{where}.{key} must be {'a list' if kind is list else 'an object'}")
    return value


def _call(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    call = _typed(item, "call", where, dict, None)
    if not call:
        return (
            {"call_model": None} | {f"call_{k}": 0 for k in _CALL_COUNTS} | {"call_cost_usd": 0.0}
        )
    out: dict[str, Any] = {"call_model": _str(call, "model", f"{where}.call")}
    for key in _CALL_COUNTS:
        out[f"call_{key}"] = _int(call, key, f"{where}.call")
    cost = call.get("cost_usd", 0.0)
    if not isinstance(cost, int | float) or isinstance(cost, bool):
        raise RestoreError(f"{where}.call.cost_usd must be a number")
    out["call_cost_usd"] = float(cost)
    return out


_CALL_COUNTS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def _version_row(
    item: Any, at: str, position: Mapping[int, int], seen: set[int]
) -> dict[str, Any] | None:
    """One exported version checked and turned into its store columns (``None``: a version
    still in progress at export, left out); ``seen`` collects the version numbers."""
    if not isinstance(item, dict):
        raise RestoreError(f"{at} must be an object")
    if item.get("status") == "in_progress":
        return None  # a compaction under way when the file was written: not a version
    version = _int(item, "version", at, None)
    if not version or version in seen:
        raise RestoreError(f"{at}.version must be a unique number >= 1")
    seen.add(version)
    covers = _int(item, "covers_to_message_id", at, None)
    if covers is None or covers not in position:
        raise RestoreError(f"{at}.covers_to_message_id names no message of the file")
    segments = _typed(item, "segments", at, list, [])
    try:
        segments = [Segment.from_dict(s).to_dict() for s in segments]
    except (TypeError, ValueError, AttributeError, IndexError, KeyError):
        raise RestoreError(f"{at}.segments holds an entry that is not a segment") from None
    ledger = _typed(item, "ledger", at, list, [])
    for entry in ledger:
        if isinstance(entry, dict) and isinstance(entry.get("ids"), list):
            entry["ids"] = [position[i] for i in entry["ids"] if i in position]
    row: dict[str, Any] = {
        "version": version,
        "status": _choice(item, "status", at, _STATUSES),
        "strategy": _choice(item, "strategy", at, _STRATEGIES),
        "text": _str(item, "text", at),
        "segments": segments,
        "fields": _typed(item, "fields", at, dict, {}),
        "covers_to_message_id": position[covers],
        "trigger": _choice(item, "trigger", at, _TRIGGERS),
        "instructions": _str(item, "instructions", at, None),
        "summarizer": _str(item, "summarizer", at),
        "error": _str(item, "error", at, None),
        "created_at": _str(item, "created_at", at, utc_now()),
        "completed_at": _str(item, "completed_at", at, None),
        "compaction_block": _typed(item, "compaction_block", at, dict, None),
        "ledger": ledger,
        "active": item.get("active") is True and item.get("status") == "completed",
        **{key: _int(item, key, at) for key in _COUNTS},
        **_call(item, at),
    }
    row["parent"] = _int(item, "parent_id", at, None)
    row["id"] = _int(item, "id", at, None)
    return row


def parse_summaries(
    raw: Any, message_ids: Sequence[int | None], where: str
) -> list[dict[str, Any]]:
    """Validate an export's ``summaries`` (all or nothing).

    Args:
        raw: The list as read (``None``: no versions).
        message_ids: The exported id of each message, in order.
        where: The file, for messages.

    Returns:
        Each version to restore, oldest first: its store columns (``covers_to_message_id``
        and the ledger's ids as positions among the messages), ``parent`` (an index into the
        list or ``None``) and ``active``. Versions still in progress at export are left out.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RestoreError(f"{where}: 'summaries' must be a list")
    if len(raw) > MAX_IMPORT_SUMMARIES:
        raise RestoreError(f"{where}: more than {MAX_IMPORT_SUMMARIES} summary versions")
    position = {m: i for i, m in enumerate(message_ids) if m is not None}
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for index, item in enumerate(raw):
        row = _version_row(item, f"{where}: summaries[{index}]", position, seen)
        if row is not None:
            out.append(row)
    if sum(1 for row in out if row["active"]) > 1:
        raise RestoreError(f"{where}: more than one summary version is marked active")
    # Oldest first, so each parent is written before the versions made from it.
    out.sort(key=lambda row: int(row["version"]))
    exported = [row.pop("id") for row in out]
    by_id = {summary_id: index for index, summary_id in enumerate(exported) if summary_id}
    for index, row in enumerate(out):
        parent = by_id.get(row["parent"]) if row["parent"] is not None else None
        row["parent"] = parent if parent is not None and parent < index else None
    return out


def parse_fork(raw: Any, where: str) -> tuple[str | None, int | None] | None:
    """Validate an export's ``fork`` entry: ``(parent id, parent message id)`` or ``None``."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RestoreError(f"{where}: 'fork' must be an object")
    return (
        _str(raw, "parent_id", f"{where}: fork", None),
        _int(raw, "parent_message_id", f"{where}: fork", None),
    )


async def restore(
    store: Store,
    conversation_id: str,
    summaries: Sequence[dict[str, Any]],
    fork: tuple[str | None, int | None] | None,
) -> None:
    """Write the versions and the fork origin of an imported conversation (its messages are
    written; positions in ``summaries`` become this conversation's message ids)."""
    if summaries:
        ids = await store.messages.ids(conversation_id)
        versions = []
        for row in summaries:
            version = dict(row)
            version["covers_to_message_id"] = ids[row["covers_to_message_id"]]
            version["ledger"] = [
                {**e, "ids": [ids[i] for i in e["ids"]]}
                if isinstance(e, dict) and isinstance(e.get("ids"), list)
                else e
                for e in row["ledger"]
            ]
            versions.append(version)
        active = next((i for i, row in enumerate(summaries) if row["active"]), None)
        await store.imports.restore_summaries(
            conversation_id, versions, [row["parent"] for row in summaries], active
        )
    if fork is not None:
        await store.imports.restore_fork(conversation_id, *fork)
