"""When to compact and how much to fold in (docs/design.md, "Triggers").

Pure functions over a :class:`~tui_chat.core.policy.Policy`: the engine measures the
conversation, builds a :class:`TriggerState` (usually with :func:`trigger_state`), asks
:func:`compaction_due` after each completed reply and before each send, asks
:func:`emergency_due` before each send, and fixes the boundary of a new version with
:func:`plan_boundary` when the work starts.

Cuts fall only between whole turns, so a ``tool_use`` is never separated from its
``tool_result``, and a turn still waiting for its final answer is never folded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_chat.core.models import Message
from tui_chat.core.payback import estimate, pays
from tui_chat.core.policy import Policy
from tui_chat.core.request.recall_need import question_ceiling
from tui_chat.core.tokens import get_counter
from tui_chat.core.turns import (
    boundary_for_keep_recent,
    boundary_for_token_budget,
    group_turns,
    is_complete_turn,
    message_tokens,
)

MAX_CONSECUTIVE_FAILURES = 3
"""Auto-compaction pauses for a conversation after this many failed versions in a row."""

MIN_REDUCTION = 0.10
"""A version that saved less than this share of tokens counts as ineffective (thrash guard)."""

MIN_GROWTH = 0.10
"""After an ineffective version, the request must grow by this share before firing again."""

LEVELS: tuple[tuple[str, float, float], ...] = (
    ("light", 0.85, 0.5),
    ("medium", 0.95, 0.3),
    ("aggressive", float("inf"), 0.1),
)
"""Seed 003 compression levels: ``(name, used ratio below which it applies, rate)``."""


@dataclass(frozen=True, slots=True)
class TriggerState:
    """What the triggers look at, measured by the engine just before asking.

    Build it with :func:`trigger_state` so every caller counts the same way.
    """

    unsummarized_tokens: int
    """Tokens of the raw messages after the active version's coverage."""
    unsummarized_turns: int
    """Complete turns after the coverage: the last turn counts once its final answer is in.
    After the reply of turn 3 (or at the start of turn 4) with nothing summarised this is 3."""
    current_turn: int
    """Turn number of the newest message (0 when there is none)."""
    projected_tokens: int
    """Input tokens of the next request, as the request builder estimates them."""
    usable_window: int
    """Context window minus the reply's ``max_tokens``."""
    last_reduction: float | None
    """Reduction (:attr:`Summary.reduction`) of the newest completed version, if any."""
    tokens_at_last_compaction: int | None
    """The request size the newest completed version was measured against: the projected
    request when it became active, or failing that its ``source_tokens``."""
    consecutive_failures: int
    """Failed versions in a row since the last completed one."""
    foldable_tokens: int = 0
    """Tokens of the raw messages :func:`plan_boundary` would fold now (``cost`` trigger)."""
    summary_tokens: int = 0
    """Tokens of the active summary a new version would replace (``cost`` trigger)."""
    last_turn_tokens: int = 0
    """Tokens of the newest complete turn: what the next turn is expected to add (``budget``
    trigger)."""
    reserved_tokens: int = 0
    """Room the ``budget`` trigger keeps free for what a question may bring back from the
    folded past (:func:`recall_reserve`); 0 before the first fold."""


def trigger_state(
    raw_messages: Sequence[Message],
    *,
    projected_tokens: int,
    usable_window: int,
    last_reduction: float | None = None,
    tokens_at_last_compaction: int | None = None,
    consecutive_failures: int = 0,
) -> TriggerState:
    """Measure the raw messages after the active coverage into a :class:`TriggerState`.

    Tokens are the stored ``token_count`` of each message (counted only when missing); turns
    are all turns after the coverage but a last one still waiting for its final answer.

    Args:
        raw_messages: The messages after the active version's coverage, in order.
        projected_tokens: The next request's estimated input tokens.
        usable_window: The window minus the reply's ``max_tokens``.
        last_reduction: Reduction of the newest completed version.
        tokens_at_last_compaction: The request size that version was measured against.
        consecutive_failures: Failed versions in a row.

    Returns:
        The state :func:`compaction_due` reads.
    """
    turns = group_turns(raw_messages)
    counter = get_counter()
    return TriggerState(
        unsummarized_tokens=sum(message_tokens(m, counter) for m in raw_messages),
        unsummarized_turns=len(turns) - (0 if not turns or is_complete_turn(turns[-1]) else 1),
        current_turn=raw_messages[-1].turn if raw_messages else 0,
        projected_tokens=projected_tokens,
        usable_window=usable_window,
        last_reduction=last_reduction,
        tokens_at_last_compaction=tokens_at_last_compaction,
        consecutive_failures=consecutive_failures,
    )


def _thrashing(state: TriggerState) -> bool:
    """True when the newest version was ineffective and the request has not grown since."""
    if state.last_reduction is None or state.last_reduction >= MIN_REDUCTION:
        return False
    if state.tokens_at_last_compaction is None:
        return False
    grown = state.projected_tokens - state.tokens_at_last_compaction
    return grown < MIN_GROWTH * state.tokens_at_last_compaction


def compaction_due(policy: Policy, state: TriggerState) -> str | None:
    """Decide whether a background compaction should start now.

    The ``tokens`` trigger fires when the unsummarised tokens exceed ``threshold_tokens``
    (seed 000; seed 004's 800-token recent window). The ``turns`` trigger fires as soon as a
    full block of ``every_turns`` complete turns waits: after the reply of turn 3 (or, at the
    latest, at the start of turn 4), so turns 4, 7, 10 … are sent with the previous block
    summarised (seed 001); it keeps firing while blocks are behind. The ``ratio`` trigger
    fires when the projected request reaches ``ratio`` of the usable window (seeds 002 and 003).
    The ``cost`` trigger fires when folding what :func:`plan_boundary` would fold pays for
    itself within ``payback_turns`` (:mod:`tui_chat.core.payback`), and falls back to the
    ``ratio`` rule as a safety net. The ``budget`` trigger fires when the next turn, as large as
    the last one, would take the request past the working budget; below that nothing is folded.

    Auto-compaction pauses after :data:`MAX_CONSECUTIVE_FAILURES` failures in a row. The thrash
    guard: when the newest version cut less than :data:`MIN_REDUCTION` of its source tokens,
    the ``tokens`` and ``ratio`` triggers stay quiet until the request has grown by
    :data:`MIN_GROWTH` since that version. The ``turns`` trigger, periodic by nature, is not
    guarded. Manual compaction and :func:`emergency_due` ignore both.

    Args:
        policy: The conversation's policy.
        state: The measured state.

    Returns:
        A short reason to record and show, or ``None`` when no compaction is due.
    """
    if state.consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
        return None
    if policy.trigger == "turns":
        every = max(1, policy.every_turns)
        if state.unsummarized_turns >= every:
            return (
                f"turn {state.current_turn}: {state.unsummarized_turns} turns since the last "
                f"summary (every {every})"
            )
        return None
    if _thrashing(state):
        return None
    if policy.trigger == "cost":
        cost = estimate(
            policy,
            foldable=state.foldable_tokens,
            summary=state.summary_tokens,
            projected=state.projected_tokens,
        )
        if pays(cost):
            return (
                f"folding {cost.folded:,} tokens pays for itself within "
                f"{policy.payback_turns} turns"
            )
    if policy.trigger == "budget":
        return _budget_due(state)
    if policy.trigger == "tokens":
        if state.unsummarized_tokens > policy.threshold_tokens:
            return (
                f"{state.unsummarized_tokens:,} unsummarized tokens > {policy.threshold_tokens:,}"
            )
        return None
    if state.usable_window <= 0:
        return None
    used = state.projected_tokens / state.usable_window
    if used >= policy.ratio:
        return f"request at {used:.0%} of the usable window (trigger {policy.ratio:.0%})"
    return None


NEXT_TURN_SHARE = (0.01, 0.25)
"""``budget`` trigger: the next turn is expected to add at least and at most these shares of
the budget (as much as the last turn did, within them)."""


def _budget_due(state: TriggerState) -> str | None:
    """The ``budget`` trigger: due when the next turn, as large as the last one, would take the
    request past the budget (the usable window is the budget, :func:`~.request.budget.
    for_window`). Below that nothing is folded."""
    budget = state.usable_window
    if budget <= 0:
        return None
    low, high = NEXT_TURN_SHARE
    next_turn = min(max(int(low * budget), state.last_turn_tokens), int(high * budget))
    if state.projected_tokens + next_turn + state.reserved_tokens < budget:
        return None
    if state.projected_tokens + next_turn < budget:
        return (
            f"request at {state.projected_tokens:,} tokens: the next turn (~{next_turn:,}) "
            f"would leave less than {state.reserved_tokens:,} of the budget of {budget:,} "
            "for what a question recalls"
        )
    return (
        f"request at {state.projected_tokens:,} tokens: the next turn (~{next_turn:,}) would "
        f"pass the budget of {budget:,}"
    )


def recall_reserve(policy: Policy, usable: int, folded: bool, unsummarized_tokens: int) -> int:
    """The room the ``budget`` trigger keeps free after a fold for a question's recall: the
    recall share of the budget (:func:`~.request.recall_need.question_ceiling` at full need).

    Without it the raw turns grew after each fold until the request reached the budget, and
    a question about the folded past had what they left: on the past-budget dev chat (30k
    budget) 16k tokens of recall at the replay's end (97.4 % of the evidence), but with the
    raw turns 10k larger, as at another point of the same cycle, 6k (93.9 %, multi-hop 73 %).
    The evidence a question finds depended on where in the cycle it came. Kept free only
    while the raw turns hold more than twice what a fold keeps (``keep_recent_tokens``), so
    every fold at least halves them; none before the first fold (the request is the whole
    chat) or where the policy gives recall no share.
    """
    if policy.trigger != "budget" or not folded or not policy.recall or not policy.recall_share:
        return 0
    kept = policy.keep_recent_tokens or 0
    if unsummarized_tokens <= 2 * kept:
        return 0
    return question_ceiling(policy.recall_max_tokens, policy.recall_share, usable, 1.0)


def emergency_due(policy: Policy, projected_tokens: int, usable_window: int) -> bool:
    """Decide whether the next send must wait for a compaction.

    Always on, whatever the trigger: true when the request would not fit the usable window,
    or when it reaches ``emergency_ratio`` of it (seed 003: 95 %).

    Args:
        policy: The conversation's policy.
        projected_tokens: The next request's estimated input tokens.
        usable_window: The window minus the reply's ``max_tokens``.

    Returns:
        True when a blocking compaction (or, failing that, dropping old turns) is needed.
    """
    if projected_tokens > usable_window:
        return True
    if policy.emergency_ratio >= 1.0:
        return False
    return projected_tokens >= policy.emergency_ratio * usable_window


def plan_boundary(policy: Policy, raw_messages: Sequence[Message], *, manual: bool = False) -> int:
    """Choose how many leading raw messages the next version folds in.

    Only whole turns are folded, and a turn still waiting for its final answer never is. The
    verbatim tail is ``keep_recent`` messages rounded out to whole turns (which always keeps the
    last turn), or the ``keep_recent_tokens`` recent window (seed 004) except under the
    ``cost`` trigger, which decides how much to carry by price. With ``keep_recent`` 0
    a finished last turn may be folded too: seed 001 summarises turns 1-3 once turn 3 is answered,
    so turn 4 is sent as ``[Summary(1-3), Turn4]``. With the ``turns`` trigger and the
    ``segments`` strategy one block of exactly ``every_turns`` turns is folded per version
    (turns 1-3, then 4-6 …); a manual compaction may fold a shorter block.

    Args:
        policy: The conversation's policy.
        raw_messages: The messages after the active version's coverage, in order.
        manual: True for a user-requested (or emergency) compaction: folds what it can
            (under the ``budget`` trigger only the user's own request does; an emergency
            folds down to the budget's share like the trigger).

    Returns:
        The number of leading messages to fold; 0 when there is nothing to do.
    """
    turns = group_turns(raw_messages)
    if not turns:
        return 0
    last_done = is_complete_turn(turns[-1])
    # The cost trigger sizes what it folds by price: only ``keep_recent`` messages stay
    # verbatim, recall brings back what a question needs (docs/presets.md, "Compact when it pays").
    # The budget trigger folds down to its share of the budget; asked by the user, a fold
    # keeps only ``keep_recent`` messages, as ``/compact`` does elsewhere.
    by_tokens = policy.trigger != "cost" and not (policy.trigger == "budget" and manual)
    if policy.keep_recent_tokens is not None and by_tokens:
        limit = boundary_for_token_budget(raw_messages, get_counter(), policy.keep_recent_tokens)
    elif policy.keep_recent <= 0 and last_done:
        limit = len(raw_messages)
    else:
        limit = boundary_for_keep_recent(raw_messages, policy.keep_recent)
    if not last_done:
        limit = min(limit, len(raw_messages) - len(turns[-1]))
    # Whole turns only, whatever the helpers returned.
    foldable: list[int] = []
    edge = 0
    for turn in turns:
        if edge + len(turn) > limit:
            break
        edge += len(turn)
        foldable.append(edge)
    if not foldable:
        return 0
    if policy.trigger == "turns" and policy.strategy == "segments":
        every = max(1, policy.every_turns)
        if len(foldable) >= every:
            return foldable[every - 1]
        return foldable[-1] if manual else 0
    return foldable[-1]


def compaction_level(used_ratio: float) -> tuple[str, float]:
    """Pick seed 003's compression level from how full the window is.

    Below 85 % (an early or manual compaction) the summary is ``light`` and keeps half the
    text; from 85 % (the hybrid trigger) ``medium`` keeps 30 %; from 95 % (the emergency
    threshold) ``aggressive`` keeps 10 %.

    Args:
        used_ratio: The request's share of the usable window (0.0 and up).

    Returns:
        ``(level name, compression rate)``.
    """
    for name, below, rate in LEVELS:
        if used_ratio < below:
            return name, rate
    name, _, rate = LEVELS[-1]
    return name, rate
