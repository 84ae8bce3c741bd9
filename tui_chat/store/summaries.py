"""The summaries repository: versioned summaries, their compaction leases, and activation.

One ``in_progress`` row per conversation is the compaction lease (owner + expiry). A finished
version becomes active by compare-and-swap: only if the conversation's active version is still
its parent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_chat.core.models import (
    Segment,
    Strategy,
    Summary,
    SummaryCall,
    SummaryTrigger,
)
from tui_chat.store.errors import Conflict, NotFound
from tui_chat.store.owners import owner_is_dead
from tui_chat.store.rows import (
    SUMMARY_COLUMNS,
    block_problem,
    clean_text,
    clean_value,
    qualified,
    summary_from,
    to_json,
)
from tui_chat.store.sql import Sql


@dataclass(frozen=True, slots=True)
class SummaryStart:
    """What a new in-progress version fixes when its compaction starts."""

    conversation_id: str
    parent_id: int | None
    """The version it extends (the active one when work starts), or ``None``."""
    strategy: Strategy
    covers_to_message_id: int
    """The boundary: the last message it folds (fixed now, never moved)."""
    trigger: SummaryTrigger
    owner: str
    """Who holds the lease (one process's compaction worker)."""
    lease_seconds: float
    instructions: str | None = None
    """The user's instructions for the summarizer, if any."""


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What a finished compaction records on its version."""

    text: str
    segments: Sequence[Segment]
    fields: dict[str, Any]
    """The structured fields the summarizer filled in."""
    covered_messages: int
    """Messages the version covers, its parent's included."""
    source_tokens: int
    summary_tokens: int
    summarizer: str
    identifiers_kept: int
    identifiers_total: int
    call: SummaryCall | None = None
    """What the summary call cost (``None``: no model was called)."""
    compaction_block: dict[str, Any] | None = None
    """The ``server`` summarizer's block, exactly as received."""
    ledger: Sequence[dict[str, Any]] = ()
    """The identifier ledger of the span (:func:`tui_chat.core.ledger.to_json`)."""


class Summaries:
    """The ``summaries`` table and the conversations' active-version pointer."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def _where(self, condition: str, params: Sequence[Any]) -> Summary | None:
        row = await self._sql.one(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE {condition}", params
        )
        return summary_from(row) if row else None

    async def get(self, summary_id: int) -> Summary:
        """One summary row by id. Raises :class:`NotFound`."""
        summary = await self._where("id = ?", (summary_id,))
        if summary is None:
            raise NotFound(f"no summary {summary_id}")
        return summary

    async def get_version(self, conversation_id: str, version: int) -> Summary:
        """A conversation's summary by version number. Raises :class:`NotFound`."""
        summary = await self._where(
            "conversation_id = ? AND version = ?", (conversation_id, version)
        )
        if summary is None:
            raise NotFound(f"conversation {conversation_id} has no summary version {version}")
        return summary

    async def versions(self, conversation_id: str) -> list[Summary]:
        """Every version of a conversation, newest first."""
        rows = await self._sql.all(
            f"SELECT {SUMMARY_COLUMNS} FROM summaries WHERE conversation_id = ? "
            "ORDER BY version DESC",
            (conversation_id,),
        )
        return [summary_from(r) for r in rows]

    async def check_blocks(self) -> str:
        """``ok``, or each version whose server-compaction block is damaged and what to do."""
        rows = await self._sql.all(
            "SELECT s.conversation_id, s.version, s.compaction_block, "
            "c.active_summary_id = s.id FROM summaries s "
            "JOIN conversations c ON c.id = s.conversation_id "
            "WHERE s.compaction_block IS NOT NULL ORDER BY s.conversation_id, s.version"
        )
        found = [
            f"{r[0]} version {r[1]}{' (in force)' if r[3] else ''}: {why}"
            for r in rows
            if (why := block_problem(r[2])) is not None
        ]
        if not found:
            return "ok"
        return (
            f"{len(found)} damaged compaction block(s), sent as text summaries: "
            + "; ".join(found)
            + " — `tui-chat rollback CONV VERSION` puts another version in force, "
            "`tui-chat regenerate CONV VERSION` makes a new one"
        )

    async def active(self, conversation_id: str) -> Summary | None:
        """The version in force, if any."""
        row = await self._sql.one(
            f"SELECT {qualified(SUMMARY_COLUMNS, 's')} FROM conversations c "
            "JOIN summaries s ON s.id = c.active_summary_id WHERE c.id = ?",
            (conversation_id,),
        )
        return summary_from(row) if row else None

    async def begin(self, start: SummaryStart) -> Summary:
        """Claim the conversation's compaction lease with a new in-progress version.

        Raises:
            Conflict: another live lease exists, or an automatic version for this boundary
                already exists (two engines racing for one boundary).
        """
        now = self._sql.clock.time()
        try:
            async with self._sql.transaction() as db:
                async with db.execute(
                    "SELECT id, lease_expires_at FROM summaries "
                    "WHERE conversation_id = ? AND status = 'in_progress'",
                    (start.conversation_id,),
                ) as cursor:
                    live = await cursor.fetchone()
                if live is not None:
                    raise Conflict(f"compaction already running (version row {live[0]})")
                async with db.execute(
                    "SELECT IFNULL(max(version), 0) FROM summaries WHERE conversation_id = ?",
                    (start.conversation_id,),
                ) as cursor:
                    row = await cursor.fetchone()
                version = (int(row[0]) if row else 0) + 1
                cursor = await db.execute(
                    "INSERT INTO summaries (conversation_id, version, parent_id, strategy, "
                    "covers_to_message_id, trigger, instructions, status, lease_owner, "
                    "lease_expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'in_progress', "
                    "?, ?, ?)",
                    (
                        start.conversation_id,
                        version,
                        start.parent_id,
                        start.strategy,
                        start.covers_to_message_id,
                        start.trigger,
                        start.instructions,
                        start.owner,
                        now + start.lease_seconds,
                        self._sql.clock.now(),
                    ),
                )
                summary_id = cursor.lastrowid
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"another engine already summarised this boundary ({exc})") from None
        assert summary_id is not None
        return await self.get(summary_id)

    async def take_over_expired(
        self, conversation_id: str, *, owner: str, lease_seconds: float
    ) -> Summary | None:
        """Take over an in-progress version whose worker died: its lease has expired, or its
        owner names a process of this host that no longer exists (a killed ``compact`` is
        resumed at once, not after its lease runs out)."""
        now = self._sql.clock.time()
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT id, lease_owner, lease_expires_at FROM summaries "
                "WHERE conversation_id = ? AND status = 'in_progress'",
                (conversation_id,),
            ) as cursor:
                row = await cursor.fetchone()
            if row is None:
                return None
            summary_id, holder, expires_at = row[0], row[1], row[2]
            dead = expires_at is None or float(expires_at) < now
            if not dead and not owner_is_dead(str(holder)):
                return None
            cursor = await db.execute(
                "UPDATE summaries SET lease_owner = ?, lease_expires_at = ? "
                "WHERE id = ? AND status = 'in_progress' AND lease_owner IS ?",
                (owner, now + lease_seconds, summary_id, holder),
            )
            taken = cursor.rowcount > 0
        if not taken:
            return None
        return await self._where(
            "conversation_id = ? AND status = 'in_progress' AND lease_owner = ?",
            (conversation_id, owner),
        )

    async def in_progress(self, conversation_id: str) -> Summary | None:
        """The conversation's in-progress version, if any (live or expired)."""
        return await self._where(
            "conversation_id = ? AND status = 'in_progress'", (conversation_id,)
        )

    async def renew_lease(self, summary_id: int, *, owner: str, lease_seconds: float) -> bool:
        """Extend our lease; False when it is no longer ours (taken over)."""
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "UPDATE summaries SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? "
                "AND status = 'in_progress'",
                (self._sql.clock.time() + lease_seconds, summary_id, owner),
            )
            return cursor.rowcount > 0

    async def complete(
        self,
        summary_id: int,
        result: SummaryResult,
        *,
        owner: str,
        activate_if_parent: bool = True,
    ) -> tuple[Summary, bool]:
        """Finish our version and activate it by compare-and-swap.

        The version becomes active only if the conversation's active version is still its
        parent (nobody rolled back, forward or compacted meanwhile). Returns the row and
        whether it was activated.

        Raises:
            Conflict: the lease is no longer ours.
        """
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "UPDATE summaries SET status = 'completed', text = ?, segments = ?, fields = ?, "
                "covered_messages = ?, source_tokens = ?, summary_tokens = ?, summarizer = ?, "
                "identifiers_kept = ?, identifiers_total = ?, completed_at = ?, "
                "lease_owner = NULL, lease_expires_at = NULL, error = NULL, call_model = ?, "
                "call_input_tokens = ?, call_cache_read_tokens = ?, call_cache_write_tokens = ?, "
                "call_output_tokens = ?, call_cost_usd = ?, compaction_block = ?, ledger = ? "
                "WHERE id = ? AND lease_owner = ? AND status = 'in_progress'",
                (
                    clean_text(result.text),
                    to_json([s.to_dict() for s in result.segments]),
                    to_json(clean_value(result.fields)),
                    result.covered_messages,
                    result.source_tokens,
                    result.summary_tokens,
                    result.summarizer,
                    result.identifiers_kept,
                    result.identifiers_total,
                    self._sql.clock.now(),
                    *_call_values(result.call),
                    to_json(result.compaction_block) if result.compaction_block else None,
                    to_json(clean_value(list(result.ledger))),
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
        return await self.get(summary_id), activated

    async def fail(self, summary_id: int, *, owner: str | None, error: str) -> Summary:
        """Record a failed attempt (its error is never used as summary text)."""
        clause = " AND lease_owner = ?" if owner is not None else ""
        params: tuple[Any, ...] = (clean_text(error)[:2000], self._sql.clock.now(), summary_id)
        if owner is not None:
            params = (*params, owner)
        async with self._sql.transaction() as db:
            await db.execute(
                "UPDATE summaries SET status = 'failed', error = ?, completed_at = ?, "
                "lease_owner = NULL, lease_expires_at = NULL "
                f"WHERE id = ? AND status = 'in_progress'{clause}",
                params,
            )
        return await self.get(summary_id)

    async def activate(self, conversation_id: str, summary_id: int | None) -> None:
        """Put a completed version in force (roll back / forward); ``None`` = no summary."""
        async with self._sql.transaction() as db:
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
        rows = await self._sql.all(
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


def _call_values(call: SummaryCall | None) -> tuple[Any, ...]:
    """The ``call_*`` column values of a summary call (a model-less row for none)."""
    if call is None:
        return (None, 0, 0, 0, 0, 0.0)
    return (
        call.model,
        call.input_tokens,
        call.cache_read_tokens,
        call.cache_write_tokens,
        call.output_tokens,
        call.cost_usd,
    )
