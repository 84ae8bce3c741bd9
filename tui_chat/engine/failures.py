"""How a failure is told to the user: one line, inert for a terminal, with no secret in it.

Also tells damage found in the database file (which the open-time check, reading only the
header and the schema, cannot see) from every other failure.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_chat.core.inert import inert
from tui_chat.llm.compaction import has_compaction_block
from tui_chat.llm.errors import ChatError, name_refused_file, scrub
from tui_chat.store.access import Access, explain
from tui_chat.store.repository import Store

__all__ = [
    "Access",
    "database_problem",
    "error_line",
    "explain_refusal",
    "failure_line",
    "is_database_damage",
]

_DAMAGE_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def error_line(exc: BaseException) -> str:
    """The exception's text (or its type's name) on one line, control characters made visible.

    Args:
        exc: Any exception.

    Returns:
        The text with runs of whitespace (newlines included) collapsed to single spaces.
    """
    text = str(exc) or type(exc).__name__
    return inert(" ".join(text.split()))


def failure_line(exc: BaseException) -> str:
    """:func:`error_line` with API keys and other secrets replaced by ``[redacted]``."""
    return scrub(error_line(exc))


def is_database_damage(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite reporting a damaged file or one that is not a database."""
    return isinstance(exc, sqlite3.DatabaseError) and (
        getattr(exc, "sqlite_errorname", "") in _DAMAGE_CODES
    )


def database_problem(exc: BaseException, path: Path | str, access: Access | None) -> str | None:
    """One line for a database error the user can act on (read-only, full disk, a folder).

    Args:
        exc: The error (``sqlite3.Error`` or ``OSError``).
        path: The database file.
        access: How the file was opened (``ChatService.access``), when it was.

    Returns:
        The line naming the path and what to do, or ``None`` for any other error.
    """
    return explain(exc, path, access)


async def explain_refusal(
    store: Store, conversation_id: str, error: ChatError, request: Mapping[str, Any]
) -> ChatError:
    """A request the API refused because of something tui-chat stored says what and what to do:
    an attached file by its name (:func:`~tui_chat.llm.errors.name_refused_file`), the
    summary in force when its server-compaction block was refused (changed or damaged: an
    "invalid signature"), with the roll back that sends without it.
    """
    error = name_refused_file(error, request)
    messages = request.get("messages")
    if (
        error.kind != "bad_request"
        or not isinstance(messages, list)
        or not has_compaction_block(messages)
        or not any(w in error.message.lower() for w in ("signature", "compaction"))
    ):
        return error
    summary = await store.summaries.active(conversation_id)
    if summary is None:
        return error
    earlier = [
        v.version
        for v in await store.summaries.versions(conversation_id)
        if v.version < summary.version and v.status == "completed"
    ]
    back = max(earlier, default=0)
    return ChatError(
        "bad_request",
        f"the API refused the compaction block of summary version {summary.version} "
        f"({error.status}): it was changed or damaged — {error.message}",
        f"`tui-chat rollback {conversation_id} {back}` sends "
        + (f"version {back} instead" if back else "no summary")
        + f"; `tui-chat regenerate {conversation_id} {summary.version}` makes a new version",
        status=error.status,
    )
