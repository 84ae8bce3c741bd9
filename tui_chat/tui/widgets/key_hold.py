"""Full garbage collections held off while keys scroll the chat, run once they stop.

Scrolling through a long conversation mounts pages of message widgets and prunes others, which
allocates enough to set off a full (generation 2) collection every few seconds of a held key:
a walk over every widget mounted, 100-400 ms on a loaded 2-core machine, in which no key was
handled and no frame drawn (the longest freezes of a held ``up``). While keys come, only the
young generations are collected (:func:`~tui_chat.tui.gc_pause.hold`); the full collection held
back runs :data:`QUIET` seconds after the last one (and after the page it loaded), while the
user reads.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget

from tui_chat.tui import gc_pause
from tui_chat.tui.debounce import Debounce

__all__ = ["QUIET", "KeyHold"]

QUIET = 2.0
"""Seconds without a key (and without a page loading for one) after which the full collection
held back runs: a collection in the middle of a held key's backlog was itself the freeze."""


class KeyHold:
    """The hold on full collections of one widget's keys.

    Args:
        widget: The widget whose keys hold it (its timer runs the release).
        busy: Whether the keys' work goes on (a page loading): the release waits for it.
    """

    def __init__(self, widget: Widget, busy: Callable[[], bool]) -> None:
        self._busy = busy
        self._held = False
        self._quiet_after = Debounce(widget, QUIET, self._quiet)

    @property
    def held(self) -> bool:
        """Whether this widget's keys hold full collections off now."""
        return self._held

    def pressed(self) -> None:
        """A key came: hold full collections until :data:`QUIET` seconds after the last."""
        if not self._held:
            self._held = True
            gc_pause.hold()
        self._quiet_after.poke()

    def _quiet(self) -> None:
        if self._busy():
            self._quiet_after.poke()
        else:
            self.release()

    def release(self, *, collect: bool = True) -> None:
        """Give the hold back (the widget is unmounted: without the collection, ``collect``
        false; otherwise the one held back runs now)."""
        self._quiet_after.cancel()
        if self._held:
            self._held = False
            gc_pause.release(collect=collect)
