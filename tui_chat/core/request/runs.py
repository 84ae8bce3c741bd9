"""Runs of raw messages laid out once and reused, and when two runs can be laid out apart.

The messages of a request are the raw turns made well-formed (:mod:`.wellformed`): roles
merged, tool calls paired with their results. Both rules only look across the join of two
neighbouring messages of different roles when a ``tool_result`` answers a call. So a run of
whole turns can be laid out on its own and its messages reused in later requests, as long as
where it meets its neighbours nothing is shared: the run before it ends on a reply and the run
opens with a user message whose first role group carries no tool result
(:func:`independent`). Runs that do not meet that are laid out together (:func:`joined`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_chat.core.models import Role
from tui_chat.core.request.types import Piece
from tui_chat.core.request.wellformed import group_roles, message_content, pair_tools
from tui_chat.core.tokens import TokenCounter


@dataclass(frozen=True)
class Composed:
    """A run of whole turns laid out on its own (no filler, no trimming, no new message)."""

    pieces: tuple[Piece, ...]
    """The run's pieces as prepared (before pairing)."""
    messages: tuple[dict[str, Any], ...]
    """The messages it sends (never changed once made: a request copies what it changes)."""
    tokens: int
    """Tokens of its messages after pairing (all counted as ``recent``)."""
    sent_ids: tuple[int, ...]
    """Stored messages it sends, in order."""


Unit = Composed | Sequence[Piece]
"""A run laid out already, or pieces still to lay out."""


def compose_run(pieces: Sequence[Piece], counter: TokenCounter) -> Composed:
    """Lay out a run of whole turns on its own.

    Args:
        pieces: Its pieces, in order.
        counter: Recounts messages that pairing changes.

    Returns:
        The run's messages, tokens and sent ids.
    """
    messages: list[dict[str, Any]] = []
    tokens = 0
    sent: list[int] = []
    for group in pair_tools(group_roles(pieces), counter):
        for piece in group:
            tokens += piece.tokens
            if piece.source is not None:
                sent.append(piece.source.id)
        messages.append({"role": group[0].role, "content": message_content(group)})
    return Composed(tuple(pieces), tuple(messages), tokens, tuple(sent))


def pieces_of(unit: Unit) -> Sequence[Piece]:
    """The pieces of a unit."""
    return unit.pieces if isinstance(unit, Composed) else unit


def _first_role(pieces: Sequence[Piece]) -> Role:
    return pieces[0].role


def _opens_with_results(pieces: Sequence[Piece]) -> bool:
    """Whether the first role group carries a ``tool_result`` (it answers the run before)."""
    for piece in pieces:
        if piece.role != pieces[0].role:
            return False
        if any(block.get("type") == "tool_result" for block in piece.content):
            return True
    return False


def independent(before: Unit, after: Unit) -> bool:
    """Whether two neighbouring runs lay out the same apart as together.

    True when ``before`` ends on a reply and ``after`` opens with a user message whose role
    group holds no tool result: no role group spans the join, ``before``'s last calls have
    nothing to be paired with either way and ``after``'s first group answers nothing.
    """
    first, second = pieces_of(before), pieces_of(after)
    return (
        first[-1].role == "assistant"
        and _first_role(second) == "user"
        and not _opens_with_results(second)
    )


def joined(units: Sequence[Unit]) -> list[Unit]:
    """``units`` with empty ones left out and neighbours that are not independent merged.

    A laid-out run at the front that does not open with a user message is taken apart too
    (the request's first message gets a filler in front of it, see
    :func:`~.wellformed.open_with_user`).

    Args:
        units: Runs in order.

    Returns:
        Units in order, each independent of the next.
    """
    out: list[Unit] = []
    for unit in units:
        if not pieces_of(unit):
            continue
        out.append(unit)
        while len(out) >= 2 and not independent(out[-2], out[-1]):
            last = out.pop()
            out[-1] = [*pieces_of(out[-1]), *pieces_of(last)]
    if out and isinstance(out[0], Composed) and _first_role(out[0].pieces) != "user":
        out[0] = list(out[0].pieces)
    return out
