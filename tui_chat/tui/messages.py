"""Textual messages of the TUI, and the adapter that turns engine events into them.

The engine knows nothing about Textual: it calls a plain callback. :class:`EngineBridge` is
that callback; it wraps each event in :class:`EngineUpdate` and posts it to the main screen,
which is safe from any task (``post_message`` only enqueues).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.message_pump import MessagePump

from tui_chat.engine.events import EngineEvent


@dataclass
class EngineUpdate(Message):
    """An engine event (reply streaming, compaction progress) reaching the UI."""

    event: EngineEvent


@dataclass
class OpenConversation(Message):
    """Ask the main screen to show a conversation, optionally scrolled to one message."""

    conversation_id: str
    message_id: int | None = None


@dataclass
class ConversationsChanged(Message):
    """A conversation was created, renamed, archived or deleted: refresh the list."""


class EngineBridge:
    """The engine callback that forwards events to a Textual message pump.

    Args:
        target: Where the :class:`EngineUpdate` messages go (the main screen).
    """

    def __init__(self, target: MessagePump) -> None:
        self._target = target

    def __call__(self, event: EngineEvent) -> None:
        """Forward one engine event."""
        self._target.post_message(EngineUpdate(event))
