"""Textual messages of the TUI, and the adapter that turns engine events into them.

The engine knows nothing about Textual: it calls a plain callback. :class:`EngineBridge` is
that callback; it wraps each event in the message class made for it (one per event, so the
main screen has one ``@on`` handler per event) and posts it, which is safe from any task
(``post_message`` only enqueues, in order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from textual.message import Message
from textual.message_pump import MessagePump

from tui_chat.engine import events
from tui_chat.engine.events import EngineEvent


@dataclass
class EngineMessage(Message):
    """Base of the messages that carry one engine event to the UI."""

    event: EngineEvent


@dataclass
class SendWaiting(EngineMessage):
    """Another sender is sending to this conversation; this send waits for its turn."""

    event: events.SendWaiting


@dataclass
class UserMessageSaved(EngineMessage):
    """The user's message is stored: show it."""

    event: events.UserMessageSaved


@dataclass
class ToolCallStarted(EngineMessage):
    """A tool call the model asked for runs now."""

    event: events.ToolCallStarted


@dataclass
class ToolResultsSaved(EngineMessage):
    """The results of a reply's tool calls are stored: show them (the next reply follows)."""

    event: events.ToolResultsSaved


@dataclass
class ReplyStarted(EngineMessage):
    """A reply row exists and text is about to stream into it."""

    event: events.ReplyStarted


@dataclass
class FileUploading(EngineMessage):
    """An attached file is being uploaded (or its upload failed)."""

    event: events.FileUploading


@dataclass
class ReplyDelta(EngineMessage):
    """A chunk of reply text."""

    event: events.ReplyDelta


@dataclass
class ReplyFinished(EngineMessage):
    """The reply is stored with its final status (and error, if any)."""

    event: events.ReplyFinished


@dataclass
class CompactionStarted(EngineMessage):
    """A compaction began."""

    event: events.CompactionStarted


@dataclass
class CompactionFinished(EngineMessage):
    """A summary version completed."""

    event: events.CompactionFinished


@dataclass
class CompactionFailed(EngineMessage):
    """A compaction attempt failed."""

    event: events.CompactionFailed


_FOR_EVENT: Final[dict[type[EngineEvent], type[EngineMessage]]] = {
    events.SendWaiting: SendWaiting,
    events.UserMessageSaved: UserMessageSaved,
    events.ToolCallStarted: ToolCallStarted,
    events.ToolResultsSaved: ToolResultsSaved,
    events.ReplyStarted: ReplyStarted,
    events.FileUploading: FileUploading,
    events.ReplyDelta: ReplyDelta,
    events.ReplyFinished: ReplyFinished,
    events.CompactionStarted: CompactionStarted,
    events.CompactionFinished: CompactionFinished,
    events.CompactionFailed: CompactionFailed,
}
"""The message class of each engine event."""


@dataclass
class OpenConversation(Message):
    """Ask the main screen to show a conversation, optionally scrolled to one message."""

    conversation_id: str
    message_id: int | None = None
    in_place: bool = False
    """Another branch of the conversation on screen: the focus and the composer's text stay."""


class EngineBridge:
    """The engine callback that forwards events to a Textual message pump.

    Args:
        target: Where the messages go (the main screen).
    """

    def __init__(self, target: MessagePump) -> None:
        self._target = target

    def __call__(self, event: EngineEvent) -> None:
        """Forward one engine event as its message."""
        self._target.post_message(_FOR_EVENT[type(event)](event))
