"""Full garbage collections held off while a reply streams, and run once it has been shown.

A full (generation 2) collection walks every object the collector tracks. With a long reply's
block widgets mounted that is hundreds of thousands of objects, and streaming allocates fast
enough to set one off about once a second: a 10,000-token reply paused the event loop 26 times
for 200-600 ms each on a loaded 2-core machine, stalling frames and key presses. While any
reply streams only the young generations are collected; the full collection that was held
back runs once, after the finished reply has been painted (:func:`release`).

Holding is counted, so overlapping holders (a reply view replaced while streaming) are safe.
"""

from __future__ import annotations

import gc

_NEVER = 1 << 30
"""A generation-2 threshold that is never reached."""

_holders = 0
_threshold2: int | None = None
_leaving = False


def hold() -> None:
    """Stop automatic full collections until every holder has called :func:`release`."""
    global _holders, _threshold2
    if _holders == 0:
        young, middle, old = gc.get_threshold()
        _threshold2 = old
        gc.set_threshold(young, middle, _NEVER)
    _holders += 1


def release(*, collect: bool = True) -> None:
    """Give back one hold; the last one restores full collections.

    Args:
        collect: Run the full collection that was held back when this was the last hold
            (otherwise the collector runs it whenever it next decides to).
    """
    global _holders, _threshold2
    if _holders == 0:
        return
    _holders -= 1
    if _holders or _threshold2 is None:
        return
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _threshold2)
    _threshold2 = None
    if collect and not _leaving:
        gc.collect()


def leaving() -> None:
    """The process is about to end: no full collection is run again (one at exit, as the
    views are unmounted, took 200-600 ms of the time a stop by signal has)."""
    global _leaving
    _leaving = True
    gc.disable()


def held() -> bool:
    """Whether full collections are being held off."""
    return _holders > 0
