"""Reply text streamed into a ``Markdown`` widget a few times a second, not once per delta.

Every append re-parses only the document's last block, but it changes the layout, and Textual
lays out the whole screen again for it and repaints the chat (the reply moves up as it
grows): one append and its frame cost 15-40 ms of the event loop's time at 120x36, whatever
the size of the text appended. The API sends a delta every few words (about 90 a second at
500 tokens/s), so the deltas that arrive between two appends are joined into one. How far
apart appends are is chosen for the keys typed meanwhile (measured through
a terminal by ``benchmarks/tui_stream.py``):

- at least :data:`INTERVAL` apart, and far enough apart that appends take at most
  :data:`BUDGET` of the loop's time (the loop's CPU time from an append to the end of its
  frame, measured each time): a slower machine or a longer reply gets fewer, larger appends;
- while the user types (a key less than :data:`TYPING` ago, :func:`note_key`), the chat
  moves at most once every :data:`HOLD`: the text is appended in pieces right after a key's
  echo, its new blocks mounted hidden
  (:class:`~tui_chat.tui.widgets.stream_markdown.StreamMarkdown`: no repaint, nothing moves,
  the piece's work done in the gap before the next key), and shown all together right after
  the echo of the first key once :data:`HOLD` is over (one layout for all of them). When the
  typing stops, what is held is shown at once;
- when the deltas stop for :data:`SETTLE` (the reply has most likely ended), what is pending
  is appended and shown without waiting out the interval or the hold, so a reply's last words
  are shown before it has been stored.

Stopping appends and shows what is pending at once, so the end of a reply is never held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable

from textual.widgets import Markdown

from tui_chat.tui.text import inert
from tui_chat.tui.widgets.stream_markdown import StreamMarkdown

INTERVAL = 0.1
"""Least seconds between two appends to the document."""

BUDGET = 0.2
"""Most of the event loop's time that appends (and the frames they cause) may take."""

TYPING = 0.3
"""Seconds after a key during which the user counts as typing."""

HOLD = 1.3
"""Seconds between two moves of the chat while the user types (the text streamed meanwhile is
appended hidden, then shown at once): with the wait for a key's echo, the reply never stands
still for more than about 1.5 s, however long the typing goes on."""

ECHO_WAIT = 0.1
"""Most seconds a piece waits for the frame after a key (a key handled without a frame would
otherwise hold the stream back)."""

SETTLE = 0.03
"""Seconds without a new delta after which pending text is appended without waiting out the
interval: the reply has most likely ended (its end is stored, then shown by :meth:`stop`,
a few hundred milliseconds later for a long reply)."""

_last_key = -math.inf
_key_waiters: list[asyncio.Future[None]] = []
"""Streams waiting for the next key (see :meth:`ReplyStream._next_key`)."""


def note_key() -> None:
    """Record that a key was typed (the app calls it for every key from the terminal)."""
    global _last_key
    _last_key = time.monotonic()
    for waiter in _key_waiters:
        if not waiter.done():
            waiter.set_result(None)
    _key_waiters.clear()


class ReplyStream:
    """Appends reply text (made inert) to a Markdown document, coalescing close deltas.

    Args:
        markdown: The document to append to.
        interval: Least seconds between two appends.
        on_append: Called after each append.
    """

    def __init__(
        self,
        markdown: Markdown,
        interval: float = INTERVAL,
        on_append: Callable[[], object] | None = None,
    ) -> None:
        self._markdown = markdown
        self._interval = interval
        self._on_append = on_append
        self._pending: list[str] = []
        self._written = -math.inf
        """When text was last written (monotonic)."""
        self._drawn = -math.inf
        """When the last append's frame was drawn: the deltas that came meanwhile wait in the
        screen's queue, so that time is no pause in the deltas."""
        self._shown = -math.inf
        """When the chat last moved for this reply (an append or held blocks shown)."""
        self._appending: asyncio.Future[None] | None = None
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping.is_set()

    def write(self, text: str) -> None:
        """Queue a chunk of reply text for the next append.

        Raises:
            RuntimeError: The stream was stopped.
        """
        if self.stopped:
            raise RuntimeError("the reply stream was stopped")
        if text:
            self._pending.append(text)
            self._written = time.monotonic()
            self._wake.set()

    async def stop(self) -> None:
        """Append what is pending now (after an append under way), and end the stream."""
        self._stopping.set()
        appending = self._appending
        self._task.cancel()  # it waits for text or for its interval: the last append is here
        if appending is not None:
            await appending
        await self._append()

    async def _run(self) -> None:
        while not self.stopped:
            await self._wake.wait()
            self._wake.clear()
            if self._typing():
                await self._typed_step()
                continue
            started = time.thread_time()
            await self._append()
            await self._frame()
            self._shown = time.monotonic()
            cost = time.thread_time() - started
            await self._gap(max(self._interval, cost / BUDGET) if self._interval else 0)

    def _typing(self) -> bool:
        """Whether appends are held: the user types (a key less than :data:`TYPING` ago), the
        deltas go on, and the document can hold blocks hidden."""
        now = time.monotonic()
        return (
            bool(self._interval)
            and isinstance(self._markdown, StreamMarkdown)
            and now - _last_key < TYPING
            and not self._settled(now)
        )

    async def _typed_step(self) -> None:
        """While the user types: after the next key's echo, show what was held once
        :data:`HOLD` is over since the chat last moved, else append a piece hidden (only
        while the document's last block is hidden itself: an append changes that block)."""
        if self._shown > -math.inf and not await self._next_key():  # the first words at once
            self._wake.set()  # the typing or the deltas stopped: shown at once
            return
        markdown = self._markdown
        assert isinstance(markdown, StreamMarkdown)
        if time.monotonic() - self._shown >= HOLD:
            await self._append(hold=True)
            if not markdown.reveal(keep_last=True):
                markdown.reveal()
            await self._frame()
            self._shown = time.monotonic()
        elif markdown.last_held:
            await self._append(hold=True)
            await asyncio.sleep(self._interval)
        if self._pending or markdown.held:
            self._wake.set()

    async def _gap(self, seconds: float) -> None:
        """Wait ``seconds`` between two appends, or less once text is pending and no delta
        came for :data:`SETTLE` seconds."""
        deadline = time.monotonic() + seconds
        while (now := time.monotonic()) < deadline and not self._settled(now):
            await asyncio.sleep(self._wait_until(deadline) - now)

    async def _next_key(self) -> bool:
        """Wait for the next key and the frame that echoes it; ``False`` once the typing
        stopped (no key for :data:`TYPING`) or the deltas stopped (:data:`SETTLE`)."""
        while True:
            now = time.monotonic()
            until = _last_key + TYPING
            if until <= now or self._settled(now):
                return False
            key = asyncio.get_running_loop().create_future()
            _key_waiters.append(key)
            try:
                await asyncio.wait_for(asyncio.shield(key), self._wait_until(until) - now)
            except TimeoutError:
                continue
            finally:
                if key in _key_waiters:
                    _key_waiters.remove(key)
            await self._frame(ECHO_WAIT)  # the key's echo is drawn before the piece's work
            return True

    def _wait_until(self, until: float) -> float:
        """``until``, or earlier: when the pending text would count as settled."""
        settles = self._last_delta(time.monotonic()) if self._pending else time.monotonic()
        return min(until, settles + SETTLE)

    def _settled(self, now: float) -> bool:
        """Whether text is pending and no delta came for :data:`SETTLE` seconds."""
        return bool(self._pending) and now - self._last_delta(now) >= SETTLE

    def _last_delta(self, now: float) -> float:
        """When the last delta came; while the user types, no earlier than the end of the last
        append's frame: the deltas that came during a long layout wait in the screen's queue,
        and at 120x36 one of 30-70 ms made every append look like the reply's end, so all that
        was pending went at once, at any moment of the typing. Not typing, an early append
        costs nothing and the end of a reply is shown sooner."""
        if now - _last_key >= TYPING:
            return self._written
        return max(self._written, self._drawn)

    async def _frame(self, most: float = HOLD) -> None:
        """Until the frame after an append has been drawn (its layout and paint), at most
        ``most`` seconds."""
        if not self._markdown.is_attached:
            return
        drawn = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not drawn.done():
                drawn.set_result(None)

        self._markdown.app.call_after_refresh(done)  # the document's own queue may be busy
        with contextlib.suppress(TimeoutError):  # a screen not drawn now (under a modal)
            await asyncio.wait_for(drawn, most)
        self._drawn = time.monotonic()

    async def _append(self, *, hold: bool = False) -> None:
        """Append the pending text (a trailing CR waits for the LF that may follow it); with
        ``hold``, its new blocks are mounted hidden, else every hidden block is shown."""
        text = "".join(self._pending)
        self._pending.clear()
        if text.endswith("\r") and not self.stopped:
            text, self._pending[:] = text[:-1], ["\r"]
        markdown = self._markdown
        if isinstance(markdown, StreamMarkdown) and not hold:
            markdown.reveal()
        if not text or not markdown.is_attached:
            return
        if isinstance(markdown, StreamMarkdown):
            markdown.holding = hold
        # Shielded, and awaited by stop(): an append cut off half-way would leave the source
        # ahead of the blocks.
        self._appending = asyncio.ensure_future(markdown.append(inert(text)))
        try:
            await asyncio.shield(self._appending)
        finally:
            self._appending = None
            if isinstance(markdown, StreamMarkdown):
                markdown.holding = False
        if self._on_append is not None:
            self._on_append()
