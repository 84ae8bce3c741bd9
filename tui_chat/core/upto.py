""" "Compact up to here": the boundary of a version that ends with a chosen message's turn.

The user points at any message; the version folds every whole turn up to and including the
turn that message belongs to, so a tool call is never cut from its result and the version's
coverage ends exactly where that turn does.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.models import Message
from tui_chat.core.turns import group_turns, is_complete_turn


class BoundaryError(ValueError):
    """The chosen message cannot end a version (the message says why)."""


def boundary_upto(raw_messages: Sequence[Message], message_id: int, covered_to: int = 0) -> int:
    """How many leading raw messages a version ending with ``message_id``'s turn folds.

    Args:
        raw_messages: The messages after the active version's coverage, in order.
        message_id: The chosen message.
        covered_to: The active version's ``covers_to_message_id`` (0 when none).

    Returns:
        The number of leading messages of ``raw_messages`` to fold (at least 1).

    Raises:
        BoundaryError: the message is already summarised, is not in the conversation, or its
            turn has no final answer yet.
    """
    if message_id <= covered_to:
        raise BoundaryError(
            f"message #{message_id} is already summarized (the version in force covers up to "
            f"#{covered_to}); roll back to an earlier version first"
        )
    edge = 0
    for turn in group_turns(raw_messages):
        edge += len(turn)
        if any(m.id == message_id for m in turn):
            if not is_complete_turn(turn):
                raise BoundaryError(
                    f"the turn of message #{message_id} has no final answer yet; choose an "
                    "earlier message"
                )
            return edge
    raise BoundaryError(f"message #{message_id} is not in this conversation")
