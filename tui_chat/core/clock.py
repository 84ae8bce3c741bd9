"""Where the store and the engine read the time: one clock, injected, so a test can set it.

Two readings: :meth:`Clock.now`, the UTC timestamp stamped on rows (``created_at``, ``pinned_at``
…, ISO-8601 with microseconds), and :meth:`Clock.time`, seconds since the epoch for lease
expiries. :data:`SYSTEM_CLOCK` reads the system's.
"""

from __future__ import annotations

import time as _time
from typing import Protocol

from tui_chat.core.models import utc_now

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """A source of the current time."""

    def now(self) -> str:
        """The current UTC time as an ISO-8601 string with microseconds."""
        ...

    def time(self) -> float:
        """The current time in seconds since the epoch."""
        ...


class SystemClock:
    """The system's clock."""

    def now(self) -> str:
        """The current UTC time as an ISO-8601 string with microseconds."""
        return utc_now()

    def time(self) -> float:
        """The current time in seconds since the epoch."""
        return _time.time()


SYSTEM_CLOCK: Clock = SystemClock()
"""The clock everything reads unless another is injected."""
