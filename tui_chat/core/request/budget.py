"""One usable window, split into explicit budgets on purpose.

A policy may give each part of the request a share of the usable window (context window minus
the reply's ``max_tokens``) instead of a fixed token count: ``summary_share``, ``ledger_share``,
``recall_share``, ``recent_share`` and ``pins_share``. :func:`for_window` turns those shares
into the token settings every other module reads (``summary_max_tokens``,
``recall_budget_tokens``, ``threshold_tokens``/``keep_recent_tokens``,
``anchor_budget_tokens``), so the triggers, the summarizer, the request builder and the gauge
all see the same figures. :func:`budgets` lists them for the gauge and ``context --json``.

When the parts need more than the usable window, they give way in :data:`GIVE_WAY` order:

0. the large tool results of the older turns (:mod:`~tui_chat.core.request.shrink`): each is
   sent as its head, a marker and the identifiers it held, the oldest first and only as many
   as the excess needs; the newest turn's results stay whole. A coding chat's history is
   mostly what its tools returned, and the store (and recall) keep every result whole;
1. recall down to its floor (:data:`RECALL_FLOOR` of its budget): the part that filled the
   room the others left, and the cheapest to lose per token on LoCoMo;
2. the identifier ledger (its entries stay in the stored version and in ``summary --json``);
3. the oldest raw turns — only after compaction had its chance (the engine compacts before a
   send that would not fit), and always with a visible warning;
4. the rest of recall;
5. pinned messages, newest pins kept longest;
6. the summary itself.

Recall is not simply the first to go. Measured on the dev LoCoMo conversations, 3,000 usable
tokens, each question followed by about 1,900 tokens of pasted text so that the parts cannot all
fit: with the floor, 69.9 % of questions keep their evidence in the request; with recall giving
way first, 64.0 %. Below its floor recall is worth more than the oldest turns, which a send
compacts first anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from tui_chat.core.payback import break_even
from tui_chat.core.policy import Policy

GIVE_WAY: tuple[str, ...] = (
    "tool_results",
    "recall_floor",
    "ledger",
    "turns",
    "recall",
    "anchors",
    "summary",
)
"""The order in which parts give way when the request does not fit (see the module doc)."""

RECALL_FLOOR = 0.5
"""Share of the recall budget kept until the ledger and the oldest turns have given way."""

SMALL_WINDOW = 8_000
"""A working window up to this many tokens is small: the memory block's shares there (15 %)
hold at most 1,200 tokens for the whole folded history (a 2k window: a 151-token summary of 367
LoCoMo messages and a ledger of times of day), while recall spends the same tokens on what the
new message asks about. Above it the ledger keeps its own share (a coding session at a 12k
window keeps 90 % of its identifiers with it, 57 % without)."""
SMALL_MEMORY_SHARE = 0.05
"""The summary's share, at most, in a small window; the ledger has no share of its own there
and takes what the summary leaves of it (:func:`~tui_chat.core.ledger.room`). Dev LoCoMo,
default minus the strong probe (summary 10 % and ledger 5 % before): 2k -0.4 -> +0.4, 4k +0.4
-> +1.4, 8k +0.4 -> +1.0 points; a 2 % summary measured the same at 2k and 4k."""

BUDGET_KEYS: tuple[str, ...] = ("anchors", "summary", "ledger", "recall", "recent")
"""The parts that have a budget of their own (system and new message take what they need)."""


def for_window(policy: Policy, usable: int, explicit: Collection[str] = ()) -> Policy:
    """Turn a policy's shares of the usable window into token budgets.

    Args:
        policy: A resolved policy (a policy without shares is returned unchanged).
        usable: The usable window (the working budget, when the policy sets a smaller one,
            is what the shares are shares of).
        explicit: Settings the user gave values of their own (conversation or config): a
            share never overrides them (``keep_recent`` keeps the message-count tail).

    Returns:
        The policy with ``summary_max_tokens``, ``recall_budget_tokens`` (at most
        ``recall_max_tokens``), ``threshold_tokens`` and ``keep_recent_tokens`` (raw turns may
        grow to the recent budget, then compaction folds them to half of it) and
        ``anchor_budget_tokens`` set from the shares that are set.
    """
    changes: dict[str, Any] = {}
    usable = within_budget(policy, usable)
    if policy.summary_share is not None:
        share = policy.summary_share
        if usable <= SMALL_WINDOW:
            share = min(share, SMALL_MEMORY_SHARE)
        changes["summary_max_tokens"] = max(64, int(share * usable))
    if policy.recall_share is not None:
        share = int(policy.recall_share * usable)
        changes["recall_budget_tokens"] = min(share, policy.recall_max_tokens)
    if policy.recent_share is not None:
        recent = max(100, int(policy.recent_share * usable))
        changes["threshold_tokens"] = recent
        if "keep_recent" not in explicit:
            changes["keep_recent_tokens"] = max(50, recent // 2)
    if policy.pins_share is not None:
        changes["anchor_budget_tokens"] = int(policy.pins_share * usable)
    if policy.trigger == "budget" and "keep_recent" not in explicit:
        # A fold keeps the newest turns verbatim, up to this share of the budget.
        changes["keep_recent_tokens"] = max(50, int(policy.budget_keep * usable))
    changes = {key: value for key, value in changes.items() if key not in explicit}
    return replace(policy, **changes) if changes else policy


GIST_SHARE = 0.005
"""The summary's share, at most, of a version the user asks for (``compact``) above a small
window with recall on: a gist (500 tokens of a 100,000-token budget). Measured after one manual
compact at the real window (``benchmarks/compacted.py``, conv-30, recall not capped): a 3,313-token
extractive summary, strong probe minus 1.0 points; this gist (316 tokens, its ledger 601) plus
3.8; recall finds what the summary would have repeated."""


def gist(policy: Policy, usable: int) -> Policy:
    """The policy a version the user asks for is summarised with: above
    :data:`SMALL_WINDOW`, where a policy gives the summary a share and recall is on, a summary
    of at most :data:`GIST_SHARE` of the working window, so the request after a compact carries
    what search cannot (who, what, when, the identifiers in the ledger) and leaves the details
    to recall, which such a version does not cap
    (:func:`~tui_chat.core.request.recall_cost.recall_cap`). Seeds keep their own summaries.

    Args:
        policy: The conversation's policy (after :func:`for_window`).
        usable: The usable window.

    Returns:
        The policy, its ``summary_max_tokens`` lowered where the rule applies.
    """
    usable = within_budget(policy, usable)
    if not policy.recall or policy.summary_share is None or usable <= SMALL_WINDOW:
        return policy
    wanted = max(64, int(GIST_SHARE * usable))
    return replace(policy, summary_max_tokens=min(policy.summary_max_tokens, wanted))


def within_budget(policy: Policy, usable: int) -> int:
    """The window a request is kept within: the usable window, or the policy's working
    budget when that is smaller."""
    return usable if policy.budget is None else max(0, min(usable, policy.budget))


def ledger_budget(policy: Policy, usable: int) -> int:
    """Tokens the identifier ledger may take in the memory block (none of its own in a small
    window, :data:`SMALL_WINDOW`, where a policy gives the summary a share: it takes what the
    summary leaves)."""
    usable = within_budget(policy, usable)
    if usable <= SMALL_WINDOW and policy.summary_share is not None:
        return 0
    return max(0, int(policy.ledger_share * usable))


def budgets(policy: Policy, usable: int) -> dict[str, int]:
    """The budget of each part with one (keys :data:`BUDGET_KEYS`), for the gauge.

    Args:
        policy: The policy in force (after :func:`for_window`).
        usable: The usable window.

    Returns:
        Tokens per part; ``recent`` is the raw turns' budget (the ``tokens`` trigger's
        threshold, else what the ratio trigger leaves them).
    """
    usable = within_budget(policy, usable)
    if policy.trigger == "tokens":
        recent = policy.threshold_tokens
    elif policy.trigger == "ratio":
        recent = int(policy.ratio * usable)
    else:
        recent = usable
    return {
        "anchors": policy.anchor_budget_tokens,
        "summary": policy.summary_max_tokens,
        "ledger": ledger_budget(policy, usable),
        "recall": policy.recall_budget_tokens if policy.recall else 0,
        "recent": min(recent, usable),
    }


def trigger_tokens(policy: Policy, usable: int, sections: Mapping[str, int]) -> int | None:
    """The request size at which the policy's trigger fires, for the gauge's mark."""
    if policy.trigger == "budget":
        return usable
    if policy.trigger == "ratio":
        return int(policy.ratio * usable)
    recall = min(sections["recall"], policy.recall_budget_tokens)  # a filling recall yields
    fixed = sections["system"] + sections["anchors"] + sections["summary"] + sections["ledger"]
    if policy.trigger == "tokens":
        return policy.threshold_tokens + fixed + recall
    if policy.trigger == "cost":
        net = int(policy.ratio * usable)
        pays_at = break_even(
            policy, fixed=fixed + recall, summary=sections["summary"], usable=usable
        )
        return net if pays_at is None else min(pays_at, net)
    return None
