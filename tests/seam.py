"""The tests' seam into the engine: a service opened with its parts in hand, and a clock.

A test never reads a private attribute of the engine or the store (``service._store``): it
opens the service here (or through the ``make_engine`` / ``make_service`` fixtures, which use
this) and takes what it needs from the :class:`Engine` record — the store to write rows with,
the compaction worker to wait on, the token counter, the Files API uploads, and the clock
injected into the store. ``tests/unit/test_no_private_reaches.py`` holds the rule.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.compaction import CompactionWorker
from tui_chat.engine.files import RemoteFiles
from tui_chat.engine.parts import EngineParts
from tui_chat.engine.send import ChatSession
from tui_chat.engine.service import ChatService
from tui_chat.engine.settings import ServiceSettings
from tui_chat.store.repository import Store

__all__ = ["Engine", "TestClock", "engine_of", "open_engine", "open_service"]


class TestClock:
    """The store's clock in a test: the system's time moved by :meth:`advance`. With
    ``start``, the row stamps (:meth:`now`) are pinned instead: ``start``, then ``tick``
    later at each reading (deterministic rows, as the snapshot tests need); lease expiries
    (:meth:`time`) still follow the system's time.

    Args:
        start: Where the row stamps start (``None``: the system's time).
        tick: How far each reading of :meth:`now` moves pinned stamps on.
    """

    __test__ = False  # not a test class, whatever its name

    def __init__(self, start: datetime | None = None, tick: timedelta = timedelta(0)) -> None:
        self._start = start
        self._tick = tick
        self._readings = 0
        self.offset = 0.0
        """Seconds added to the time by :meth:`advance`."""

    def advance(self, seconds: float) -> None:
        """Move the clock on (or back, with a negative ``seconds``)."""
        self.offset += seconds

    def now(self) -> str:
        """The current UTC time as an ISO-8601 string with microseconds."""
        if self._start is None:
            moment = datetime.now(UTC) + timedelta(seconds=self.offset)
        else:
            moment = self._start + self._tick * self._readings + timedelta(seconds=self.offset)
            self._readings += 1
        return moment.isoformat(timespec="microseconds")

    def time(self) -> float:
        """The current time in seconds since the epoch."""
        return time.time() + self.offset


@dataclass(frozen=True)
class Engine:
    """A service and the parts it was built from."""

    service: ChatService
    parts: EngineParts
    clock: TestClock

    @property
    def store(self) -> Store:
        return self.parts.store

    @property
    def worker(self) -> CompactionWorker:
        return self.parts.worker

    @property
    def counter(self) -> TokenCounter:
        return self.parts.counter

    @property
    def files(self) -> RemoteFiles:
        return self.parts.files

    @property
    def session(self) -> ChatSession:
        return self.parts.session


_ENGINES: weakref.WeakKeyDictionary[ChatService, Engine] = weakref.WeakKeyDictionary()


async def open_engine(
    config: ServiceSettings, db_path: Path | None = None, *, clock: TestClock | None = None
) -> Engine:
    """Open a service as :meth:`ChatService.open` does, keeping its parts and its clock."""
    clock = clock if clock is not None else TestClock()
    parts = await EngineParts.open(config, db_path, clock=clock)
    engine = Engine(ChatService(config, parts), parts, clock)
    _ENGINES[engine.service] = engine
    return engine


async def open_service(
    config: ServiceSettings, db_path: Path | None = None, *, clock: TestClock | None = None
) -> ChatService:
    """:func:`open_engine`'s service (its parts stay reachable through :func:`engine_of`)."""
    return (await open_engine(config, db_path, clock=clock)).service


def engine_of(service: ChatService) -> Engine:
    """The parts of a service opened here (or by the ``make_service`` fixture)."""
    try:
        return _ENGINES[service]
    except KeyError:
        raise LookupError(
            "open the service with tests.seam.open_service to reach its parts"
        ) from None
