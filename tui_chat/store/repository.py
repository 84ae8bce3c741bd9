"""The typed async repository over the tui-chat database.

All SQL is parameterised. Writes that read-then-write run inside ``BEGIN IMMEDIATE`` so two
processes on one database serialise on SQLite's write lock (with ``busy_timeout``) instead of
failing with ``database is locked``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from tui_chat.core.models import (
    HIT_END,
    HIT_START,
    Anchor,
    ContentBlock,
    Conversation,
    ConversationInfo,
    Message,
    MessageStatus,
    Role,
    SearchHit,
    Segment,
    Strategy,
    Summary,
    SummaryTrigger,
    Usage,
    utc_now,
)
from tui_chat.core.turns import starts_turn
from tui_chat.store import fts
from tui_chat.store.database import StoreError, connect


class NotFound(StoreError):
    """A conversation, message or version that does not exist."""


class Conflict(StoreError):
    """A write lost a race (e.g. compare-and-swap activation, a live lease)."""


@dataclass(frozen=True, slots=True)
class LeaseClaim:
    """An in-progress summary row this process now owns."""

    summary: Summary
    taken_over: bool


_SUMMARY_COLUMNS = (
    "id, conversation_id, version, parent_id, strategy, text, segments, fields, "
    "covers_to_message_id, covered_messages, source_tokens, summary_tokens, trigger, "
    "instructions, summarizer, identifiers_kept, identifiers_total, status, error, "
    "lease_owner, lease_expires_at, created_at, completed_at"
)
_MESSAGE_COLUMNS = (
    "id, conversation_id, role, content, text, turn, token_count, status, model, usage, "
    "stop_reason, created_at, error"
)
_CONVERSATION_COLUMNS = (
    "id, title, model, system_prompt, settings, created_at, updated_at, archived_at, "
    "active_summary_id"
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _conversation(row: sqlite3.Row) -> Conversation:
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


def _message(row: sqlite3.Row) -> Message:
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


def _summary(row: sqlite3.Row) -> Summary:
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
    )


def clean_text(text: str) -> str:
    """Make text storable: NUL bytes dropped, lone surrogates replaced."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): _clean(v) for k, v in value.items()}
    return value


class Store:
    """Async access to one tui-chat database file."""

    def __init__(self, db: aiosqlite.Connection, path: Path | str) -> None:
        """Wrap an open connection; use :meth:`open` instead."""
        self._db = db
        self.path = path
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path | str) -> Store:
        """Open, creating and migrating as needed. Raises :class:`StoreError`."""
        return cls(await connect(path), path)

    async def close(self) -> None:
        """Close the connection (checkpointing the WAL)."""
        await self._db.close()

    @property
    def connection(self) -> aiosqlite.Connection:
        """The underlying connection (backup, integrity checks)."""
        return self._db

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """A write transaction holding SQLite's write lock from the start."""
        async with self._lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise
            else:
                await self._db.execute("COMMIT")

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        async with self._db.execute(sql, params) as cursor:
            row = await cursor.fetchone()
        return row

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._db.execute(sql, params) as cursor:
            rows = await cursor.fetchall()
        return list(rows)

    # -- conversations -------------------------------------------------------------------

    async def create_conversation(
        self,
        *,
        title: str,
        model: str,
        system_prompt: str = "",
        settings: dict[str, Any] | None = None,
        conversation_id: str | None = None,
        created_at: str | None = None,
    ) -> Conversation:
        """Create a conversation and return it."""
        now = created_at or utc_now()
        cid = conversation_id or uuid.uuid4().hex[:12]
        async with self.transaction() as db:
            await db.execute(
                f"INSERT INTO conversations ({_CONVERSATION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                (
                    cid,
                    clean_text(title),
                    model,
                    clean_text(system_prompt),
                    _json(settings or {}),
                    now,
                    now,
                ),
            )
        return await self.get_conversation(cid)

    async def get_conversation(self, conversation_id: str) -> Conversation:
        """The conversation with this exact id. Raises :class:`NotFound`."""
        row = await self._one(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = ?", (conversation_id,)
        )
        if row is None:
            raise NotFound(f"no conversation {conversation_id!r}")
        return _conversation(row)

    async def resolve_conversation(self, ref: str) -> Conversation:
        """Find a conversation by id, unique id prefix, or ``last`` (most recently updated)."""
        ref = ref.strip()
        if ref == "last":
            row = await self._one(
                f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE archived_at IS NULL "
                "ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            )
            if row is None:
                raise NotFound("there are no conversations yet")
            return _conversation(row)
        if not ref:
            raise NotFound("empty conversation id")
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = await self._all(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations "
            "WHERE id = ? OR id LIKE ? ESCAPE '\\' LIMIT 3",
            (ref, escaped + "%"),
        )
        exact = [r for r in rows if r["id"] == ref]
        if exact:
            return _conversation(exact[0])
        if not rows:
            raise NotFound(f"no conversation matches {ref!r}")
        if len(rows) > 1:
            raise NotFound(f"{ref!r} matches several conversations; give more of the id")
        return _conversation(rows[0])

    async def list_conversations(
        self, *, include_archived: bool = False, limit: int | None = None
    ) -> list[ConversationInfo]:
        """Conversations newest first, with message and token totals."""
        where = "" if include_archived else "WHERE c.archived_at IS NULL"
        sql = (
            f"SELECT c.{_CONVERSATION_COLUMNS.replace(', ', ', c.')}, "
            "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS n, "
            "(SELECT IFNULL(sum(token_count), 0) FROM messages m "
            " WHERE m.conversation_id = c.id) AS t "
            f"FROM conversations c {where} ORDER BY c.updated_at DESC, c.rowid DESC"
        )
        params: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (limit,)
        rows = await self._all(sql, params)
        return [ConversationInfo(_conversation(r), r["n"], r["t"]) for r in rows]

    async def update_conversation(self, conversation_id: str, **changes: Any) -> Conversation:
        """Change title, model, system_prompt, settings or archived_at."""
        allowed = {"title", "model", "system_prompt", "settings", "archived_at"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))}")
        if not changes:
            return await self.get_conversation(conversation_id)
        values = {
            k: (_json(v) if k == "settings" else clean_text(v) if isinstance(v, str) else v)
            for k, v in changes.items()
        }
        assignments = ", ".join(f"{k} = ?" for k in values)
        async with self.transaction() as db:
            cursor = await db.execute(
                f"UPDATE conversations SET {assignments}, updated_at = ? WHERE id = ?",
                (*values.values(), utc_now(), conversation_id),
            )
            if cursor.rowcount == 0:
                raise NotFound(f"no conversation {conversation_id!r}")
        return await self.get_conversation(conversation_id)

    async def delete_conversation(self, conversation_id: str) -> None:
        """Delete a conversation and everything in it (the only delete there is)."""
        async with self.transaction() as db:
            await db.execute(
                "UPDATE conversations SET active_summary_id = NULL WHERE id = ?",
                (conversation_id,),
            )
            await db.execute("DELETE FROM anchors WHERE conversation_id = ?", (conversation_id,))
            await db.execute("DELETE FROM summaries WHERE conversation_id = ?", (conversation_id,))
            await db.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
            cursor = await db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            if cursor.rowcount == 0:
                raise NotFound(f"no conversation {conversation_id!r}")

    # -- messages ------------------------------------------------------------------------

    async def add_message(
        self,
        conversation_id: str,
        *,
        role: Role,
        content: list[ContentBlock],
        text: str,
        token_count: int,
        status: MessageStatus = "complete",
        model: str | None = None,
        usage: Usage | None = None,
        stop_reason: str | None = None,
        created_at: str | None = None,
        error: str | None = None,
    ) -> Message:
        """Append a message; its turn number follows DESIGN.md's turn definition."""
        content = _clean(content)
        text = clean_text(text)
        now = created_at or utc_now()
        async with self.transaction() as db:
            async with db.execute(
                "SELECT turn FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 1",
                (conversation_id,),
            ) as cursor:
                last = await cursor.fetchone()
            last_turn = int(last[0]) if last else 0
            turn = last_turn + 1 if (starts_turn(role, content) or last_turn == 0) else last_turn
            cursor = await db.execute(
                f"INSERT INTO messages ({_MESSAGE_COLUMNS}) "
                "VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    role,
                    _json(content),
                    text,
                    turn,
                    token_count,
                    status,
                    model,
                    _json(usage.to_dict()) if usage else None,
                    stop_reason,
                    now,
                    clean_text(error) if error else None,
                ),
            )
            message_id = cursor.lastrowid
            await db.execute(
                "UPDATE conversations SET updated_at = ? WHERE id = ?", (utc_now(), conversation_id)
            )
        assert message_id is not None
        return await self.get_message(message_id)

    async def add_messages(self, conversation_id: str, rows: Iterable[dict[str, Any]]) -> int:
        """Bulk-append messages in one transaction (import, benchmarks). Returns the count.

        Each row has the keyword arguments of :meth:`add_message`.
        """
        count = 0
        async with self.transaction() as db:
            async with db.execute(
                "SELECT turn FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 1",
                (conversation_id,),
            ) as cursor:
                last = await cursor.fetchone()
            turn = int(last[0]) if last else 0
            params = []
            for row in rows:
                content = _clean(row["content"])
                if starts_turn(row["role"], content) or turn == 0:
                    turn += 1
                usage = row.get("usage")
                params.append(
                    (
                        conversation_id,
                        row["role"],
                        _json(content),
                        clean_text(row["text"]),
                        turn,
                        int(row["token_count"]),
                        row.get("status", "complete"),
                        row.get("model"),
                        _json(usage.to_dict()) if usage else None,
                        row.get("stop_reason"),
                        row.get("created_at") or utc_now(),
                        row.get("error"),
                    )
                )
            await db.executemany(
                f"INSERT INTO messages ({_MESSAGE_COLUMNS}) "
                "VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                params,
            )
            count = len(params)
            await db.execute(
                "UPDATE conversations SET updated_at = ? WHERE id = ?", (utc_now(), conversation_id)
            )
        return count

    async def update_message(
        self,
        message_id: int,
        *,
        content: list[ContentBlock] | None = None,
        text: str | None = None,
        token_count: int | None = None,
        status: MessageStatus | None = None,
        model: str | None = None,
        usage: Usage | None = None,
        stop_reason: str | None = None,
        error: str | None = None,
    ) -> Message:
        """Change a streaming reply as it completes (the only rewrite a message gets)."""
        values: dict[str, Any] = {}
        if content is not None:
            values["content"] = _json(_clean(content))
        if text is not None:
            values["text"] = clean_text(text)
        if token_count is not None:
            values["token_count"] = token_count
        if status is not None:
            values["status"] = status
        if model is not None:
            values["model"] = model
        if usage is not None:
            values["usage"] = _json(usage.to_dict())
        if stop_reason is not None:
            values["stop_reason"] = stop_reason
        if error is not None:
            values["error"] = clean_text(error)
        if values:
            assignments = ", ".join(f"{k} = ?" for k in values)
            async with self.transaction() as db:
                await db.execute(
                    f"UPDATE messages SET {assignments} WHERE id = ?",
                    (*values.values(), message_id),
                )
        return await self.get_message(message_id)

    async def get_message(self, message_id: int) -> Message:
        """One message by id. Raises :class:`NotFound`."""
        row = await self._one(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        )
        if row is None:
            raise NotFound(f"no message {message_id}")
        return _message(row)

    async def get_messages(self, message_ids: Sequence[int]) -> list[Message]:
        """Several messages by id, in id order (missing ids are skipped)."""
        if not message_ids:
            return []
        marks = ", ".join("?" for _ in message_ids)
        rows = await self._all(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id IN ({marks}) ORDER BY id",
            tuple(message_ids),
        )
        return [_message(r) for r in rows]

    async def list_messages(
        self,
        conversation_id: str,
        *,
        after_id: int | None = None,
        up_to_id: int | None = None,
        before_id: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[Message]:
        """Messages in id order.

        Args:
            conversation_id: The conversation.
            after_id: Only messages with a larger id.
            up_to_id: Only messages with an id at most this.
            before_id: Only messages with a smaller id (paging backwards).
            limit: At most this many.
            newest: With ``limit``, take the newest ones (still returned oldest first).
        """
        clauses = ["conversation_id = ?"]
        params: list[Any] = [conversation_id]
        if after_id is not None:
            clauses.append("id > ?")
            params.append(after_id)
        if up_to_id is not None:
            clauses.append("id <= ?")
            params.append(up_to_id)
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        order = "DESC" if newest else "ASC"
        sql = (
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)} "
            f"ORDER BY id {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = await self._all(sql, params)
        messages = [_message(r) for r in rows]
        if newest:
            messages.reverse()
        return messages

    async def message_stats(
        self, conversation_id: str, *, after_id: int | None = None
    ) -> tuple[int, int]:
        """``(count, tokens)`` of the conversation's messages after ``after_id``."""
        row = await self._one(
            "SELECT count(*), IFNULL(sum(token_count), 0) FROM messages "
            "WHERE conversation_id = ? AND id > ?",
            (conversation_id, after_id or 0),
        )
        assert row is not None
        return int(row[0]), int(row[1])

    async def last_message(self, conversation_id: str) -> Message | None:
        """The newest message, if any."""
        messages = await self.list_messages(conversation_id, limit=1, newest=True)
        return messages[0] if messages else None

    async def usage_totals(self, conversation_id: str) -> list[tuple[str, Usage]]:
        """Summed API usage of a conversation's replies, per model."""
        rows = await self._all(
            "SELECT IFNULL(model, ''), "
            "sum(json_extract(usage, '$.input_tokens')), "
            "sum(json_extract(usage, '$.output_tokens')), "
            "sum(json_extract(usage, '$.cache_creation_input_tokens')), "
            "sum(json_extract(usage, '$.cache_read_input_tokens')) "
            "FROM messages WHERE conversation_id = ? AND usage IS NOT NULL GROUP BY model",
            (conversation_id,),
        )
        return [
            (str(r[0]), Usage(int(r[1] or 0), int(r[2] or 0), int(r[3] or 0), int(r[4] or 0)))
            for r in rows
        ]

    # -- search --------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        conversation_id: str | None = None,
        up_to_id: int | None = None,
        any_word: bool = False,
        limit: int = 50,
    ) -> list[SearchHit]:
        """Full-text search, best (BM25) first. Any user text is safe as ``query``."""
        match = fts.match_any(query) if any_word else fts.match_all(query)
        if match is None:
            return []
        clauses = ["messages_fts MATCH ?"]
        params: list[Any] = [HIT_START, HIT_END, match]
        if conversation_id is not None:
            clauses.append("m.conversation_id = ?")
            params.append(conversation_id)
        if up_to_id is not None:
            clauses.append("m.id <= ?")
            params.append(up_to_id)
        params.append(limit)
        rows = await self._all(
            "SELECT m.id, m.conversation_id, c.title, m.role, m.created_at, "
            "snippet(messages_fts, 0, ?, ?, ' … ', 16) AS snip, bm25(messages_fts) AS rank "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "JOIN conversations c ON c.id = m.conversation_id "
            f"WHERE {' AND '.join(clauses)} ORDER BY rank LIMIT ?",
            params,
        )
        return [
            SearchHit(
                message_id=r["id"],
                conversation_id=r["conversation_id"],
                conversation_title=r["title"],
                role=r["role"],
                snippet=r["snip"],
                created_at=r["created_at"],
                rank=float(r["rank"]),
            )
            for r in rows
        ]

    # -- anchors -------------------------------------------------------------------------

    async def pin(self, message_id: int, note: str = "") -> Anchor:
        """Pin a message (re-pinning updates the note)."""
        message = await self.get_message(message_id)
        now = utc_now()
        async with self.transaction() as db:
            await db.execute(
                "INSERT INTO anchors (message_id, conversation_id, note, pinned_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(message_id) DO UPDATE SET note = excluded.note",
                (message_id, message.conversation_id, clean_text(note), now),
            )
        row = await self._one("SELECT * FROM anchors WHERE message_id = ?", (message_id,))
        assert row is not None
        return Anchor(row["message_id"], row["conversation_id"], row["note"], row["pinned_at"])

    async def unpin(self, message_id: int) -> bool:
        """Unpin a message; False when it was not pinned."""
        async with self.transaction() as db:
            cursor = await db.execute("DELETE FROM anchors WHERE message_id = ?", (message_id,))
            return cursor.rowcount > 0

    async def anchors(self, conversation_id: str) -> list[tuple[Anchor, Message]]:
        """Pinned messages of a conversation in conversation order."""
        rows = await self._all(
            f"SELECT a.note, a.pinned_at, m.{_MESSAGE_COLUMNS.replace(', ', ', m.')} "
            "FROM anchors a JOIN messages m ON m.id = a.message_id "
            "WHERE a.conversation_id = ? ORDER BY m.id",
            (conversation_id,),
        )
        return [
            (Anchor(r["id"], r["conversation_id"], r["note"], r["pinned_at"]), _message(r))
            for r in rows
        ]

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        """Ids of the pinned messages of a conversation."""
        rows = await self._all(
            "SELECT message_id FROM anchors WHERE conversation_id = ?", (conversation_id,)
        )
        return {int(r[0]) for r in rows}

    # -- summaries -----------------------------------------------------------------------

    async def get_summary(self, summary_id: int) -> Summary:
        """One summary row by id. Raises :class:`NotFound`."""
        row = await self._one(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE id = ?", (summary_id,)
        )
        if row is None:
            raise NotFound(f"no summary {summary_id}")
        return _summary(row)

    async def get_version(self, conversation_id: str, version: int) -> Summary:
        """A conversation's summary by version number. Raises :class:`NotFound`."""
        row = await self._one(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE conversation_id = ? AND version = ?",
            (conversation_id, version),
        )
        if row is None:
            raise NotFound(f"conversation {conversation_id} has no summary version {version}")
        return _summary(row)

    async def list_summaries(self, conversation_id: str) -> list[Summary]:
        """Every version of a conversation, newest first."""
        rows = await self._all(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE conversation_id = ? "
            "ORDER BY version DESC",
            (conversation_id,),
        )
        return [_summary(r) for r in rows]

    async def active_summary(self, conversation_id: str) -> Summary | None:
        """The version in force, if any."""
        row = await self._one(
            f"SELECT s.{_SUMMARY_COLUMNS.replace(', ', ', s.')} FROM conversations c "
            "JOIN summaries s ON s.id = c.active_summary_id WHERE c.id = ?",
            (conversation_id,),
        )
        return _summary(row) if row else None

    async def begin_summary(
        self,
        conversation_id: str,
        *,
        parent_id: int | None,
        strategy: Strategy,
        covers_to_message_id: int,
        trigger: SummaryTrigger,
        owner: str,
        lease_seconds: float,
        instructions: str | None = None,
    ) -> Summary:
        """Claim the conversation's compaction lease with a new in-progress version.

        Raises:
            Conflict: another live lease exists, or an automatic version for this boundary
                already exists (two engines racing for one boundary).
        """
        now = time.time()
        try:
            async with self.transaction() as db:
                async with db.execute(
                    "SELECT id, lease_expires_at FROM summaries "
                    "WHERE conversation_id = ? AND status = 'in_progress'",
                    (conversation_id,),
                ) as cursor:
                    live = await cursor.fetchone()
                if live is not None:
                    raise Conflict(f"compaction already running (version row {live[0]})")
                async with db.execute(
                    "SELECT IFNULL(max(version), 0) FROM summaries WHERE conversation_id = ?",
                    (conversation_id,),
                ) as cursor:
                    row = await cursor.fetchone()
                version = (int(row[0]) if row else 0) + 1
                cursor = await db.execute(
                    "INSERT INTO summaries (conversation_id, version, parent_id, strategy, "
                    "covers_to_message_id, trigger, instructions, status, lease_owner, "
                    "lease_expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'in_progress', "
                    "?, ?, ?)",
                    (
                        conversation_id,
                        version,
                        parent_id,
                        strategy,
                        covers_to_message_id,
                        trigger,
                        instructions,
                        owner,
                        now + lease_seconds,
                        utc_now(),
                    ),
                )
                summary_id = cursor.lastrowid
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"another engine already summarised this boundary ({exc})") from None
        assert summary_id is not None
        return await self.get_summary(summary_id)

    async def take_over_expired(
        self, conversation_id: str, *, owner: str, lease_seconds: float
    ) -> Summary | None:
        """Take over an in-progress version whose lease has expired (its worker died)."""
        now = time.time()
        async with self.transaction() as db:
            cursor = await db.execute(
                "UPDATE summaries SET lease_owner = ?, lease_expires_at = ? "
                "WHERE conversation_id = ? AND status = 'in_progress' AND lease_expires_at < ?",
                (owner, now + lease_seconds, conversation_id, now),
            )
            taken = cursor.rowcount > 0
        if not taken:
            return None
        row = await self._one(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE conversation_id = ? "
            "AND status = 'in_progress' AND lease_owner = ?",
            (conversation_id, owner),
        )
        return _summary(row) if row else None

    async def in_progress(self, conversation_id: str) -> Summary | None:
        """The conversation's in-progress version, if any (live or expired)."""
        row = await self._one(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE conversation_id = ? "
            "AND status = 'in_progress'",
            (conversation_id,),
        )
        return _summary(row) if row else None

    async def expired_leases(self) -> list[Summary]:
        """Every in-progress version whose lease has run out, across conversations."""
        rows = await self._all(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries WHERE status = 'in_progress' "
            "AND lease_expires_at < ?",
            (time.time(),),
        )
        return [_summary(r) for r in rows]

    async def renew_lease(self, summary_id: int, *, owner: str, lease_seconds: float) -> bool:
        """Extend our lease; False when it is no longer ours (taken over)."""
        async with self.transaction() as db:
            cursor = await db.execute(
                "UPDATE summaries SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? "
                "AND status = 'in_progress'",
                (time.time() + lease_seconds, summary_id, owner),
            )
            return cursor.rowcount > 0

    async def complete_summary(
        self,
        summary_id: int,
        *,
        owner: str,
        text: str,
        segments: Sequence[Segment],
        fields: dict[str, Any],
        covered_messages: int,
        source_tokens: int,
        summary_tokens: int,
        summarizer: str,
        identifiers_kept: int,
        identifiers_total: int,
        activate_if_parent: bool = True,
    ) -> tuple[Summary, bool]:
        """Finish our version and activate it by compare-and-swap.

        The version becomes active only if the conversation's active version is still its
        parent (nobody rolled back, forward or compacted meanwhile). Returns the row and
        whether it was activated.

        Raises:
            Conflict: the lease is no longer ours.
        """
        async with self.transaction() as db:
            cursor = await db.execute(
                "UPDATE summaries SET status = 'completed', text = ?, segments = ?, fields = ?, "
                "covered_messages = ?, source_tokens = ?, summary_tokens = ?, summarizer = ?, "
                "identifiers_kept = ?, identifiers_total = ?, completed_at = ?, "
                "lease_owner = NULL, lease_expires_at = NULL, error = NULL "
                "WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
                (
                    clean_text(text),
                    _json([s.to_dict() for s in segments]),
                    _json(_clean(fields)),
                    covered_messages,
                    source_tokens,
                    summary_tokens,
                    summarizer,
                    identifiers_kept,
                    identifiers_total,
                    utc_now(),
                    summary_id,
                    owner,
                ),
            )
            if cursor.rowcount == 0:
                raise Conflict("the compaction lease was lost before completion")
            activated = False
            if activate_if_parent:
                cursor = await db.execute(
                    "UPDATE conversations SET active_summary_id = ? WHERE id = "
                    "(SELECT conversation_id FROM summaries WHERE id = ?) AND "
                    "IFNULL(active_summary_id, 0) = IFNULL("
                    "(SELECT parent_id FROM summaries WHERE id = ?), 0)",
                    (summary_id, summary_id, summary_id),
                )
                activated = cursor.rowcount > 0
        return await self.get_summary(summary_id), activated

    async def fail_summary(self, summary_id: int, *, owner: str | None, error: str) -> Summary:
        """Record a failed attempt (its error is never used as summary text)."""
        clause = " AND lease_owner = ?" if owner is not None else ""
        params: tuple[Any, ...] = (clean_text(error)[:2000], utc_now(), summary_id)
        if owner is not None:
            params = (*params, owner)
        async with self.transaction() as db:
            await db.execute(
                "UPDATE summaries SET status = 'failed', error = ?, completed_at = ?, "
                "lease_owner = NULL, lease_expires_at = NULL "
                f"WHERE id = ? AND status = 'in_progress'{clause}",
                params,
            )
        return await self.get_summary(summary_id)

    async def activate(self, conversation_id: str, summary_id: int | None) -> None:
        """Put a completed version in force (roll back / forward); ``None`` = no summary."""
        async with self.transaction() as db:
            if summary_id is not None:
                async with db.execute(
                    "SELECT status FROM summaries WHERE id = ? AND conversation_id = ?",
                    (summary_id, conversation_id),
                ) as cursor:
                    row = await cursor.fetchone()
                if row is None:
                    raise NotFound(f"no summary {summary_id} in conversation {conversation_id}")
                if row[0] != "completed":
                    raise Conflict(f"summary {summary_id} is {row[0]}, not completed")
            await db.execute(
                "UPDATE conversations SET active_summary_id = ? WHERE id = ?",
                (summary_id, conversation_id),
            )

    async def consecutive_failures(self, conversation_id: str) -> int:
        """Failed automatic attempts since the last completed version."""
        rows = await self._all(
            "SELECT status, trigger FROM summaries WHERE conversation_id = ? AND status != "
            "'in_progress' ORDER BY version DESC LIMIT 10",
            (conversation_id,),
        )
        count = 0
        for row in rows:
            if row["status"] == "completed":
                break
            if row["trigger"] in ("auto", "emergency"):
                count += 1
        return count

    # -- calibration ---------------------------------------------------------------------

    async def calibration(self, model: str) -> tuple[float, int]:
        """``(ratio, samples)`` of real/estimated input tokens for a model (1.0, 0 if none)."""
        row = await self._one("SELECT ratio, samples FROM calibration WHERE model = ?", (model,))
        return (float(row[0]), int(row[1])) if row else (1.0, 0)

    async def set_calibration(self, model: str, ratio: float, samples: int) -> None:
        """Store a model's calibration."""
        async with self.transaction() as db:
            await db.execute(
                "INSERT INTO calibration (model, ratio, samples) VALUES (?, ?, ?) "
                "ON CONFLICT(model) DO UPDATE SET ratio = excluded.ratio, "
                "samples = excluded.samples",
                (model, ratio, samples),
            )

    # -- maintenance ---------------------------------------------------------------------

    async def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` ("ok" when healthy)."""
        try:
            rows = await self._all("PRAGMA integrity_check")
        except sqlite3.DatabaseError as exc:  # damage bad enough to stop the check itself
            return f"failed: {exc}"
        return "; ".join(str(r[0]) for r in rows)

    async def backup(self, target: Path) -> None:
        """Copy the database to ``target`` with SQLite's online backup API."""
        target = Path(target).expanduser()
        if target.exists():
            raise StoreError(f"{target} exists; choose a new file name")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        os.close(fd)
        async with aiosqlite.connect(str(target)) as dest:
            await self._db.backup(dest)
