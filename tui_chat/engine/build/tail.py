"""The raw tail of a conversation kept between request builds: only what changed is read.

:meth:`Messages.raw_tail <tui_chat.store.messages.Messages.raw_tail>` walks back over a
window's worth of rows on every build. :class:`TailWindow` gives the same list, keeping the
rows it read: each build reads the rows added since (one indexed query), re-reads the rows that
were not ``complete`` (a streaming reply becomes complete, an orphaned one is settled), and
moves its front as the budget says (dropping rows, or reading earlier ones back).

Why a kept row stays right: a ``complete`` message is never rewritten and new messages get
larger ids than every existing one. A message can be deleted (by this process or another):
each build counts the rows from the window's front on (one query over the index) and reads
the window afresh when one of those it keeps has gone. A summary written or rolled
back changes the coverage, and a policy its character cap: each pair of those has a window
of its own. :class:`TailCache` also keeps the conversation's :class:`Timeline` objects, so
the request builder reuses what it prepared for the same messages.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from operator import attrgetter

from tui_chat.core.models import Message
from tui_chat.core.request import BuiltRequest
from tui_chat.core.request.timeline import Timeline
from tui_chat.core.turns import starts_turn
from tui_chat.store.repository import Store

_ID = attrgetter("id")

PAGE = 512
"""Messages read per step when the front moves back."""
CONVERSATIONS = 4
"""Conversations whose tails are kept (least recently built first out)."""
GRID = 8
"""Messages per narrowest run the builder lays out once (see :meth:`Timeline.run_bounds`)."""


class TailWindow:
    """One conversation's raw tail after ``after_id``, each message counted at most ``cap``.

    Args:
        conversation_id: The conversation.
        after_id: The active summary's coverage (0 for none).
        cap: Count no message as more than this (``None``: stored counts).
    """

    def __init__(self, conversation_id: str, after_id: int, cap: int | None) -> None:
        self.conversation_id = conversation_id
        self.after_id = after_id
        self.cap = cap
        self.messages: list[Message] = []
        self.costs: list[int] = []
        self.spent = 0
        self.last_id = after_id
        """The newest id read."""
        self.at_start = False
        """Whether the front is the first message after ``after_id``."""
        self.filled = False
        self.unfinished: set[int] = set()
        """Ids of the messages kept that were not ``complete`` when read."""

    def _note(self, message: Message) -> None:
        if message.status != "complete":
            self.unfinished.add(message.id)

    def _cost(self, message: Message) -> int:
        tokens = message.token_count
        return tokens if self.cap is None else min(tokens, self.cap)

    async def read(self, store: Store, budget: int) -> list[Message]:
        """The newest whole turns whose counts fit ``budget``, as ``raw_tail`` gives them.

        Args:
            store: The open store.
            budget: Stored tokens to read, newest first.

        Returns:
            The messages, oldest first, the front trimmed to a turn start.
        """
        if self.filled:
            await self._refresh(store)
            await self._append_new(store)
            if self.messages and await self._deleted_since(store):
                self._forget()
        self.filled = True
        self._shrink(budget)
        await self._grow(store, budget)
        return _trimmed(self.messages)

    async def _deleted_since(self, store: Store) -> bool:
        """Whether a message kept was deleted (fewer rows from the front on than kept)."""
        count, _ = await store.messages.stats(
            self.conversation_id, after_id=self.messages[0].id - 1
        )
        return count < len(self.messages)

    def _forget(self) -> None:
        """Drop what was read: the next steps read the window again."""
        self.messages, self.costs, self.spent = [], [], 0
        self.last_id, self.at_start = self.after_id, False
        self.unfinished.clear()

    async def _refresh(self, store: Store) -> None:
        """Read again the messages that were not complete (they may have changed)."""
        if not self.unfinished:
            return
        wanted = sorted(self.unfinished, reverse=True)
        fresh = {m.id: m for m in await store.messages.get_many(wanted)}
        for message_id in wanted:
            index = bisect_left(self.messages, message_id, key=_ID)
            if index >= len(self.messages) or self.messages[index].id != message_id:
                self.unfinished.discard(message_id)
                continue
            new = fresh.get(message_id)
            if new is None:
                self.spent -= self.costs[index]
                del self.messages[index], self.costs[index]
            elif new != self.messages[index]:
                self.spent += self._cost(new) - self.costs[index]
                self.messages[index], self.costs[index] = new, self._cost(new)
            if new is None or new.status == "complete":
                self.unfinished.discard(message_id)

    async def _append_new(self, store: Store) -> None:
        added = await store.messages.history(self.conversation_id, after_id=self.last_id)
        for message in added:
            self._note(message)
            self.messages.append(message)
            self.costs.append(self._cost(message))
            self.spent += self.costs[-1]
            self.last_id = max(self.last_id, message.id)

    def _shrink(self, budget: int) -> None:
        """Leave out the oldest messages the budget no longer reaches (the newest message
        over the budget stays, as ``raw_tail`` keeps it)."""
        drop = 0
        spent = self.spent
        while drop < len(self.costs) and spent - self.costs[drop] > budget:
            spent -= self.costs[drop]
            drop += 1
        if drop:
            for message in self.messages[:drop]:
                self.unfinished.discard(message.id)
            del self.messages[:drop], self.costs[:drop]
            self.spent = spent
            self.at_start = False

    async def _grow(self, store: Store, budget: int) -> None:
        """Read earlier messages back while the budget reaches further."""
        while self.spent <= budget and not self.at_start:
            front = self.messages[0].id if self.messages else None
            page = await store.messages.history(
                self.conversation_id,
                after_id=self.after_id,
                before_id=front,
                limit=PAGE,
                newest=True,
            )
            taken: list[Message] = []
            for message in reversed(page):
                self._note(message)
                taken.append(message)
                self.spent += self._cost(message)
                if self.spent > budget:
                    break
            taken.reverse()
            self.messages[:0] = taken
            self.costs[:0] = [self._cost(m) for m in taken]
            if front is None and taken:
                self.last_id = max(self.last_id, taken[-1].id)
            if self.spent <= budget:
                self.at_start = len(page) < PAGE


def _trimmed(messages: list[Message]) -> list[Message]:
    """``messages`` without a leading partial turn (its start lies before what was read)."""
    if messages and not starts_turn(messages[0].role, messages[0].content):
        first_turn = messages[0].turn
        index = 0
        while index < len(messages) and messages[index].turn == first_turn:
            index += 1
        if index < len(messages):
            return messages[index:]
    return list(messages)


@dataclass
class _Kept:
    """What is kept for one conversation."""

    windows: dict[tuple[int, int | None], TailWindow] = field(default_factory=dict)
    tail: Timeline = field(default_factory=Timeline)
    """Turn facts of the tail as read (the unanswered prompts)."""
    raw: Timeline = field(default_factory=lambda: Timeline(GRID))
    """The builder's timeline of the messages sent."""
    reading: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a window is read: two builds at once (the gauge's and a send's) would
    otherwise both read the same rows into it (the history sent twice)."""
    base: BuiltRequest | None = None
    """The request without a draft built last (the gauge's), valid while :attr:`stamp` is."""
    stamp: object = None
    """What :attr:`base` was built at: the conversation's revision in the store and what
    else it was built from (see :meth:`TailCache.base`)."""
    drafted: tuple[object, BuiltRequest] | None = None
    """The request built last with a draft as the new message, and what it was built from
    (see :meth:`TailCache.keep_drafted`)."""


class TailCache:
    """Tails and timelines of the conversations built last, for :func:`.assemble.assemble`.

    Args:
        size: Conversations kept.
    """

    def __init__(self, size: int = CONVERSATIONS) -> None:
        self.size = size
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._flights: dict[str, tuple[object, asyncio.Future[BuiltRequest]]] = {}
        """The base being built per conversation, with its stamp: callers that ask for the
        same stamp meanwhile wait for that one build."""

    def _entry(self, conversation_id: str) -> _Kept:
        kept = self._kept.get(conversation_id)
        if kept is None:
            kept = self._kept[conversation_id] = _Kept()
        self._kept.move_to_end(conversation_id)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return kept

    async def raw_tail(
        self, store: Store, conversation_id: str, after_id: int, budget: int, cap: int | None
    ) -> list[Message]:
        """What ``store.messages.raw_tail`` returns, reading only what changed since the
        last call for the same conversation, coverage and cap."""
        kept = self._entry(conversation_id)
        async with kept.reading:
            window = kept.windows.get((after_id, cap))
            if window is None:
                # One window per conversation in use: a new coverage or cap replaces the old.
                kept.windows = {(after_id, cap): TailWindow(conversation_id, after_id, cap)}
                window = kept.windows[(after_id, cap)]
            return await window.read(store, budget)

    async def base(
        self, conversation_id: str, stamp: object, build: Callable[[], Awaitable[BuiltRequest]]
    ) -> BuiltRequest:
        """The conversation's request without a draft, built again only when ``stamp``
        differs from the one it was built at.

        Args:
            conversation_id: The conversation.
            stamp: The store's revision of the conversation (read *before* building, so a
                write during the build only makes the next call build again) and whatever
                else the build reads outside the conversation (calibration, model figures).
            build: Builds the request.

        Callers asking for the same stamp while it is built (the gauge after a reply, the
        compaction worker's trigger check) share that one build; a caller cancelled meanwhile
        does not cancel it for the others.
        """
        kept = self._entry(conversation_id)
        if kept.base is not None and kept.stamp == stamp:
            return kept.base
        flight = self._flights.get(conversation_id)
        if flight is None or flight[0] != stamp:
            task = asyncio.ensure_future(self._build_base(conversation_id, stamp, build))
            flight = (stamp, task)
            self._flights[conversation_id] = flight
            task.add_done_callback(lambda _: self._landed(conversation_id, flight))
        return await asyncio.shield(flight[1])

    async def _build_base(
        self, conversation_id: str, stamp: object, build: Callable[[], Awaitable[BuiltRequest]]
    ) -> BuiltRequest:
        built = await build()
        kept = self._entry(conversation_id)  # the entry may have been replaced meanwhile
        kept.base, kept.stamp = built, stamp
        return built

    def _landed(
        self, conversation_id: str, flight: tuple[object, asyncio.Future[BuiltRequest]]
    ) -> None:
        if self._flights.get(conversation_id) is flight:
            del self._flights[conversation_id]
        if not flight[1].cancelled():
            flight[1].exception()  # retrieved here: every caller that waited got it raised

    def keep_drafted(self, conversation_id: str, key: object, built: BuiltRequest) -> None:
        """Keep the request built with a draft (the gauge's full count, a preview) and
        everything it was built from, for the send of that draft to take."""
        self._entry(conversation_id).drafted = (key, built)

    def take_drafted(self, conversation_id: str, key: object) -> BuiltRequest | None:
        """The request kept by :meth:`keep_drafted` when it was built from ``key`` (taken:
        it is handed out once), else ``None``; either way it is kept no more."""
        kept = self._entry(conversation_id)
        drafted, kept.drafted = kept.drafted, None
        return drafted[1] if drafted is not None and drafted[0] == key else None

    def unfinished(self, conversation_id: str) -> set[int]:
        """Ids of the messages of the last tail read that are not ``complete``."""
        kept = self._entry(conversation_id)
        return set().union(*(window.unfinished for window in kept.windows.values()))

    def timelines(self, conversation_id: str) -> tuple[Timeline, Timeline]:
        """The conversation's tail timeline and the builder's timeline."""
        kept = self._entry(conversation_id)
        return kept.tail, kept.raw
