"""A call after a pause in a stream of pokes (typing), with one timer per pause, not per poke.

Each key typed in the composer asked for the gauge's two recounts by stopping two timers and
starting two more: four asyncio tasks created or cancelled a keystroke, on the event loop
between the key and its echo. :class:`Debounce` notes when it was last poked and keeps at most
one timer: when that timer fires before the pause is over, it is set again for what is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from textual.timer import Timer, TimerCallback


class Timers(Protocol):
    """What runs the timers (a widget, a screen)."""

    def set_timer(
        self,
        delay: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        pause: bool = False,
    ) -> Timer: ...


class Debounce:
    """Call ``callback`` once ``delay`` seconds passed since the last :meth:`poke`.

    Args:
        node: Whose timers run it (they stop with it).
        delay: Seconds of pause.
        callback: What runs after the pause.
    """

    def __init__(self, node: Timers, delay: float, callback: Callable[[], object]) -> None:
        self._node = node
        self._delay = delay
        self._callback = callback
        self._poked = -float("inf")
        self.timer: Timer | None = None
        """The timer waiting for the pause (``None`` before the first poke)."""
        self.waiting = False
        """Whether a call is due after the current pause."""

    def poke(self) -> None:
        """Start the pause again (the call waits ``delay`` seconds from now)."""
        self._poked = time.monotonic()
        if not self.waiting:
            self.waiting = True
            self.timer = self._node.set_timer(self._delay, self._due)

    def cancel(self) -> None:
        """Drop the call due (a later poke asks again)."""
        self.waiting = False
        if self.timer is not None:
            self.timer.stop()

    def _due(self) -> object:
        left = self._poked + self._delay - time.monotonic()
        if left > 0:  # poked meanwhile: wait out the rest of the pause
            self.timer = self._node.set_timer(left, self._due)
            return None
        self.waiting = False
        return self._callback()
