"""The search repository: full-text search for people, and recall hops for the request builder.

Both run over the FTS5 index of message text; :mod:`tui_chat.store.fts` turns user text into
queries that can never be FTS5 syntax.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tui_chat.core.models import HIT_END, HIT_START, SearchHit
from tui_chat.core.request.recall import Hit
from tui_chat.store import fts, search_index
from tui_chat.store.messages import Messages
from tui_chat.store.sql import Sql

RECALL_HITS = 64
"""Messages of the compacted prefix one recall hop ranks (the FTS5 ``LIMIT``)."""
COMMON_DOCS = 1_000
"""A recall word found in at least this many messages is too common to search by: it would
rank thousands of rows (cost growing with the history) and says little about relevance."""
RANKED_DOCS = 3_000
"""Most matches recall ranks: the rarest words are searched until their matches reach this."""
RECENT_SPAN = 5_000
"""When every word is common, recall searches only this many of the newest message ids."""

_RECALL = (
    "SELECT m.id, messages_fts.rank "
    "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
    "WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND messages_fts.rowid > ? "
    "AND messages_fts.rowid >= (SELECT min(id) FROM messages WHERE conversation_id = ?) "
    "AND m.conversation_id = ? ORDER BY messages_fts.rank LIMIT ?"
)


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

    async def recall_counts(self, words: Sequence[str]) -> tuple[list[int], int]:
        """How many messages each word's recall phrase matches (capped at
        :data:`COMMON_DOCS`), and about how many messages there are (the highest id: one index
        lookup), for each word's idf (:func:`~tui_chat.core.request.recall.idf`).

        Args:
            words: Lower-cased words (see :func:`fts.recall_terms`).

        Returns:
            The counts in the order of ``words``, and the message total.
        """
        counts = await self._doc_counts([fts.recall_phrase(w) for w in words]) if words else []
        row = await self._sql.one("SELECT max(id) FROM messages")
        total = int(row[0]) if row is not None and row[0] is not None else 0
        return counts, total

    async def recall_hits(
        self,
        conversation_id: str,
        words: Sequence[str],
        coverage: int,
        counts: Sequence[int] | None = None,
    ) -> list[Hit]:
        """BM25 hits for ``words`` in the compacted prefix (ids up to ``coverage``), best first.

        Each word is searched by stem (:func:`fts.recall_phrase`). The rarest words are
        searched, until their matches reach :data:`RANKED_DOCS`; words that
        :data:`COMMON_DOCS` messages share are left out when rarer ones exist, so the search
        costs about the same for a 1,000- and a 100,000-message history; when every word is
        that common only the newest :data:`RECENT_SPAN` ids are searched. At most
        :data:`RECALL_HITS` hits (the FTS5 ``LIMIT``): one hop of passage recall
        (:mod:`tui_chat.core.request.recall`).

        Args:
            conversation_id: The conversation.
            words: Lower-cased words (see :func:`fts.recall_terms`).
            coverage: The active summary's ``covers_to_message_id``.
            counts: The words' counts from :meth:`recall_counts`, when already read.

        Returns:
            Hits with their relevance (higher is better).
        """
        phrases = [fts.recall_phrase(w) for w in words]
        if not phrases:
            return []
        if counts is None:
            counts = await self._doc_counts(phrases)
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
            chosen, lowest = [phrases[i] for _, i in ranked], max(0, coverage - RECENT_SPAN)
        # ``rank`` (BM25 by default, lower is better) lets FTS5 order the matches itself,
        # twice as fast as ``bm25()`` per row; the rowid bounds skip matches outside the
        # conversation's span.
        params = (" OR ".join(chosen), coverage, lowest, conversation_id, conversation_id)
        rows = await self._index_rows(_RECALL, (*params, RECALL_HITS))
        return [Hit(int(message_id), -float(rank)) for message_id, rank in rows]

    async def word_counts(self, words: Sequence[str]) -> dict[str, int]:
        """How many messages hold each exact word (capped at :data:`COMMON_DOCS`).

        Args:
            words: Lower-cased words of letters and digits.

        Returns:
            Word -> message count (at most :data:`COUNT_CAP`).
        """
        safe = [w for w in words if w.isalnum()]
        if not safe:
            return {}
        counts = await self._doc_counts([f'"{w}"' for w in safe], cap=COUNT_CAP)
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

    async def _doc_counts(self, phrases: Sequence[str], cap: int = COMMON_DOCS) -> list[int]:
        """How many messages (of any conversation) each phrase matches, capped at ``cap``."""
        sql = " UNION ALL ".join(
            f"SELECT {i}, (SELECT count(*) FROM (SELECT rowid FROM messages_fts "
            "WHERE messages_fts MATCH ? LIMIT ?))"
            for i in range(len(phrases))
        )
        params: list[Any] = []
        for phrase in phrases:
            params += [phrase, cap]
        counts = [0] * len(phrases)
        for index, count in await self._index_rows(sql, params):
            counts[int(index)] = int(count)
        return counts
