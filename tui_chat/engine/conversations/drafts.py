"""Drafts for the front ends: each conversation's unsent text and the files attached to it.

The text is written as the user types (after a pause); the files when they are attached or
removed, their bytes stored once by content hash like a sent message's. A send that stores its
message removes the draft in the same transaction (``store.messages.add``); a send that is
refused leaves it, so nothing typed or attached is lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.attachments import Attachment, AttachmentError
from tui_chat.engine.files.attachments import load_attachments, store_attachments
from tui_chat.store.repository import Store


class Drafts:
    """The drafts of one store.

    Args:
        store: The open store.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, conversation_id: str) -> str:
        """The conversation's draft text (``""`` for none)."""
        return await self._store.drafts.get(conversation_id)

    async def set(self, conversation_id: str, text: str) -> None:
        """Keep ``text`` as the draft's text (a blank text with no files removes the draft)."""
        await self._store.drafts.set(conversation_id, text)

    async def files(self, conversation_id: str) -> list[Attachment]:
        """The files attached to the draft, bytes included (a file whose bytes are gone from
        the database is left out rather than failing the whole draft)."""
        found: list[Attachment] = []
        for ref in await self._store.drafts.files(conversation_id):
            try:
                found += await load_attachments(self._store, [ref])
            except AttachmentError:
                continue
        return found

    async def set_files(self, conversation_id: str, files: Sequence[Attachment]) -> None:
        """Keep ``files`` (in this order) as the files attached to the draft."""
        refs = await store_attachments(self._store, files)
        await self._store.drafts.set_files(conversation_id, refs)

    async def add_files(self, conversation_id: str, files: Sequence[Attachment]) -> None:
        """Attach ``files`` to the draft after those already there (one file is kept once)."""
        kept = await self.files(conversation_id)
        known = {a.sha256 for a in kept}
        await self.set_files(conversation_id, [*kept, *(f for f in files if f.sha256 not in known)])
