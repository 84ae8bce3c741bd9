"""How a failure is told to the user: one line, inert for a terminal, with no secret in it.

Also tells damage found in the database file (which the open-time check, reading only the
header and the schema, cannot see) from every other failure.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tui_chat.core.inert import inert
from tui_chat.llm.errors import scrub
from tui_chat.store.access import Access, explain

__all__ = ["Access", "database_problem", "failure_line", "is_database_damage", "one_line"]

_DAMAGE_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def one_line(exc: BaseException) -> str:
    """The exception's text (or its type's name) on one line, control characters made visible.

    Args:
        exc: Any exception.

    Returns:
        The text with runs of whitespace (newlines included) collapsed to single spaces.
    """
    text = str(exc) or type(exc).__name__
    return inert(" ".join(text.split()))


def failure_line(exc: BaseException) -> str:
    """:func:`one_line` with API keys and other secrets replaced by ``[redacted]``."""
    return scrub(one_line(exc))


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
