"""The messages repository: append, complete, read and page a conversation's messages.

Messages are appended; a streaming reply completes (:meth:`Messages.update`); a message is
deleted only on request (:meth:`Messages.delete`) or with its conversation.
The raw tail a request is built from is read incrementally by the engine
(:mod:`tui_chat.engine.build.tail`) with :meth:`Messages.history`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import aiosqlite

from tui_chat.core.clock import Clock
from tui_chat.core.models import ContentBlock, Message, MessageStatus, Role, Usage
from tui_chat.core.turns import starts_turn
from tui_chat.store.deletion import delete_messages
from tui_chat.store.errors import NotFound
from tui_chat.store.rows import MESSAGE_COLUMNS, clean_text, clean_value, message_from, to_json
from tui_chat.store.sql import Sql
from tui_chat.store.usage import PRICE_GROUP, USAGE_SUMS, summed_usage

BATCH = 1_000
"""Messages written per ``executemany`` by :meth:`Messages.add_many`."""

_INSERT = (
    f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


async def _last_turn(db: aiosqlite.Connection, conversation_id: str) -> int:
    async with db.execute(
        "SELECT turn FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 1",
        (conversation_id,),
    ) as cursor:
        last = await cursor.fetchone()
    return int(last[0]) if last else 0


def _insert_row(
    conversation_id: str, turn: int, fields: dict[str, Any], clock: Clock
) -> tuple[Any, ...]:
    """The :data:`_INSERT` parameters of one message given as :meth:`Messages.add` keywords
    (stamped by ``clock`` unless they say when it was written)."""
    usage: Usage | None = fields.get("usage")
    error: str | None = fields.get("error")
    return (
        conversation_id,
        fields["role"],
        to_json(fields["content"]),
        clean_text(fields["text"]),
        turn,
        int(fields["token_count"]),
        fields.get("status", "complete"),
        fields.get("model"),
        to_json(usage.to_dict()) if usage else None,
        fields.get("stop_reason"),
        fields.get("created_at") or clock.now(),
        clean_text(error) if error else None,
    )


async def _write(
    db: aiosqlite.Connection,
    params: list[tuple[Any, ...]],
    progress: Callable[[int], None] | None,
    before: int,
) -> int:
    """Insert one batch of :data:`_INSERT` rows; report the running total. Returns its size."""
    if params:
        await db.executemany(_INSERT, params)
        if progress is not None:
            progress(before + len(params))
    return len(params)


async def _touch(db: aiosqlite.Connection, conversation_id: str, now: str) -> None:
    await db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))


class Messages:
    """The ``messages`` table (its full-text index follows through triggers)."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def add(
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
        clear_draft: bool = False,
    ) -> Message:
        """Append a message; its turn number follows docs/design.md ("Turns").

        ``clear_draft`` (a send) removes the conversation's draft in the same transaction, so
        a prompt once stored never comes back to the composer, whenever the process dies.
        """
        content = clean_value(content)
        fields = {
            "role": role,
            "content": content,
            "text": text,
            "token_count": token_count,
            "status": status,
            "model": model,
            "usage": usage,
            "stop_reason": stop_reason,
            "created_at": created_at,
            "error": error,
        }
        async with self._sql.transaction() as db:
            last_turn = await _last_turn(db, conversation_id)
            turn = last_turn + 1 if (starts_turn(role, content) or last_turn == 0) else last_turn
            cursor = await db.execute(
                _INSERT, _insert_row(conversation_id, turn, fields, self._sql.clock)
            )
            message_id = cursor.lastrowid
            await _touch(db, conversation_id, self._sql.clock.now())
            if clear_draft:
                await db.execute("DELETE FROM drafts WHERE conversation_id = ?", (conversation_id,))
        assert message_id is not None
        return await self.get(message_id)

    async def add_many(
        self,
        conversation_id: str,
        rows: Iterable[dict[str, Any]],
        *,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Bulk-append messages in one transaction (import, benchmarks). Returns the count.

        Rows are taken from ``rows`` and written :data:`BATCH` at a time, so a generator of
        rows is never held whole in memory; an exception from it (or a failed write) rolls
        back every batch. Each row has the keyword arguments of :meth:`add`.

        Args:
            conversation_id: The conversation.
            rows: The messages, oldest first.
            progress: Called with the number written so far after each batch.
        """
        written = 0
        async with self._sql.transaction() as db:
            turn = await _last_turn(db, conversation_id)
            params: list[tuple[Any, ...]] = []
            for row in rows:
                content = clean_value(row["content"])
                if starts_turn(row["role"], content) or turn == 0:
                    turn += 1
                params.append(
                    _insert_row(conversation_id, turn, {**row, "content": content}, self._sql.clock)
                )
                if len(params) == BATCH:
                    written += await _write(db, params, progress, written)
                    params = []
            written += await _write(db, params, progress, written)
            await _touch(db, conversation_id, self._sql.clock.now())
        return written

    async def texts(self, conversation_id: str, *, up_to_id: int) -> list[str]:
        """The plain text of a conversation's messages up to ``up_to_id``, oldest first.

        Only the ``text`` column is read (no content parsed): what a check over a long span
        (identifier retention) needs, at a fifth of the memory of the messages themselves.
        """
        rows = await self._sql.all(
            "SELECT text FROM messages WHERE conversation_id = ? AND id <= ? ORDER BY id",
            (conversation_id, up_to_id),
        )
        return [str(r[0]) for r in rows]

    async def ids(self, conversation_id: str) -> list[int]:
        """Every message id of a conversation, oldest first (no row is read or parsed)."""
        rows = await self._sql.all(
            "SELECT id FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
        )
        return [int(r[0]) for r in rows]

    async def update(
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
        api_id: str | None = None,
    ) -> Message:
        """Change a streaming reply as it completes (the only rewrite a message gets);
        ``api_id`` is the API's id of the reply (``msg_…``, for cache diagnostics)."""
        values: dict[str, Any] = {}
        if api_id is not None:
            values["api_id"] = api_id
        if content is not None:
            values["content"] = to_json(clean_value(content))
        if text is not None:
            values["text"] = clean_text(text)
        if token_count is not None:
            values["token_count"] = token_count
        if status is not None:
            values["status"] = status
        if model is not None:
            values["model"] = model
        if usage is not None:
            values["usage"] = to_json(usage.to_dict())
        if stop_reason is not None:
            values["stop_reason"] = stop_reason
        if error is not None:
            values["error"] = clean_text(error)
        await self._set(message_id, values)
        return await self.get(message_id)

    async def keep_partial(self, message_id: int, content: list[ContentBlock], text: str) -> None:
        """Write what a streaming reply holds so far (twice a second while it streams): the
        reply is not read back, as :meth:`update` does, since nobody shows this copy."""
        await self._set(
            message_id, {"content": to_json(clean_value(content)), "text": clean_text(text)}
        )

    async def _set(self, message_id: int, values: dict[str, Any]) -> None:
        if values:
            assignments = ", ".join(f"{k} = ?" for k in values)
            async with self._sql.transaction() as db:
                await db.execute(
                    f"UPDATE messages SET {assignments} WHERE id = ?",
                    (*values.values(), message_id),
                )

    async def api_id(self, message_ids: Sequence[int]) -> str | None:
        """The API id of the newest of these messages that has one (the reply the next
        request follows: its ``diagnostics.previous_message_id``)."""
        row = await self._sql.one(
            "SELECT api_id FROM messages WHERE id IN (SELECT value FROM json_each(?)) "
            "AND api_id IS NOT NULL ORDER BY id DESC LIMIT 1",
            (to_json(list(message_ids)),),
        )
        return str(row[0]) if row else None

    async def delete(self, conversation_id: str, message_ids: Sequence[int]) -> list[int]:
        """Delete messages of a conversation (:mod:`~tui_chat.store.deletion`: its pins go,
        branches part before them, the summary versions covering them are marked stale).
        Returns the stale versions."""
        return await delete_messages(self._sql, conversation_id, message_ids)

    async def get(self, message_id: int) -> Message:
        """One message by id. Raises :class:`NotFound`."""
        row = await self._sql.one(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        )
        if row is None:
            raise NotFound(f"no message {message_id}")
        return message_from(row)

    async def get_many(self, message_ids: Sequence[int]) -> list[Message]:
        """Several messages by id, in id order (missing ids are skipped)."""
        if not message_ids:
            return []
        marks = ", ".join("?" for _ in message_ids)
        rows = await self._sql.all(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id IN ({marks}) ORDER BY id",
            tuple(message_ids),
        )
        return [message_from(r) for r in rows]

    async def history(
        self,
        conversation_id: str,
        *,
        after_id: int | None = None,
        up_to_id: int | None = None,
        before_id: int | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> list[Message]:
        """A conversation's messages in id order.

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
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)} "
            f"ORDER BY id {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = await self._sql.all(sql, params)
        messages = [message_from(r) for r in rows]
        if newest:
            messages.reverse()
        return messages

    async def stats(self, conversation_id: str, *, after_id: int | None = None) -> tuple[int, int]:
        """``(count, tokens)`` of the conversation's messages after ``after_id``."""
        row = await self._sql.one(
            "SELECT count(*), IFNULL(sum(token_count), 0) FROM messages "
            "WHERE conversation_id = ? AND id > ?",
            (conversation_id, after_id or 0),
        )
        assert row is not None
        return int(row[0]), int(row[1])

    async def tokens_upto(self, conversation_id: str, up_to_id: int) -> int:
        """The stored token counts of the conversation's messages up to ``up_to_id``, summed:
        its kept total less the messages after ``up_to_id`` (the raw tail, which a build reads
        anyway), so the cost does not grow with the history."""
        row = await self._sql.one(
            "SELECT IFNULL((SELECT tokens FROM conversation_totals WHERE conversation_id = ?), 0)"
            " - (SELECT IFNULL(sum(token_count), 0) FROM messages "
            "WHERE conversation_id = ? AND id > ?)",
            (conversation_id, conversation_id, up_to_id),
        )
        return int(row[0]) if row is not None else 0

    async def last(self, conversation_id: str) -> Message | None:
        """The newest message, if any."""
        messages = await self.history(conversation_id, limit=1, newest=True)
        return messages[0] if messages else None

    async def usage_totals(self, conversation_id: str) -> list[tuple[str, Usage, int]]:
        """Summed API usage of a conversation's replies, per model, speed and prompt tier
        (every count of :class:`Usage`, so the 1-hour cache writes are priced at their own
        rate), each with the least prompt of its group (:func:`summed_usage`)."""
        rows = await self._sql.all(
            f"SELECT IFNULL(model, ''), {USAGE_SUMS} FROM messages "
            f"WHERE conversation_id = ? AND usage IS NOT NULL GROUP BY model, {PRICE_GROUP}",
            (conversation_id,),
        )
        return [(str(r[0]), *summed_usage(r[1:])) for r in rows]
