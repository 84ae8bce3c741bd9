"""The records of a request build: what goes in, what comes out, and the pieces in between."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_chat.core.ledger import Entry as LedgerEntry
from tui_chat.core.models import Anchor, ContentBlock, Message, Role, Summary, Usage
from tui_chat.core.policy import Policy
from tui_chat.core.request.recall import Passage
from tui_chat.core.tokens import TokenCounter

SECTIONS: tuple[str, ...] = (
    "tools",
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
    covered_tokens: int = 0
    """Tokens of the messages the summary covers (their stored counts; 0: not read), what
    carrying the folded history would cost (:func:`~.recall_cost.recall_cap`)."""
    pauses: tuple[float, ...] = ()
    """Seconds between each recent reply and the prompt after it (the cache lifetime is
    chosen from them, :mod:`~tui_chat.core.cache_ttl`)."""
    replies: tuple[Usage, ...] = ()
    """The usage the API reported for the newest replies of the raw tail (up to
    :data:`~tui_chat.core.cache_ttl.GAPS`, oldest first): what the prompt cache actually did,
    which prices a carried token for recall's cost cap where it says enough
    (:func:`~tui_chat.core.cache_ttl.observed_price`)."""
    recall_need: float = 0.0
    """The share of the new message's word weight the recent turns lack
    (:func:`~tui_chat.core.request.recall_need.novelty`): how far recall's cost cap gives way."""
    recall_asks: bool = True
    """Whether the new message asks something (:func:`~.recall_need.asks`); one that only
    tells recalls, where recall is capped, only the passages that match it closely
    (:data:`~.recall_cost.TELL_FLOOR`)."""
    tools: tuple[dict[str, Any], ...] = ()
    """Tool definitions sent as ``tools`` (MCP servers' tools switched on); they open the
    request, so every cache breakpoint after them keeps them cached."""


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
    counted: str = ""
    """Which count the figures are: the offline estimate and the calibration it is scaled
    by (the tokenizer generation's, or learnt from replies), or the API's own count."""
    price_note: str = ""
    """Why the cost figures are a guess ('' when the model's prices are known)."""
    results_cuttable: int = 0
    """Tokens that cutting every large tool result of the older turns saves, whether this
    request cut them or not (:mod:`.shrink`): the triggers count the history without them, so
    nothing is folded while cutting them would do."""

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
            # ``tools`` only when the request has tools (what a conversation without them
            # reports, and the recorded requests, stay as they were).
            "sections": {k: v for k, v in self.sections.items() if v or k != "tools"},
            "budgets": dict(self.budgets),
            "elastic": self.elastic,
            "budget": self.budget,
            "cache_ttl": self.cache_ttl,
            "warnings": list(self.warnings),
            **({"counted": self.counted} if self.counted else {}),
            **({"price_note": self.price_note} if self.price_note else {}),
            **({"results_cuttable": self.results_cuttable} if self.results_cuttable else {}),
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
    layout: Layout = field(default_factory=lambda: Layout(), compare=False, repr=False)
    """What this build laid out for later builds of the same messages to reuse; the caller
    keeps it in its timeline (:meth:`~.timeline.Timeline.keep`), the builder never does."""


@dataclass(frozen=True)
class Layout:
    """What one :func:`~.builder.build_request` laid out that a later build of the same
    messages can reuse: the runs it composed and the chain of runs it joined last.

    The builder only reads the timeline it is given; whoever keeps that timeline between
    builds (the engine, one per conversation) hands this back to it.
    """

    runs: Mapping[tuple[int, int], Any] = field(default_factory=dict)
    """Runs composed by this build (:class:`~.runs.Composed`), by absolute ``(start, end)``."""
    chains: tuple[Any, ...] | None = None
    """The chains of runs laid out last, newest first (:class:`~.runs.Chain`), once this
    build joined one; ``None``: it joined none and the timeline's stay."""


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
    shrunk: Piece | None = None
    """The same message with its large tool results cut (:mod:`.shrink`), sent instead when
    the request is over its budget; ``None`` when it holds none."""
