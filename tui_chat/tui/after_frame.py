"""Work for "after the next frame" that is never lost.

Textual's ``call_after_refresh`` hands the callback to the screen that is current when the
callback's message is handled, and a screen taken off the stack meanwhile can leave with the
callback still queued: a prompt closed around its next frame. Queued that way, the panels'
refresh waited for ever (a full test run stopped for good in the export test), and a footer
waiting to publish its keys would never have been told again. :func:`after_frame` also starts
a timer: whichever comes first, the frame or :data:`FRAME_WAIT`, runs the callback, once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.message_pump import MessagePump
from textual.timer import Timer

FRAME_WAIT = 1.0
"""Most seconds a callback waits for its frame (a frame is ~16 ms; a loaded machine's can
take a few hundred)."""


def after_frame(node: MessagePump, callback: Callable[..., object], *args: object) -> bool:
    """Call ``callback(*args)`` once the next frame is drawn, or after :data:`FRAME_WAIT`
    seconds if that frame's callback was dropped (an awaitable result is awaited, as
    Textual does). ``False``: ``node`` is closing, nothing will run."""
    timer: Timer | None = None
    done = False

    def run() -> object:
        nonlocal done
        if done:
            return None
        done = True
        if timer is not None:
            timer.stop()
        return callback(*args)

    if not node.call_after_refresh(run):
        return False
    timer = node.set_timer(FRAME_WAIT, run, name="after-frame")
    return True


async def next_frame(node: MessagePump) -> bool:
    """Until the next frame is drawn (at most :data:`FRAME_WAIT` s); ``False``: ``node``
    is closing, nothing was waited for."""
    drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def frame_drawn() -> None:
        if not drawn.done():
            drawn.set_result(None)

    if not after_frame(node, frame_drawn):
        return False
    await drawn
    return True
