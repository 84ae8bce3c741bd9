"""Domain records shared by every layer: conversations, messages, summaries, anchors.

These are plain frozen dataclasses with no I/O. The store turns rows into them, the engine
and the request builder consume them, the TUI displays them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Role = Literal["user", "assistant"]
MessageStatus = Literal["complete", "streaming", "incomplete", "error"]
SummaryStatus = Literal["in_progress", "completed", "failed"]
SummaryTrigger = Literal["auto", "manual", "regenerate", "emergency"]
Strategy = Literal["running", "segments"]

ContentBlock = dict[str, Any]
"""One Anthropic content block (``{"type": "text", "text": ...}``, ``tool_use`` …)."""


def utc_now() -> str:
    """Return the current UTC time as an ISO-8601 string with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by the API for one response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    """The part of ``cache_creation_input_tokens`` written with the 1-hour TTL (billed 2x
    instead of 1.25x; the API's ``usage.cache_creation.ephemeral_1h_input_tokens``)."""
    thinking_tokens: int = 0
    """The part of ``output_tokens`` spent thinking (``usage.output_tokens_details``); billed
    as output whether the thinking text was shown, summarized or omitted."""
    web_search_requests: int = 0
    """Web searches the server ran for this reply (``usage.server_tool_use``; billed per use)."""
    web_fetch_requests: int = 0
    """Pages the server fetched for this reply (billed as the input tokens they add)."""
    speed: str = ""
    """``fast`` when the reply ran in fast mode (``usage.speed``; billed at the model's fast
    multiplier), ``standard`` or empty otherwise."""
    cache_miss: str = ""
    """Why the prompt cache could not reuse the previous request's prefix, as the reply's
    ``diagnostics.cache_miss_reason.type`` says (``model_changed``, ``system_changed``,
    ``tools_changed``, ``messages_changed``, ``previous_message_not_found``,
    ``unavailable``); empty when nothing diverged or nothing was asked."""
    cache_missed_tokens: int = 0
    """``cache_missed_input_tokens`` of that reason: the prefix tokens it cost the cache."""

    @property
    def total_input(self) -> int:
        """The real size of the request: uncached + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_dict(self) -> dict[str, Any]:
        """Serialise for JSON columns and exports."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            **(
                {"cache_creation_1h_input_tokens": self.cache_creation_1h_input_tokens}
                if self.cache_creation_1h_input_tokens
                else {}
            ),
            **{key: value for key, value in self._extra().items() if value},
            **({"speed": self.speed} if self.speed else {}),
            **({"cache_miss": self.cache_miss} if self.cache_miss else {}),
            **(
                {"cache_missed_tokens": self.cache_missed_tokens}
                if self.cache_missed_tokens
                else {}
            ),
        }

    def _extra(self) -> dict[str, int]:
        """The counts written only when not zero (older rows and exports lack them)."""
        return {
            "thinking_tokens": self.thinking_tokens,
            "web_search_requests": self.web_search_requests,
            "web_fetch_requests": self.web_fetch_requests,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage | None:
        """Build from a JSON column value (``None`` stays ``None``)."""
        if not data:
            return None
        return cls(
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            cache_creation_input_tokens=int(data.get("cache_creation_input_tokens") or 0),
            cache_read_input_tokens=int(data.get("cache_read_input_tokens") or 0),
            cache_creation_1h_input_tokens=int(data.get("cache_creation_1h_input_tokens") or 0),
            thinking_tokens=int(data.get("thinking_tokens") or 0),
            web_search_requests=int(data.get("web_search_requests") or 0),
            web_fetch_requests=int(data.get("web_fetch_requests") or 0),
            speed=str(data.get("speed") or ""),
            cache_miss=str(data.get("cache_miss") or ""),
            cache_missed_tokens=int(data.get("cache_missed_tokens") or 0),
        )


USAGE_CEILING = 10_000_000
"""No figure of one response's usage is above this: the largest window is a million tokens, so
a larger figure is the endpoint's mistake (one reported $22,049,999,985 for a reply)."""


def sane_usage(**figures: object) -> tuple[Usage, str | None]:
    """A :class:`Usage` from an endpoint's raw figures, each clamped to 0..``USAGE_CEILING``
    (a missing, negative, absurd or non-numeric one is never taken as given), and a note
    naming those clamped (``None`` when every figure was sane).

    Args:
        figures: :class:`Usage` field names and the values the endpoint reported.
    """
    values: dict[str, int] = {}
    odd: list[str] = []
    for name, raw in figures.items():
        try:
            number = int(raw or 0)  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            number = -1
        kept = min(max(number, 0), USAGE_CEILING)
        if kept != number:
            odd.append(f"{name} {raw!r}")
        values[name] = kept
    note = None
    if odd:
        note = (
            "the endpoint reported usage figures out of range (" + ", ".join(odd) + "); "
            f"they were clamped to 0..{USAGE_CEILING:,}, so this reply's cost is uncertain"
        )
    return Usage(**values), note  # type: ignore[arg-type]  # every field given is a count


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation row. ``settings`` holds per-conversation overrides (preset, keys)."""

    id: str
    title: str
    model: str
    system_prompt: str
    settings: dict[str, Any]
    created_at: str
    updated_at: str
    archived_at: str | None = None
    active_summary_id: int | None = None


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A conversation with the aggregate figures the list views show."""

    conversation: Conversation
    message_count: int
    token_count: int
    cost_usd: float = 0.0
    """What its replies and summary calls cost so far (filled only when asked for)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message. ``content`` is a list of Anthropic content blocks."""

    id: int
    conversation_id: str
    role: Role
    content: list[ContentBlock]
    text: str
    turn: int
    token_count: int
    status: MessageStatus
    created_at: str
    model: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = None
    error: str | None = None
    """Why the reply failed or stopped short: what happened — what to do."""

    @property
    def has_tool_use(self) -> bool:
        """True when the message carries a ``tool_use`` block (the turn continues)."""
        return any(b.get("type") == "tool_use" for b in self.content)

    @property
    def has_tool_result(self) -> bool:
        """True when the message carries a ``tool_result`` block."""
        return any(b.get("type") == "tool_result" for b in self.content)


@dataclass(frozen=True, slots=True)
class Segment:
    """One summarised block of turns (seed 001's summary_history item)."""

    turns: tuple[int, int]
    text: str
    original_chars: int
    summary_chars: int
    compression_rate: float
    level: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Serialise for the ``segments`` JSON column."""
        return {
            "turns": [self.turns[0], self.turns[1]],
            "text": self.text,
            "original_chars": self.original_chars,
            "summary_chars": self.summary_chars,
            "compression_rate": self.compression_rate,
            "level": self.level,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Segment:
        """Build from one item of the ``segments`` JSON column."""
        turns = data.get("turns") or [0, 0]
        return cls(
            turns=(int(turns[0]), int(turns[-1])),
            text=str(data.get("text", "")),
            original_chars=int(data.get("original_chars", 0)),
            summary_chars=int(data.get("summary_chars", 0)),
            compression_rate=float(data.get("compression_rate", 0.0)),
            level=int(data.get("level", 0)),
        )


@dataclass(frozen=True, slots=True)
class Summary:
    """One summary version of a conversation's prefix.

    ``text`` is what is sent in the memory block. For the ``segments`` strategy it is the
    segments joined in order; ``segments`` keeps them apart for the inspector. ``fields`` holds
    structured memory (seed 004: decisions, open files, current task).
    """

    id: int
    conversation_id: str
    version: int
    parent_id: int | None
    strategy: Strategy
    text: str
    segments: list[Segment]
    covers_to_message_id: int
    covered_messages: int
    source_tokens: int
    summary_tokens: int
    trigger: SummaryTrigger
    summarizer: str
    status: SummaryStatus
    created_at: str
    instructions: str | None = None
    identifiers_kept: int = 0
    identifiers_total: int = 0
    error: str | None = None
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    completed_at: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    call: SummaryCall | None = None
    """What the summary call cost (``None`` for the offline summarizer and older versions)."""
    compaction_block: dict[str, Any] | None = None
    """The ``server`` summarizer's compaction block exactly as the API returned it; sent back
    unchanged, first in ``messages``, while this version is active. ``text`` is its summary."""
    ledger: list[dict[str, Any]] = field(default_factory=list)
    """The identifier ledger of the covered span (see :mod:`tui_chat.core.ledger`)."""
    stale: str | None = None
    """Why this version no longer matches the conversation (messages it covers were deleted);
    ``None`` while it does. Regenerating writes a fresh version."""

    @property
    def reduction(self) -> float:
        """Fraction of source tokens saved (0.0 when nothing was summarised)."""
        if self.source_tokens <= 0:
            return 0.0
        return 1.0 - self.summary_tokens / self.source_tokens

    @property
    def change(self) -> str:
        """The size change as shown: ``−58%`` for a summary smaller than its span, ``+58%``
        for one larger (a short span summarised at length)."""
        sign = "−" if self.reduction >= 0 else "+"
        return f"{sign}{abs(self.reduction):.0%}"


@dataclass(frozen=True, slots=True)
class SummaryCall:
    """What the call that wrote a summary version cost (none for the offline summarizer)."""

    model: str
    """The model the call ran on."""
    input_tokens: int = 0
    """Uncached input tokens."""
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache (0.1x)."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache (1.25x)."""
    output_tokens: int = 0
    """Output tokens."""
    cost_usd: float = 0.0
    """The call's price at its model's prices."""

    def to_dict(self) -> dict[str, Any]:
        """Serialise for ``summary --json`` and exports."""
        return {
            "model": self.model,
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


@dataclass(frozen=True, slots=True)
class Anchor:
    """A pinned message: always sent verbatim."""

    message_id: int
    conversation_id: str
    note: str
    pinned_at: str


@dataclass(frozen=True, slots=True)
class Fork:
    """Where a forked conversation came from."""

    conversation_id: str
    """The fork."""
    parent_id: str | None
    """The conversation it was forked from (``None`` once that one is deleted)."""
    parent_message_id: int | None
    """The parent's last message the fork holds (``None``: forked before its first message)."""
    created_at: str


HIT_START = "\ue000"
"""Marks the start of a matched word in :attr:`SearchHit.snippet` (a private-use character)."""
HIT_END = "\ue001"
"""Marks the end of a matched word in :attr:`SearchHit.snippet`."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One full-text search result; matched words in ``snippet`` sit between
    :data:`HIT_START` and :data:`HIT_END`, which real text never contains."""

    message_id: int
    conversation_id: str
    conversation_title: str
    role: Role
    snippet: str
    created_at: str
    rank: float

    def marked(self, start: str = "«", end: str = "»") -> str:
        """The snippet with matched words between ``start`` and ``end``."""
        return self.snippet.replace(HIT_START, start).replace(HIT_END, end)
