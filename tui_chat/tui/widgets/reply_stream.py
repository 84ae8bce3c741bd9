"""Reply text streamed into a ``Markdown`` widget a few times a second, not once per delta.

Every append re-parses only the document's last block, but it changes the layout, and Textual
lays out the whole screen again for it: the cost of one frame grows with the number of block
widgets the reply already has. The API sends a delta every few words (about 90 a second at 500
tokens/s), so the deltas that arrive within :data:`INTERVAL` of an append are joined into the
next one. That keeps the event loop free for keys while a long reply streams. Stopping appends
what is pending at once, so the end of a reply is never held back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.widgets import Markdown

from tui_chat.tui.text import inert

INTERVAL = 0.1
"""Least seconds between two appends to the document."""


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
            await self._append()
            await asyncio.sleep(self._interval)

    async def _append(self) -> None:
        """Append the pending text (a trailing CR waits for the LF that may follow it)."""
        text = "".join(self._pending)
        self._pending.clear()
        if text.endswith("\r") and not self.stopped:
            text, self._pending[:] = text[:-1], ["\r"]
        if not text or not self._markdown.is_attached:
            return
        # Shielded, and awaited by stop(): an append cut off half-way would leave the source
        # ahead of the blocks.
        self._appending = asyncio.ensure_future(self._markdown.append(inert(text)))
        try:
            await asyncio.shield(self._appending)
        finally:
            self._appending = None
        if self._on_append is not None:
            self._on_append()
