"""A prompt entered while a reply still runs: it waits its turn, on its own."""

from __future__ import annotations

from dataclasses import dataclass

from tui_chat.core.attachments import Attachment


@dataclass(frozen=True, slots=True)
class Queued:
    """A prompt entered while a reply was still running, sent when it ends."""

    conversation_id: str | None  # None: the conversation shown when it is sent
    text: str
    files: list[Attachment]
    editing: int | None  # the prompt it edits (sent as a fork), if any
