"""Events the engine reports to its callers (the TUI adapter, the CLI).

Plain frozen dataclasses: the engine never imports the UI. The TUI turns them into Textual
messages in a thin adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tui_chat.core.models import ContentBlock, Message, Summary
from tui_chat.core.request import Breakdown
from tui_chat.llm.errors import ChatError


@dataclass(frozen=True, slots=True)
class SendWaiting:
    """Another sender (maybe another process) is sending to this conversation; this send
    waits for it so that each reply follows its own question."""

    conversation_id: str
    holder: str = ""
    """Who holds the send lease and until when, as far as the lease says."""


@dataclass(frozen=True, slots=True)
class UserMessageSaved:
    """The user's message is safely in the database."""

    message: Message


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    """A reply row exists (status ``streaming``) and text is about to arrive."""

    message: Message


@dataclass(frozen=True, slots=True)
class FileUploading:
    """An attached file is being uploaded before the reply is asked for (``escape`` cancels
    the send as it cancels a reply); ``problem`` is set once an upload failed (the file goes
    inline), ``None`` while it runs."""

    reply_id: int
    name: str
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    """A chunk of the reply: its text, its thinking, or a finished server tool block."""

    message_id: int
    text: str
    kind: Literal["text", "thinking", "block"] = "text"
    """``text``: reply text; ``thinking``: thinking text; ``block``: :attr:`block` is a
    server tool's call or result (``server_tool_use``, ``web_search_tool_result`` …)."""
    block: ContentBlock | None = None


@dataclass(frozen=True, slots=True)
class ReplyFinished:
    """The reply is stored with its final status; ``error`` says what went wrong, if anything,
    and ``cancelled`` whether the sender cancelled it (what arrived is kept).

    It carries what a front end shows once a reply ends, so none reads it back: the
    :attr:`breakdown` of the request the reply answered and the conversation's :attr:`cost`
    with this reply counted."""

    message: Message
    error: ChatError | None
    cancelled: bool = False
    notice: str | None = None
    """Something the user should know, e.g. that the endpoint's usage figures were clamped."""
    breakdown: Breakdown | None = None
    """The request this reply answered, counted (its sections, the window, the warnings)."""
    cost: float | None = None
    """Dollars the conversation has cost so far, this reply included."""


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    """A compaction began (in-progress version row holding the lease)."""

    conversation_id: str
    summary: Summary


@dataclass(frozen=True, slots=True)
class CompactionFinished:
    """A version completed; ``activated`` is False when the compare-and-swap lost.

    It carries the conversation's versions as they stand now, so a front end shows them
    without reading them back."""

    conversation_id: str
    summary: Summary
    activated: bool
    notice: str | None = None
    """Something the user should know, e.g. that the ``server`` summarizer fell back."""
    versions: tuple[Summary, ...] | None = None
    """Every version, newest first, with its retention figure (``None``: not read)."""
    active_summary_id: int | None = None
    """The version in force once this one completed."""


@dataclass(frozen=True, slots=True)
class CompactionFailed:
    """A compaction attempt failed; ``paused`` when auto-compaction is now paused."""

    conversation_id: str
    summary: Summary | None
    error: str
    paused: bool


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A tool the model asked for is about to run (after its approval)."""

    conversation_id: str
    use_id: str
    name: str
    """The name it was called by (``server__tool``)."""
    arguments: object


@dataclass(frozen=True, slots=True)
class ToolResultsSaved:
    """The results of a reply's tool calls are stored (a user message of ``tool_result``
    blocks, in the order of the calls); the next reply follows."""

    message: Message
    seconds: dict[str, float]
    """How long each call took, by ``tool_use`` id (0 for one that never ran)."""


EngineEvent = (
    SendWaiting
    | UserMessageSaved
    | ToolCallStarted
    | ToolResultsSaved
    | ReplyStarted
    | FileUploading
    | ReplyDelta
    | ReplyFinished
    | CompactionStarted
    | CompactionFinished
    | CompactionFailed
)
EventCallback = Callable[[EngineEvent], None]
