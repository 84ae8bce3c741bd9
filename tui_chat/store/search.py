"""The search repository: full-text search for people, and recall for the request builder.

Both run over the FTS5 index of message text; :mod:`tui_chat.store.fts` turns user text into
queries that can never be FTS5 syntax.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tui_chat.core.models import HIT_END, HIT_START, Message, SearchHit
from tui_chat.store import fts, search_index
from tui_chat.store.messages import Messages
from tui_chat.store.sql import Sql

RECALL_HITS = 24
"""Messages of the compacted prefix found by search; each brings the message after it."""
COMMON_DOCS = 1_000
"""A recall word found in at least this many messages is too common to search by: it would
rank thousands of rows (cost growing with the history) and says little about relevance."""
RANKED_DOCS = 3_000
"""Most matches recall ranks: the rarest words are searched until their matches reach this."""
RECENT_SPAN = 5_000
"""When every word is common, recall searches only this many of the newest message ids."""

_RECALL = (
    "SELECT m.id, (SELECT min(n.id) FROM messages n "
    "  WHERE n.conversation_id = m.conversation_id AND n.id > m.id AND n.id <= ?) "
    "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
    "WHERE messages_fts MATCH ? AND messages_fts.rowid <= ? AND messages_fts.rowid > ? "
    "AND messages_fts.rowid >= (SELECT min(id) FROM messages WHERE conversation_id = ?) "
    "AND m.conversation_id = ? ORDER BY messages_fts.rank LIMIT ?"
)


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

    async def recall(self, conversation_id: str, query: str, coverage: int) -> list[Message]:
        """Excerpt candidates from the compacted prefix (ids up to ``coverage``), best first.

        The words of ``query`` are searched by stem (:func:`fts.recall_phrase`) and ranked by
        BM25. The rarest words are searched, until their matches reach :data:`RANKED_DOCS`;
        words that :data:`COMMON_DOCS` messages share are left out when rarer ones exist, so
        the search costs about the same for a 1,000- and a 100,000-message history; when every
        word is that common only the newest :data:`RECENT_SPAN` ids are searched. Each hit is
        followed by the message after it in the conversation — the reply to a recalled
        question, the follow-up to a recalled answer — because a conversation keeps what was
        said in exchanges: the words of a question often sit in one message and the fact in
        the next.

        Args:
            conversation_id: The conversation.
            query: The new user message.
            coverage: The active summary's ``covers_to_message_id``.

        Returns:
            Messages to offer as excerpts, best first (the builder takes what fits its budget).
        """
        phrases = [fts.recall_phrase(w) for w in fts.recall_terms(query)]
        if not phrases:
            return []
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
        # ``rank`` (BM25 by default) lets FTS5 order the matches itself, twice as fast as
        # ``bm25()`` per row; the rowid bounds skip matches outside the conversation's span.
        params = (
            coverage,
            " OR ".join(chosen),
            coverage,
            lowest,
            conversation_id,
            conversation_id,
            RECALL_HITS,
        )
        order: dict[int, None] = {}
        for hit, following in await self._sql.all(_RECALL, params):
            order.setdefault(int(hit), None)
            if following is not None:
                order.setdefault(int(following), None)
        by_id = {m.id: m for m in await self._messages.get_many(list(order))}
        return [by_id[i] for i in order if i in by_id]

    async def _index_rows(self, sql: str, params: Sequence[Any]) -> list[sqlite3.Row]:
        """Rows of a query over ``messages_fts``; a missing or damaged index raises
        :class:`~tui_chat.store.search_index.SearchIndexError` (what to do included)."""
        try:
            return await self._sql.all(sql, params)
        except sqlite3.DatabaseError as exc:
            if not search_index.is_index_error(exc):
                raise
            raise search_index.index_error(exc) from None

    async def _doc_counts(self, phrases: Sequence[str]) -> list[int]:
        """How many messages (of any conversation) each phrase matches, capped at COMMON_DOCS."""
        sql = " UNION ALL ".join(
            f"SELECT {i}, (SELECT count(*) FROM (SELECT rowid FROM messages_fts "
            "WHERE messages_fts MATCH ? LIMIT ?))"
            for i in range(len(phrases))
        )
        params: list[Any] = []
        for phrase in phrases:
            params += [phrase, COMMON_DOCS]
        counts = [0] * len(phrases)
        for index, count in await self._sql.all(sql, params):
            counts[int(index)] = int(count)
        return counts
