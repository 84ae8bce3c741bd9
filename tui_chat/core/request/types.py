"""The records of a request build: what goes in, what comes out, and the pieces in between."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_chat.core.ledger import Entry as LedgerEntry
from tui_chat.core.models import Anchor, ContentBlock, Message, Role, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.request.recall import Passage
from tui_chat.core.tokens import TokenCounter

SECTIONS: tuple[str, ...] = (
    "system",
    "anchors",
    "summary",
    "ledger",
    "recall",
    "recent",
    "new_message",
)
"""The keys of :attr:`Breakdown.sections`, in request order."""

Section = Literal["recent", "new_message"]
"""The section a sent message counts towards."""


@dataclass(frozen=True)
class ContextInputs:
    """Everything :func:`build_request` needs; the engine gathers it from the store."""

    model: str
    """Model id sent as ``model``."""
    context_window: int
    """The model's context window in tokens (after any policy override)."""
    max_output: int
    """``max_tokens`` of the reply; the usable window is ``context_window - max_output``."""
    system_prompt: str
    """The conversation's base system prompt (may be empty)."""
    policy: Policy
    """The resolved policy."""
    summary: Summary | None
    """The active completed summary version, or ``None``."""
    anchors: Sequence[tuple[Anchor, Message]]
    """Every pinned message of the conversation, in conversation order."""
    recalled: Sequence[Passage]
    """Candidate passages from the compacted prefix, best first."""
    raw_messages: Sequence[Message]
    """Every message after the summary's coverage, in order."""
    new_message: list[ContentBlock] | None
    """The user's new message (``None``: preview or retry of what is stored)."""
    counter: TokenCounter
    """Counts what is not already counted (``Message.token_count`` is reused)."""
    calibration: float = 1.0
    """Real / estimated input ratio for the model (see ``tokens.update_calibration``)."""
    ledger: Sequence[LedgerEntry] = ()
    """The active version's identifier ledger (sent within the ledger budget)."""
    pauses: tuple[float, ...] = ()
    """Seconds between each recent reply and the prompt after it (the cache lifetime is
    chosen from them, :mod:`~tui_chat.core.cache_ttl`)."""
    recall_need: float = 0.0
    """The share of the new message's word weight the recent turns lack
    (:func:`~tui_chat.core.request.recall_need.novelty`): how far recall's cost cap gives way."""


@dataclass(frozen=True)
class Breakdown:
    """Where the tokens of a request go, for the gauge and ``tui-chat context``."""

    window: int
    """The context window."""
    max_output: int
    """Tokens reserved for the reply."""
    usable: int
    """``window - max_output``: what the request itself may take."""
    sections: dict[str, int]
    """Tokens per part, keys exactly :data:`SECTIONS`."""
    input_tokens: int
    """Sum of ``sections`` (local estimate)."""
    calibrated_tokens: int
    """``input_tokens`` scaled by the model's calibration ratio."""
    trigger_tokens: int | None
    """Request size at which the policy's trigger fires (``None`` for the turns trigger)."""
    warn_tokens: int
    """``policy.warn_ratio × usable``: where the gauge turns to the warning colour."""
    warnings: tuple[str, ...]
    """Visible notes: pins over budget, dropped turns, cut messages, a request that won't fit."""
    calibration: float = 1.0
    """The ratio ``calibrated_tokens`` was computed with."""
    budgets: dict[str, int] = field(default_factory=dict)
    """The budget of each part that has one (:data:`~.budget.BUDGET_KEYS`)."""
    elastic: int = 0
    """Recall tokens beyond the recall budget: room the other parts left, filled
    (``recall_fill``); they give way first, so the warning level leaves them out."""
    cache_ttl: str = "5m"
    """The prompt-cache lifetime the request's breakpoints ask for (``5m`` or ``1h``)."""
    budget: int | None = None
    """The working budget when it is smaller than the model's usable window (``usable`` is
    then the budget itself); ``None`` when the request may use the whole window."""

    @property
    def used(self) -> int:
        """The one figure the gauge, the trigger marker and the fit check compare: the
        request's calibrated size (never below the local count)."""
        return max(self.input_tokens, self.calibrated_tokens)

    def to_dict(self) -> dict[str, Any]:
        """Serialise for ``context --json`` and exports."""
        return {
            "window": self.window,
            "max_output": self.max_output,
            "usable": self.usable,
            "input_tokens": self.input_tokens,
            "calibrated_tokens": self.calibrated_tokens,
            "calibration": self.calibration,
            "trigger_tokens": self.trigger_tokens,
            "warn_tokens": self.warn_tokens,
            "used": self.used,
            "sections": dict(self.sections),
            "budgets": dict(self.budgets),
            "elastic": self.elastic,
            "budget": self.budget,
            "cache_ttl": self.cache_ttl,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class BuiltRequest:
    """The exact request the next send makes, and what it carries."""

    request: dict[str, Any]
    """Keyword arguments for ``messages.create`` / ``messages.stream``: ``model``, ``system``
    (a list of text blocks; absent when there is none), ``messages``, ``max_tokens``."""
    breakdown: Breakdown
    """Token breakdown of ``request``."""
    sent_message_ids: tuple[int, ...]
    """Stored messages sent as messages (raw), in order."""
    anchor_ids: tuple[int, ...]
    """Pinned messages carried in the memory block (pins inside the raw window are in
    ``sent_message_ids``)."""
    recalled_ids: tuple[int, ...]
    """Messages whose excerpts were recalled."""
    dropped_message_ids: tuple[int, ...]
    """Raw messages left out because the request would not fit the window."""
    fits: bool
    """False only when even the system prompt and the new message exceed the usable window."""
    attachments: bool = True
    """Whether ``request`` may hold attachment references to expand before sending (False
    only when none of its messages holds one)."""


@dataclass(frozen=True)
class Piece:
    """One stored (or the new) message, cleaned for sending, with its token count."""

    source: Message | None
    """The stored message, ``None`` for the new one and for filler."""
    role: Role
    """``user`` or ``assistant``."""
    content: list[ContentBlock]
    """The blocks as they will be sent."""
    tokens: int
    """Tokens of ``content`` as one message."""
    section: Section
    """Where its tokens are counted."""
    cut: bool = False
    """True when ``message_char_limit`` cut its text."""
