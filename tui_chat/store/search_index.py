"""The health of the full-text index (``messages_fts``): check, bypass, rebuild.

The index is derived data: ``messages`` is the truth, three triggers keep the index in step.
A dropped index would make every message write fail ("no such table") and a damaged one makes
search fail ("malformed"). Neither may stop chatting, so:

* :func:`bypass_if_missing` (at open) drops the triggers when the index table is gone, so
  writing messages works; search then says the index needs a repair;
* :func:`check` tells ``ok`` from missing, stale (no triggers) or damaged;
* :func:`rebuild` recreates the table and its triggers and refills it from ``messages``,
  in one transaction, without touching a message.
"""

from __future__ import annotations

import sqlite3

from tui_chat.store.sql import Sql

REPAIR_HINT = "`tui-chat doctor --repair` rebuilds it from the messages"
"""What to do about any index problem."""

_TRIGGERS = {
    "messages_fts_insert": "AFTER INSERT ON messages BEGIN "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END",
    "messages_fts_delete": "AFTER DELETE ON messages BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "END",
    "messages_fts_update": "AFTER UPDATE OF text ON messages BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END",
}
"""The triggers of migration 1, keeping the index in step with ``messages``."""

_TABLE = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5(text, content='messages', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 2')"
)
"""The index table of migration 1 (an external-content FTS5 table over ``messages``)."""


class SearchIndexError(Exception):
    """The search index is missing or damaged; the message says what to do."""


def is_index_error(exc: BaseException) -> bool:
    """True for an SQLite error that comes from the search index, not from the data."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    return name == "SQLITE_CORRUPT_VTAB" or "messages_fts" in str(exc)


async def _names(sql: Sql, kind: str) -> set[str]:
    rows = await sql.all(
        "SELECT name FROM sqlite_master WHERE type = ? AND name LIKE 'messages_fts%'", (kind,)
    )
    return {str(r[0]) for r in rows}


async def bypass_if_missing(sql: Sql) -> bool:
    """Drop the index triggers when the index table is gone (writes would fail); True if so."""
    if "messages_fts" in await _names(sql, "table"):
        return False
    triggers = await _names(sql, "trigger") & set(_TRIGGERS)
    if not triggers:
        return False
    async with sql.transaction() as db:
        for name in sorted(triggers):
            await db.execute(f"DROP TRIGGER IF EXISTS {name}")
    return True


async def check(sql: Sql) -> str:
    """``ok``, or what is wrong with the index and how to fix it."""
    if "messages_fts" not in await _names(sql, "table"):
        return f"missing — {REPAIR_HINT}"
    missing = set(_TRIGGERS) - await _names(sql, "trigger")
    if missing:
        return f"not kept up to date (no {', '.join(sorted(missing))}) — {REPAIR_HINT}"
    try:
        # FTS5's own check compares the index with the content table, row by row.
        await sql.connection.execute(
            "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
        )
    except sqlite3.DatabaseError as exc:
        if str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
            return "not checked (the database is open read-only)"
        return f"damaged ({exc}) — {REPAIR_HINT}"
    return "ok"


async def rebuild(sql: Sql) -> int:
    """Recreate the index and its triggers and fill it from ``messages``; returns the rows.

    One transaction: on any failure the database is as it was. ``messages`` is only read.
    """
    async with sql.transaction() as db:
        for name in _TRIGGERS:
            await db.execute(f"DROP TRIGGER IF EXISTS {name}")
        await db.execute("DROP TABLE IF EXISTS messages_fts")
        await db.execute(_TABLE)
        for name, body in _TRIGGERS.items():
            await db.execute(f"CREATE TRIGGER {name} {body}")
        await db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        async with db.execute("SELECT count(*) FROM messages") as cursor:
            row = await cursor.fetchone()
    return int(row[0]) if row else 0


def index_error(exc: BaseException) -> SearchIndexError:
    """The clear error for a failed search whose cause is the index."""
    return SearchIndexError(f"the search index is missing or damaged ({exc}); {REPAIR_HINT}")
