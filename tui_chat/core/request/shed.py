"""What a request build left out to fit, and the notes that say so (never silently).

:class:`Shed` records how far each part has given way, in
:data:`~tui_chat.core.request.budget.GIVE_WAY` order; :func:`shed_notes` turns it into the
warnings of the request's :class:`~tui_chat.core.request.types.Breakdown`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tui_chat.core.policy import Policy
from tui_chat.core.request.compose import Candidate
from tui_chat.core.request.timeline import Timeline


class Room(Protocol):
    """What the notes read of a build: its policy, its limits and its messages."""

    policy: Policy
    limit: int
    """The model's limit (window minus the reply)."""
    usable: int
    """The window the request is kept within (the working budget when smaller)."""
    summary_cut: bool
    """Whether the summary was cut to its budget."""
    timeline: Timeline


@dataclass(frozen=True)
class Shed:
    """How much has been shed to fit the window (in :data:`~.budget.GIVE_WAY` order)."""

    results: int = 0
    """Turns (from the oldest) whose large tool results are cut (:mod:`.shrink`)."""
    turns: int = 0
    recall: int | None = None
    """Token limit of the recall section, when lowered to fit."""
    ledger: bool = True
    anchors: int | None = None
    summary: bool = True


def _room(builder: Room) -> str:
    return "working budget" if builder.usable < builder.limit else "usable window"


def _results_note(builder: Room, shed: Shed) -> str | None:
    """The note of the large tool results cut, if any."""
    timeline = builder.timeline
    start, cut = timeline.turn_start(shed.turns), timeline.turn_start(shed.results)
    count = sum(1 for piece in timeline.span_pieces(start, cut) if piece.shrunk is not None)
    if not count:
        return None
    return (
        f"{count} message(s) of large tool results of older turns cut to fit the "
        f"{_room(builder)} (each keeps its head and what it named; stored whole)"
    )


def shed_notes(builder: Room, candidate: Candidate, shed: Shed, fits: bool) -> list[str]:
    """The warnings of a build: what was left out or cut, in the order it gave way.

    Args:
        builder: The build.
        candidate: The request it chose.
        shed: What it shed for that request.
        fits: Whether the request fits the model's limit.

    Returns:
        One line per part that gave way (and pins over their budget, cut messages).
    """
    policy = builder.policy
    notes: list[str] = []
    results = _results_note(builder, shed)
    if results:
        notes.append(results)
    if candidate.over_budget_anchors:
        limit = f", at most {policy.max_anchors} pins" if policy.max_anchors is not None else ""
        notes.append(
            f"{candidate.over_budget_anchors} pinned message(s) not sent: over the anchor "
            f"budget ({policy.anchor_budget_tokens} tokens{limit})"
        )
    if candidate.cut_messages:
        notes.append(
            f"{candidate.cut_messages} message(s) cut to {policy.message_char_limit} characters "
            "in the request"
        )
    if builder.summary_cut:
        notes.append(
            f"the summary was cut to its budget of {policy.summary_max_tokens} tokens; "
            "regenerate it shorter to keep what the cut left out"
        )
    if shed.recall is not None:
        notes.append(f"recalled passages reduced to fit the {_room(builder)}")
    if not shed.ledger:
        notes.append(f"the identifier ledger was left out to fit the {_room(builder)}")
    if shed.turns:
        count = builder.timeline.turn_start(shed.turns)
        # A send compacts first when turns would give way (engine/send/session.py): say so.
        notes.append(
            f"{shed.turns} oldest turn(s) ({count} messages) over the {_room(builder)} of "
            f"{builder.usable} tokens: they will be summarised at the next send (compact now "
            "to see the summary first; left out only if summarising fails)"
        )
    if shed.anchors is not None:
        notes.append(f"pinned messages reduced to fit the {_room(builder)}")
    if not shed.summary:
        notes.append(f"the summary was left out to fit the {_room(builder)}")
    if not fits:
        notes.append(
            f"the request does not fit: {candidate.total} tokens for a usable window of "
            f"{builder.limit} even without older turns"
        )
    return notes
