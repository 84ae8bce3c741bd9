"""The search repository: full-text search for people, and recall hops for the request builder.

Both run over the FTS5 index of message text; :mod:`tui_chat.store.fts` turns user text into
queries that can never be FTS5 syntax.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tui_chat.core.models import HIT_END, HIT_START, SearchHit
from tui_chat.core.request.recall import Hit, bm25
from tui_chat.store import fts, search_index
from tui_chat.store.messages import Messages
from tui_chat.store.sql import Sql

RECALL_HITS = 64
"""Messages of the compacted prefix one recall hop returns, best first."""
COMMON_DOCS = 1_000
"""A recall word found in at least this many messages of the conversation is too common to
search by: it would rank thousands of rows (cost growing with the history) and says little
about relevance."""
RANKED_DOCS = 3_000
"""Most matches recall ranks: the rarest words are searched until their matches reach this."""
RECENT_SPAN = 5_000
"""When every word is common, recall searches only this many of the newest message ids."""

_TERM_ROWS = (
    "SELECT {index}, m.id, length(m.text), "
    "length(highlight(messages_fts, 0, char(1), '')) - length(m.text) "
    "FROM messages_fts CROSS JOIN messages m ON m.id = messages_fts.rowid "
    "WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND messages_fts.rowid > ? "
    "AND m.conversation_id = ?"
)
"""One searched word's matches in a conversation's span: the message, its text's length and
how often the word occurs in it (the marks ``highlight()`` puts in, one per occurrence)."""
_SPAN = "SELECT min(id), count(*) FROM messages WHERE conversation_id = ? AND id <= ? AND id > ?"
_PREFIX = (
    "SELECT (SELECT min(id) FROM messages WHERE conversation_id = ?), "
    "(SELECT messages FROM conversation_totals WHERE conversation_id = ?) - "
    "(SELECT count(*) FROM messages WHERE conversation_id = ? AND id > ?)"
)
"""The prefix up to a coverage: its first id and its size, the conversation's kept total less
the messages after it (what the raw tail reads anyway), so no query counts the whole history."""


_NEIGHBOURS = (
    "SELECT ?, (SELECT max(id) FROM messages WHERE conversation_id = ? AND id < ?), "
    "(SELECT min(id) FROM messages WHERE conversation_id = ? AND id > ? AND id <= ?)"
)
_NEIGHBOUR_CHUNK = 150
"""Ids per neighbours query (6 parameters each, well under SQLite's limit)."""
_FETCH_IDS = 900
"""Ids per ``IN (…)`` query."""
COUNT_CAP = 100
"""Messages counted per word for the second hop: a word in more says nothing rare."""


class Search:
    """Queries over ``messages_fts``."""

    def __init__(self, sql: Sql, messages: Messages) -> None:
        """Use the store's shared connection and its messages (recall returns messages)."""
        self._sql = sql
        self._messages = messages

    async def find(
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
        rows = await self._index_rows(
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

    async def recall_counts(
        self, conversation_id: str, words: Sequence[str], coverage: int
    ) -> tuple[list[int], int]:
        """How many messages of the conversation's compacted prefix (ids up to ``coverage``)
        each word's recall phrase matches (capped at :data:`COMMON_DOCS`), and how many
        messages the prefix holds, for each word's idf
        (:func:`~tui_chat.core.request.recall.idf`). Other conversations count for nothing: a
        request depends on its own conversation only.

        Args:
            conversation_id: The conversation.
            words: Lower-cased words (see :func:`fts.recall_terms`).
            coverage: The active summary's ``covers_to_message_id``.

        Returns:
            The counts in the order of ``words``, and the message total.
        """
        first, total = await self._span(conversation_id, coverage, 0)
        phrases = [fts.recall_phrase(w) for w in words]
        counts = await self._doc_counts(phrases, conversation_id, first, coverage)
        return counts, total

    async def recall_hits(
        self,
        conversation_id: str,
        words: Sequence[str],
        coverage: int,
        counts: Sequence[int] | None = None,
        limit: int = RECALL_HITS,
    ) -> list[Hit]:
        """BM25 hits for ``words`` in the compacted prefix (ids up to ``coverage``), best first.

        Each word is searched by stem (:func:`fts.recall_phrase`). The rarest words are
        searched, until their matches reach :data:`RANKED_DOCS`; words that
        :data:`COMMON_DOCS` messages share are left out when rarer ones exist, so the search
        costs about the same for a 1,000- and a 100,000-message history; when every word is
        that common only the rarest of them, in the newest :data:`RECENT_SPAN` ids. The
        matches are ranked by a BM25 of the conversation alone
        (:func:`~tui_chat.core.request.recall.bm25`), so no other conversation in the database
        changes the order; at most ``limit`` hits (:data:`RECALL_HITS`): one hop of passage
        recall (:mod:`tui_chat.core.request.recall`).

        Args:
            conversation_id: The conversation.
            words: Lower-cased words (see :func:`fts.recall_terms`).
            coverage: The active summary's ``covers_to_message_id``.
            counts: The words' counts from :meth:`recall_counts`, when already read.
            limit: Most hits returned.

        Returns:
            Hits with their relevance (higher is better).
        """
        phrases = [fts.recall_phrase(w) for w in words]
        if not phrases:
            return []
        if counts is None:
            first, _ = await self._span(conversation_id, coverage, 0)
            counts = await self._doc_counts(phrases, conversation_id, first, coverage)
        ranked = sorted((n, i) for i, n in enumerate(counts) if n > 0)
        if not ranked:
            return []
        chosen: list[str] = []
        matches = 0
        for n, i in ranked:
            if n >= COMMON_DOCS or (chosen and matches + n > RANKED_DOCS):
                break
            chosen.append(phrases[i])
            matches += n
        lowest = 0
        if not chosen:
            # Every word is common: the rarest few, in the newest ids only.
            chosen = [phrases[i] for _, i in ranked[: max(1, RANKED_DOCS // COMMON_DOCS)]]
            lowest = max(0, coverage - RECENT_SPAN)
        return await self._ranked(conversation_id, chosen, coverage, lowest, limit)

    async def _ranked(
        self,
        conversation_id: str,
        phrases: Sequence[str],
        coverage: int,
        lowest: int,
        limit: int = RECALL_HITS,
    ) -> list[Hit]:
        """The best ``limit`` of the conversation's messages with ids in
        ``(lowest, coverage]`` matching any of ``phrases``, by a BM25 of that span alone
        (:func:`~tui_chat.core.request.recall.bm25`)."""
        first, docs = await self._span(conversation_id, coverage, lowest)
        if not docs:
            return []
        sql = " UNION ALL ".join(_TERM_ROWS.format(index=i) for i in range(len(phrases)))
        params: list[Any] = []
        for phrase in phrases:
            params += [phrase, coverage, max(lowest, first - 1), conversation_id]
        term_hits: list[dict[int, int]] = [{} for _ in phrases]
        lengths: dict[int, int] = {}
        for index, message_id, length, marks in await self._index_rows(sql, params):
            term_hits[int(index)][int(message_id)] = max(1, int(marks))
            lengths[int(message_id)] = int(length)
        return bm25(term_hits, lengths, docs)[:limit]

    async def word_counts(
        self, conversation_id: str, words: Sequence[str], coverage: int
    ) -> dict[str, int]:
        """How many messages of the conversation up to ``coverage`` hold each exact word
        (capped at :data:`COUNT_CAP`).

        Args:
            conversation_id: The conversation.
            words: Lower-cased words of letters and digits.
            coverage: The highest id counted.

        Returns:
            Word -> message count (at most :data:`COUNT_CAP`).
        """
        safe = [w for w in words if w.isalnum()]
        if not safe:
            return {}
        first, _ = await self._span(conversation_id, coverage, 0)
        phrases = [f'"{w}"' for w in safe]
        counts = await self._doc_counts(phrases, conversation_id, first, coverage, COUNT_CAP)
        return dict(zip(safe, counts, strict=True))

    async def neighbours(
        self, conversation_id: str, ids: Sequence[int], coverage: int
    ) -> dict[int, tuple[int | None, int | None]]:
        """Each message's previous and next message in the conversation, up to ``coverage``.

        Two index lookups per id (``messages(conversation_id, id)``), whatever the history.

        Args:
            conversation_id: The conversation.
            ids: Message ids.
            coverage: The highest id to return as a next message.

        Returns:
            Id -> ``(previous id, next id)``, ``None`` at an edge.
        """
        out: dict[int, tuple[int | None, int | None]] = {}
        # Mostly a message's neighbours are the ids next to it: one query checks them all.
        near = sorted({i + d for i in ids for d in (-1, 1)})
        present: set[int] = set()
        for start in range(0, len(near), _FETCH_IDS):
            chunk = near[start : start + _FETCH_IDS]
            marks = ",".join("?" * len(chunk))
            rows = await self._sql.all(
                f"SELECT id FROM messages WHERE conversation_id = ? AND id IN ({marks})",
                [conversation_id, *chunk],
            )
            present.update(int(r[0]) for r in rows)
        unsure: list[int] = []
        for i in ids:
            before = i - 1 if i - 1 in present else None
            after = i + 1 if i + 1 in present and i + 1 <= coverage else None
            if before is None or (after is None and i < coverage):
                unsure.append(i)  # another conversation's message (or none) sits next to it
            out[i] = (before, after)
        for start in range(0, len(unsure), _NEIGHBOUR_CHUNK):
            chunk = unsure[start : start + _NEIGHBOUR_CHUNK]
            sql = " UNION ALL ".join([_NEIGHBOURS] * len(chunk))
            params: list[Any] = []
            for message_id in chunk:
                params += [message_id, conversation_id, message_id]
                params += [conversation_id, message_id, coverage]
            for message_id, before, after in await self._sql.all(sql, params):
                out[int(message_id)] = (before, after)
        return out

    async def _index_rows(self, sql: str, params: Sequence[Any]) -> list[sqlite3.Row]:
        """Rows of a query over ``messages_fts``; a missing or damaged index raises
        :class:`~tui_chat.store.search_index.SearchIndexError` (what to do included)."""
        try:
            return await self._sql.all(sql, params)
        except sqlite3.DatabaseError as exc:
            if not search_index.is_index_error(exc):
                raise
            raise search_index.index_error(exc) from None

    async def _span(self, conversation_id: str, coverage: int, lowest: int) -> tuple[int, int]:
        """The lowest id and the number of the conversation's messages with ids in
        ``(lowest, coverage]`` (from the ``(conversation_id, id)`` index alone; the whole prefix
        from the kept totals, at most :data:`RECENT_SPAN` ids otherwise)."""
        if lowest <= 0:
            row = await self._sql.one(_PREFIX, (conversation_id,) * 3 + (coverage,))
        else:
            row = await self._sql.one(_SPAN, (conversation_id, coverage, lowest))
        if row is None or row[0] is None:
            return coverage + 1, 0
        return int(row[0]), int(row[1])

    async def _doc_counts(
        self,
        phrases: Sequence[str],
        conversation_id: str,
        first: int,
        coverage: int,
        cap: int = COMMON_DOCS,
    ) -> list[int]:
        """How many of the conversation's messages with ids in ``[first, coverage]`` each
        phrase matches, capped at ``cap``."""
        if not phrases:
            return []
        sql = " UNION ALL ".join(
            f"SELECT {i}, (SELECT count(*) FROM (SELECT m.id FROM messages_fts "
            "CROSS JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ? "
            "AND messages_fts.rowid >= ? AND messages_fts.rowid <= ? "
            "AND m.conversation_id = ? LIMIT ?))"
            for i in range(len(phrases))
        )
        params: list[Any] = []
        for phrase in phrases:
            params += [phrase, first, coverage, conversation_id, cap]
        counts = [0] * len(phrases)
        for index, count in await self._index_rows(sql, params):
            counts[int(index)] = int(count)
        return counts
