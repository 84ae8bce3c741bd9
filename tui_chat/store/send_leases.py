"""The send leases: one sender per conversation at a time, across processes.

A sender (a CLI ``send``, the TUI) takes the conversation's lease before it stores the user's
message and keeps it, renewed, until the reply is stored; another sender waits for it, so each
reply follows its own question. The owner names its host and process, so a lease left by a
process that died on this machine is free at once; any other lease is free when it expires.

The leases also tell a reply that is being streamed from one left ``streaming`` by a process
that died: :meth:`SendLeases.settle_orphans` ends the latter ``incomplete``.
"""

from __future__ import annotations

from tui_chat.store.owners import new_owner, owner_is_dead
from tui_chat.store.sql import Sql

LEASE_SECONDS = 30.0
"""How long a send lease lasts unless renewed (senders renew it every third of that)."""

ORPHAN_ERROR = (
    "the reply was cut off: the tui-chat process streaming it stopped — retry to ask again"
)
"""Why a reply left ``streaming`` by a dead process ends as it does."""

__all__ = ["LEASE_SECONDS", "ORPHAN_ERROR", "SendLeases", "new_owner", "owner_is_dead"]


class SendLeases:
    """The ``send_leases`` table (migration 5): conversation → owner and expiry."""

    def __init__(self, sql: Sql) -> None:
        """Use the store's shared connection."""
        self._sql = sql

    async def acquire(
        self, conversation_id: str, owner: str, lease_seconds: float = LEASE_SECONDS
    ) -> bool:
        """Take the conversation's lease; False while another live sender holds it."""
        # Looked at first without the write lock: waiting senders poll, and ten of them
        # taking the write lock five times a second would starve the one that is streaming.
        held = await self._sql.one(
            "SELECT owner, expires_at FROM send_leases WHERE conversation_id = ?",
            (conversation_id,),
        )
        if (
            held is not None
            and held[0] != owner
            and not _orphaned(held[0], held[1], self._sql.clock.time())
        ):
            return False
        now = self._sql.clock.time()
        async with self._sql.transaction() as db:
            async with db.execute(
                "SELECT owner, expires_at FROM send_leases WHERE conversation_id = ?",
                (conversation_id,),
            ) as cursor:
                row = await cursor.fetchone()
            if (
                row is not None
                and row[0] != owner
                and not _orphaned(row[0], row[1], self._sql.clock.time())
            ):
                return False
            await db.execute(
                "INSERT INTO send_leases (conversation_id, owner, expires_at) "
                "SELECT id, ?, ? FROM conversations WHERE id = ? "
                "ON CONFLICT(conversation_id) DO UPDATE SET "
                "owner = excluded.owner, expires_at = excluded.expires_at",
                (owner, now + lease_seconds, conversation_id),
            )
        return True

    async def holder(self, conversation_id: str) -> tuple[str, str] | None:
        """The lease as it stands (owner, expiry as written), or ``None``."""
        row = await self._sql.one(
            "SELECT owner, expires_at FROM send_leases WHERE conversation_id = ?",
            (conversation_id,),
        )
        return (str(row[0]), str(row[1])) if row is not None else None

    async def take_stale(
        self,
        conversation_id: str,
        owner: str,
        seen: tuple[str, str],
        lease_seconds: float = LEASE_SECONDS,
    ) -> bool:
        """Take a lease whose holder stopped renewing it: only if it is still exactly ``seen``
        (the caller watched it unchanged for longer than a lease, by its own clock — an
        expiry written by a clock far ahead never comes otherwise)."""
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "UPDATE send_leases SET owner = ?, expires_at = ? "
                "WHERE conversation_id = ? AND owner = ? AND expires_at = ?",
                (owner, self._sql.clock.time() + lease_seconds, conversation_id, seen[0], seen[1]),
            )
            return cursor.rowcount == 1

    async def renew(
        self, conversation_id: str, owner: str, lease_seconds: float = LEASE_SECONDS
    ) -> bool:
        """Extend a lease this owner holds; False when it was lost."""
        async with self._sql.transaction() as db:
            cursor = await db.execute(
                "UPDATE send_leases SET expires_at = ? WHERE conversation_id = ? AND owner = ?",
                (self._sql.clock.time() + lease_seconds, conversation_id, owner),
            )
            return cursor.rowcount == 1

    async def release(self, conversation_id: str, owner: str) -> None:
        """Give the lease back (nothing happens if this owner no longer holds it)."""
        async with self._sql.transaction() as db:
            await db.execute(
                "DELETE FROM send_leases WHERE conversation_id = ? AND owner = ?",
                (conversation_id, owner),
            )

    async def settle_orphans(self) -> int:
        """End every reply left ``streaming`` by a sender that is gone; returns how many.

        A sender holds its conversation's lease until its reply is stored, even when it is
        cancelled; a reply under a live lease is being streamed by another process and is
        left alone. The others — under a lease whose holder died or expired, or under none
        (left by a tui-chat from before the leases) — end ``incomplete`` with what was
        flushed, or ``error`` when nothing was. Finding them reads only the few streaming
        rows (migration 10's partial index), and nothing is written when there are none, so
        a read-only database is left alone.
        """
        streaming = await self._sql.all(
            "SELECT DISTINCT m.conversation_id, l.owner, l.expires_at FROM messages m "
            "LEFT JOIN send_leases l ON l.conversation_id = m.conversation_id "
            "WHERE m.status = 'streaming'"
        )
        if not any(_orphaned(row[1], row[2], self._sql.clock.time()) for row in streaming):
            return 0
        settled = 0
        async with self._sql.transaction() as db:
            for row in streaming:
                conversation_id = str(row[0])
                # Checked again under the write lock: a sender may have started meanwhile.
                async with db.execute(
                    "SELECT owner, expires_at FROM send_leases WHERE conversation_id = ?",
                    (conversation_id,),
                ) as cursor:
                    lease = await cursor.fetchone()
                if lease is not None and not _orphaned(lease[0], lease[1], self._sql.clock.time()):
                    continue
                cursor = await db.execute(
                    "UPDATE messages SET "
                    "status = CASE WHEN text = '' THEN 'error' ELSE 'incomplete' END, "
                    "error = ?, stop_reason = CASE WHEN text = '' "
                    "THEN 'error:incomplete' ELSE stop_reason END "
                    "WHERE conversation_id = ? AND status = 'streaming'",
                    (ORPHAN_ERROR, conversation_id),
                )
                settled += cursor.rowcount
                if lease is not None:
                    await db.execute(
                        "DELETE FROM send_leases WHERE conversation_id = ? AND owner = ?",
                        (conversation_id, lease[0]),
                    )
        return settled


def _orphaned(owner: object, expires_at: object, now: float) -> bool:
    """True for no lease, one expired at ``now``, or one whose process died."""
    if owner is None or expires_at is None:
        return True
    return float(str(expires_at)) <= now or owner_is_dead(str(owner))
