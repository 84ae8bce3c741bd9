"""The draft tray: the files attached to the message being written, shown as chips above the
composer, and the prompt being edited (sending it makes a fork).

The tray owns that state; the screen asks it (``pending``, ``editing``) when it sends. The
files are the draft's, kept in the database through the engine: across
conversation switches and quitting, like the text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from textual.message import Message
from textual.widgets import Static

from tui_chat.core.attachments import Attachment, check_request, chip, describe
from tui_chat.engine.files import read_attachment


class DraftFiles(Protocol):
    """Where the draft's files are kept (``service.drafts`` is one)."""

    async def files(self, conversation_id: str) -> list[Attachment]:
        """The files attached to the conversation's draft."""
        ...

    async def set_files(self, conversation_id: str, files: Sequence[Attachment]) -> None:
        """Keep ``files`` (in this order) as the files of the conversation's draft."""
        ...


class DraftTray(Static):
    """Chips of the attached files, and the note of an edited prompt.

    Args:
        source: Where the draft's files are kept.
        id: The widget id.
    """

    DEFAULT_CSS = """
    DraftTray { height: auto; color: $text-accent; padding: 0 1; display: none; }
    """

    @dataclass
    class Changed(Message):
        """The files (or the edit) changed: the composer may send a blank text with files."""

        tray: DraftTray
        has_files: bool

        @property
        def control(self) -> DraftTray:
            """The tray."""
            return self.tray

    def __init__(self, source: DraftFiles, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._source = source
        self.conversation_id: str | None = None
        """The conversation whose draft the files are."""
        self.pending: list[Attachment] = []
        """Files attached to the message being written."""
        self.editing: int | None = None
        """The prompt being edited (sending forks before it), if any."""

    def show(self) -> None:
        """Draw the chips (and the edit's note); hidden when there is nothing to show."""
        chips = "   ".join(chip(a.ref()) for a in self.pending)
        if self.editing is not None:
            chips = f"✎ editing #{self.editing}: enter sends it as a fork, escape cancels   {chips}"
        self.update(chips.rstrip())
        self.display = bool(chips.strip())
        self.post_message(self.Changed(self, bool(self.pending)))

    def take(self) -> tuple[list[Attachment], int | None]:
        """Hand over the files and the edit to a send; the tray is empty afterwards."""
        taken = (self.pending, self.editing)
        self.pending, self.editing = [], None
        self.show()
        return taken

    def start_edit(self, message_id: int) -> None:
        """Edit a prompt: its files replace the draft's until the edit is sent or dropped."""
        self.editing = message_id
        self.pending = []
        self.show()

    def edit_files(self, message_id: int, files: list[Attachment]) -> None:
        """The edited prompt's files, once read (ignored if the edit was dropped)."""
        if self.editing == message_id:
            self.pending = files
            self.show()

    def forget(self) -> None:
        """Another conversation is being opened: its draft's files are read by :meth:`switch`."""
        self.pending, self.editing, self.conversation_id = [], None, None

    async def switch(self, conversation_id: str | None) -> None:
        """Show the draft files of the conversation on screen (read if it is another one)."""
        if conversation_id != self.conversation_id:
            self.pending, self.editing = [], None
            self.conversation_id = conversation_id
            if conversation_id is not None:
                self.pending = await self._source.files(conversation_id)
        self.show()

    def drop_edit(self) -> None:
        """Drop the edit (and its files); :meth:`reload` brings the draft's own back."""
        self.editing = None
        self.pending = []
        self.show()

    async def reload(self) -> None:
        """The draft's own files, shown again (an edit's files stood in for them)."""
        if self.conversation_id is not None and self.editing is None:
            self.pending = await self._source.files(self.conversation_id)
            self.show()

    async def keep(self) -> None:
        """Write the attached files as the draft's (an edit's files are not a draft)."""
        if self.conversation_id is not None and self.editing is None:
            await self._source.set_files(self.conversation_id, self.pending)

    async def attach(self, path: str) -> Attachment:
        """Read a file and attach it (raises ``AttachmentError`` with what is wrong); the
        caller keeps it (:meth:`keep`)."""
        # Off the event loop: a file can be tens of megabytes.
        attachment = await asyncio.to_thread(read_attachment, path)
        check_request([a.ref() for a in [*self.pending, attachment]])
        self.pending.append(attachment)
        self.show()
        return attachment

    def attach_data(self, name: str, data: bytes) -> Attachment:
        """Attach bytes that are no file (a clipboard image), checked like a picked file
        (raises ``AttachmentError``); the caller keeps it (:meth:`keep`)."""
        attachment = describe(name, data)
        check_request([a.ref() for a in [*self.pending, attachment]])
        self.pending.append(attachment)
        self.show()
        return attachment

    async def detach(self) -> Attachment | None:
        """Remove the last attached file (``None`` when there is none)."""
        if not self.pending:
            return None
        removed = self.pending.pop()
        self.show()
        await self.keep()
        return removed

    async def give_back(self, files: Sequence[Attachment]) -> None:
        """Files of a refused send come back first (each file once)."""
        known = {a.sha256 for a in files}
        self.pending = [*files, *(a for a in self.pending if a.sha256 not in known)]
        self.show()
        await self.keep()
