"""The records of one summary: what it is made from, what comes out, and how it fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_chat.core.models import Message, Segment, Summary, Usage
from tui_chat.core.policy import Policy

Complete = Callable[[str, str, int], Awaitable[tuple[str, Usage | None]]]
"""``(system, user, max_tokens) -> (reply text, usage)``: one call to a summarizing model."""


class SummaryError(Exception):
    """A summary could not be produced. Its message is recorded as the version's error."""


@dataclass(frozen=True)
class SummaryInput:
    """Everything one new summary version is made from."""

    policy: Policy
    """The conversation's policy (strategy, targets, fields, limits)."""
    previous: Summary | None
    """The parent version (its text, segments and fields), ``None`` for the first."""
    messages: Sequence[Message]
    """The messages this version folds in beyond the parent's coverage (whole turns)."""
    instructions: str | None = None
    """User instructions given on regenerate ("keep every SQL statement")."""
    pinned_ids: frozenset[int] = frozenset()
    """Messages sent verbatim elsewhere (anchors); the summary need not repeat them."""
    used_ratio: float = 0.0
    """The request's share of the usable window, for seed 003 levels."""


@dataclass(frozen=True)
class SummaryOutput:
    """The complete content of a new summary version."""

    text: str
    """What the memory block carries (segments joined, fields appended)."""
    segments: tuple[Segment, ...]
    """The segments in turn order (empty for the ``running`` strategy)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Structured memory (``decisions``, ``open_files``, ``current_task``) when enabled."""
    summarizer: str = ""
    """The model id, or ``extractive``."""
    usage: Usage | None = None
    """Usage summed over every model call, ``None`` when nothing was reported."""
    compaction_block: dict[str, Any] | None = None
    """The server's compaction block as received (``server`` summarizer only)."""
    call_model: str | None = None
    """The model the calls ran on, when a model was called."""
