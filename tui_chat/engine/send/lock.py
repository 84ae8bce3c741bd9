"""Sends to one conversation, one at a time across processes, each reply after its question.

:class:`SendLock` holds the conversation's send lease (:mod:`tui_chat.store.send_leases`)
from before the user's message is stored until its reply is stored, renewing it while the
reply streams. A second sender waits, says so once through ``on_wait``, and goes on when the
lease is released, expires, its process is found dead, or it is left unrenewed for longer
than a lease (by this process's own clock, so a skewed clock's expiry cannot block for ever).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from tui_chat.store.owners import new_owner
from tui_chat.store.send_leases import LEASE_SECONDS, SendLeases

POLL_SECONDS = 0.2
"""How often a waiting sender asks for the lease again."""


class SendLock:
    """The send lease of each conversation, taken by this process's sends."""

    def __init__(
        self,
        leases: SendLeases,
        *,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        """Use the store's lease table.

        Args:
            leases: The store's send leases.
            lease_seconds: Lease length; renewed every third of it while held.
            poll_seconds: Pause between attempts while another sender holds the lease.
        """
        self.leases = leases
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds

    @asynccontextmanager
    async def hold(
        self, conversation_id: str, on_wait: Callable[[str], None] | None = None
    ) -> AsyncIterator[None]:
        """Hold the conversation's lease for the block (waiting for it if needed).

        Args:
            conversation_id: The conversation.
            on_wait: Called once if the lease is busy and this sender has to wait, with who
                holds it (:func:`describe_holder`).
        """
        owner = new_owner()  # one per send: two sends of one process take turns too
        waited = False
        seen: tuple[str, str] | None = None
        since = time.monotonic()
        while not await self.leases.acquire(conversation_id, owner, self.lease_seconds):
            if not waited and on_wait is not None:
                on_wait(describe_holder(await self.leases.holder(conversation_id)))
            waited = True
            # A live holder renews every third of a lease. One unchanged for longer than a
            # lease by this process's clock is stale whatever expiry it claims (a clock far
            # ahead wrote it): taken, unless it changed meanwhile.
            held = await self.leases.holder(conversation_id)
            if held != seen:
                seen, since = held, time.monotonic()
            elif (
                seen is not None
                and time.monotonic() - since > self.lease_seconds
                and await self.leases.take_stale(conversation_id, owner, seen, self.lease_seconds)
            ):
                break
            await asyncio.sleep(self.poll_seconds)
        done = asyncio.Event()
        renewing = asyncio.create_task(self._renew(conversation_id, owner, done))
        try:
            yield
        finally:
            # Stopped, not cancelled: a renewal cut inside its transaction would leave the
            # shared connection in it.
            done.set()
            with contextlib.suppress(Exception):
                await asyncio.shield(renewing)
            # Released even when the send was cancelled (a signal, an escape key).
            await asyncio.shield(self.leases.release(conversation_id, owner))

    async def _renew(self, conversation_id: str, owner: str, done: asyncio.Event) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.lease_seconds / 3)
            if done.is_set():
                return
            # A renewal that fails (a busy disk) is tried again; the send goes on meanwhile.
            with contextlib.suppress(Exception):
                await self.leases.renew(conversation_id, owner, self.lease_seconds)


def describe_holder(held: tuple[str, str] | None) -> str:
    """``process 4242 on laptop, its lease runs to 12:04:31 UTC`` from a lease's owner
    (``host:pid:random``) and expiry; says when the expiry lies far ahead (a skewed clock)."""
    if held is None:
        return "another sender"
    host, _, rest = held[0].partition(":")
    pid = rest.partition(":")[0]
    who = f"process {pid} on {host}" if pid.isdigit() else f"sender {held[0]}"
    try:
        expires = float(held[1])
    except ValueError:
        return who
    until = time.strftime("%H:%M:%S UTC", time.gmtime(expires))
    ahead = expires - time.time()
    if ahead > 10 * LEASE_SECONDS:
        return (
            f"{who}, its lease claims to run to {until} (its clock is ahead); it is taken once "
            "it has not been renewed for a lease's length"
        )
    return f"{who}, its lease runs to {until}"
