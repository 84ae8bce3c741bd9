"""How much compaction is due: what ``compact`` (and ``ctrl+g``) folds before it stops."""

from __future__ import annotations

import math
from dataclasses import replace

from tui_chat.core.policy import Policy
from tui_chat.core.triggers import plan_boundary
from tui_chat.core.turns import group_turns
from tui_chat.engine.compaction.worker import BACKLOG_STEP_MESSAGES
from tui_chat.store.repository import Store


async def due_versions(
    store: Store, policy: Policy, conversation_id: str, *, manual: bool = True
) -> int:
    """How many versions folding everything due would take (0: nothing to fold).

    One for the ``running`` strategy; one per whole block of ``every_turns`` turns for the
    ``turns`` trigger with segments (a manual compaction folds a shorter block when no whole
    one waits). A backlog longer than one compaction step is estimated from its length
    (about one version per step, or per block of two-message turns), never read whole.

    Args:
        store: The open store.
        policy: The conversation's policy.
        conversation_id: The conversation.
        manual: Count what a manual compaction may fold (else only what is due).

    Returns:
        The number of versions.
    """
    parent = await store.summaries.active(conversation_id)
    after = parent.covers_to_message_id if parent else 0
    waiting, _ = await store.messages.stats(conversation_id, after_id=after)
    if waiting > BACKLOG_STEP_MESSAGES:
        # A backlog, folded a step at a time (compaction.py): counted without reading it.
        if policy.trigger != "turns" or policy.strategy != "segments":
            return math.ceil(waiting / BACKLOG_STEP_MESSAGES)
        return max(1, waiting // (2 * max(1, policy.every_turns)))
    raw = await store.messages.history(conversation_id, after_id=after)
    if plan_boundary(policy, raw, manual=manual) <= 0:
        return 0
    if policy.trigger != "turns" or policy.strategy != "segments":
        return 1
    whole = replace(policy, every_turns=len(raw) + 1)  # every foldable turn at once
    turns = len(group_turns(raw[: plan_boundary(whole, raw, manual=True)]))
    return max(1, turns // max(1, policy.every_turns))
