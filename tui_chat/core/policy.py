"""The compaction policy: every knob of context management, resolved for one conversation.

A :class:`Policy` is the fully resolved set of knobs the request builder, the triggers and the
compaction worker read. The named presets and the layering of settings on top of them live in
:mod:`tui_chat.core.presets`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui_chat.core.models import Strategy
from tui_chat.core.prices import FALLBACK_PRICES, Prices

TriggerKind = Literal["tokens", "turns", "ratio", "cost", "budget"]
"""What starts a compaction (see :mod:`tui_chat.core.triggers`)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Every knob of context management for one conversation."""

    preset: str = "window"
    """Name of the preset this policy started from."""
    trigger: TriggerKind = "ratio"
    """What starts a compaction: unsummarised ``tokens``, every N ``turns``, window ``ratio``, or
    ``cost`` (when it pays for itself, :mod:`tui_chat.core.payback`; ``ratio`` stays the safety
    net), or ``budget`` (when the next turn would take the request past :attr:`budget`)."""
    budget: int | None = None
    """The working budget: the most tokens a request may carry (``None``: the model's usable
    window). Every part's share and the gauge are measured against it; below it nothing is
    folded, and the ``budget`` trigger folds the oldest turns when the next turn would pass
    it (docs/context.md, "The working budget")."""
    cache_ttl: str = "auto"
    """Prompt-cache lifetime of the request's breakpoints: ``5m``, ``1h``, or ``auto`` (1 hour
    when the conversation's own pauses make it cheaper, :mod:`tui_chat.core.cache_ttl`)."""
    budget_keep: float = 0.15
    """``budget`` trigger: share of the budget the raw turns keep verbatim after a fold (each
    kept token is read every turn until the next fold and written again at it: 0.15 cost less
    than 0.25 on every session that folds, with the same evidence and identifiers kept,
    ``benchmarks/history/RESULTS-2026-11.md``, "The working budget: session 5")."""
    threshold_tokens: int = 8_000
    """``tokens`` trigger: compact when unsummarised tokens exceed this (seed 000)."""
    every_turns: int = 3
    """``turns`` trigger: compact at turns 4, 7, 10 … for 3 (seed 001)."""
    ratio: float = 0.75
    """``ratio`` trigger: compact when the projected request reaches this share of the window."""
    emergency_ratio: float = 1.0
    """Compact before sending (blocking) when the request would reach this share of the window."""
    strategy: Strategy = "running"
    """``running`` rewrites one summary; ``segments`` appends one segment per block of turns."""
    keep_recent: int = 4
    """Messages kept verbatim at the end (rounded out to whole turns)."""
    keep_recent_tokens: int | None = None
    """When set, the verbatim window is chosen by token budget instead (seed 004: 800)."""
    compression_rate: float = 0.3
    """Target summary length as a share of the source characters (0.1–0.5)."""
    summary_max_tokens: int = 2_000
    """Largest summary the memory block may carry; segments roll up beyond it."""
    summary_max_chars: int | None = None
    """Hard cap on summary characters (seed 004's running brief)."""
    anchor_budget_tokens: int = 4_000
    """Tokens the pinned anchors may take in the memory block before a warning."""
    max_anchors: int | None = None
    """At most this many anchors are sent (seed 003: 5); more gives a warning."""
    recall: bool = True
    """Bring relevant excerpts of the compacted prefix back into the request."""
    recall_budget_tokens: int = 1_500
    """Tokens recalled excerpts may take."""
    recall_max_excerpts: int = 32
    """At most this many recalled excerpts. The token budget usually binds first; each
    recalled message comes with the one after it, so 32 is about 16 exchanges."""
    message_char_limit: int | None = None
    """Cut each raw message to this many characters in the request (seed 000: 2,000)."""
    prompt_char_limit: int | None = None
    """Cut each message to this many characters in the summary prompt (seed 000: 3,000)."""
    single_user_message: bool = False
    """Send everything as one user message with the seed 000 section headers."""
    summarizer: str = "auto"
    """``auto`` (as ``claude`` when a key is set, else offline), ``claude`` (a continuation of the
    cached conversation), ``server`` (Claude's on-demand compaction), ``extractive``, or a model
    id (:mod:`tui_chat.engine.compaction.summarizers`)."""
    summarizer_model: str = "claude-haiku-5-5"
    """Model of the standalone summary prompt, when no cached chat request can be continued
    or continuing it costs more (the current Haiku: $0.10 / $0.50 per MTok up to 100,000
    prompt tokens)."""
    summarizer_max_tokens: int = 2_048
    """``max_tokens`` of a summary call."""
    summarizer_timeout: float = 60.0
    """Seconds before a summary call is abandoned."""
    warn_ratio: float = 0.8
    """Gauge turns to the warning colour at this share of the window."""
    context_window: int | None = None
    """Override the model's context window (tests and small local models)."""
    max_output: int | None = None
    """Override the ``max_tokens`` sent with each reply."""
    structured_fields: bool = False
    """Keep decisions / open files / current task as fields (seed 004)."""
    importance: bool = False
    """Weight messages by importance when summarising offline (seed 003)."""
    summary_share: float | None = None
    """When set, the summary's budget is this share of the usable window (it becomes
    ``summary_max_tokens``; see :mod:`tui_chat.core.request.budget`)."""
    recall_share: float | None = None
    """When set, the recall budget is this share of the usable window."""
    recent_share: float | None = None
    """When set, raw turns may take this share of the usable window: the ``tokens`` trigger
    fires past it and compaction folds them down to half of it."""
    pins_share: float | None = None
    """When set, pinned messages may take this share of the usable window."""
    ledger_share: float = 0.0
    """Share of the usable window the identifier ledger may take (0: no ledger is sent)."""
    recall_fill: bool = False
    """Recall may also take the room the other parts leave (up to ``recall_max_tokens``)."""
    recall_max_tokens: int = 6_000
    """Most tokens recall takes, whatever the shares (keeps large windows' requests cheap)."""
    payback_turns: int = 4
    """``cost`` trigger: turns within which a compaction must pay for itself."""
    cache_cold_share: float = 0.25
    """``cost`` trigger: share of turns that arrive after the 5-minute cache lifetime."""
    # -- what the reply may use (:mod:`tui_chat.core.reply_options`) --
    thinking: str = "off"
    """``on`` asks for thinking (adaptive where the model supports it, else the budget form with
    :attr:`thinking_budget`); ``off`` (the default) sends no ``thinking`` parameter."""
    thinking_budget: int = 8_000
    """``budget_tokens`` of the budget form (at least 1,024, kept below ``max_tokens``)."""
    thinking_display: str = "summarized"
    """``display`` of the thinking parameter: ``summarized`` (shown) or ``omitted``."""
    effort: str = "default"
    """``output_config.effort`` (``low`` … ``max``); ``default`` sends none."""
    web_search: bool = False
    """Offer Claude the server-side ``web_search`` tool."""
    web_fetch: bool = False
    """Offer Claude the server-side ``web_fetch`` tool."""
    web_max_uses: int = 5
    """``max_uses`` of each web tool per request."""
    web_allowed_domains: tuple[str, ...] = ()
    """Only these domains are searched and fetched (not together with blocked domains)."""
    web_blocked_domains: tuple[str, ...] = ()
    """These domains are never searched or fetched."""
    fast: bool = False
    """Ask for fast mode (``speed: "fast"``: up to 2.5x the output speed at the model's fast
    price, 2x on Fable 5.2, Opus 5.5 and Opus 5) where the model has it; elsewhere the reply
    runs at standard speed and the gauge says so."""
    # -- the prices of the models in use (no setting: the engine fills them from the model
    # table, :meth:`tui_chat.engine.build.context.EngineContext.policy_for`) --
    prices: Prices = FALLBACK_PRICES
    """The chat model's price card: the ``cost`` trigger, the TTL choice and the recall cap
    weigh its cache multipliers (0.1x, 0.05x, 0.025x reads …), not one constant."""
    summarizer_prices: Prices = FALLBACK_PRICES
    """The price card of :attr:`summarizer_model` (a standalone summary call is priced at it
    when the summarizer choice weighs a continuation against it)."""
