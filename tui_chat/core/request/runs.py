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

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain as _chain
from itertools import pairwise
from operator import is_
from typing import Any

from tui_chat.core.models import Role
from tui_chat.core.request.types import Piece
from tui_chat.core.request.wellformed import group_roles, message_content, pair_tools
from tui_chat.core.tokens import TokenCounter

_flat = _chain.from_iterable


@dataclass(frozen=True, eq=False)
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
    opens_clean: bool = False
    """It opens with a user message whose role group holds no tool result."""
    ends_on_reply: bool = False
    """Its last message is a reply."""


@dataclass(frozen=True, eq=False)
class Chain(Composed):
    """Neighbouring runs, each independent of the next, laid out as one.

    A later build whose runs overlap this one's (the front moved on, runs were added at the
    end) takes the overlap as a slice instead of joining its runs again (:func:`chain`).
    """

    runs: tuple[Composed, ...] = ()
    """The runs, in order."""
    ends: tuple[tuple[int, int, int, int], ...] = ((0, 0, 0, 0),)
    """Running ``(pieces, messages, sent ids, tokens)`` before each run and after the last."""


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
    return Composed(
        tuple(pieces),
        tuple(messages),
        tokens,
        tuple(sent),
        opens_clean=_opens_clean(pieces),
        ends_on_reply=bool(pieces) and pieces[-1].role == "assistant",
    )


REUSE_SEARCH = 48
"""How many of a chain's first runs are looked for in earlier chains (new runs at the front
come first: the front moved into a new grid cell)."""

_Ends = tuple[int, int, int, int]


def _overlap(runs: Sequence[Composed], made: Sequence[Chain]) -> tuple[Chain, int, int] | None:
    """An earlier chain holding one of the first runs: ``(chain, index in runs, index in the
    chain)``, or ``None``."""
    for index, run in enumerate(runs[:REUSE_SEARCH]):
        for previous in made:
            if run in previous.runs:
                return previous, index, previous.runs.index(run)
    return None


def _grow(ends: list[_Ends], runs: Sequence[Composed]) -> None:
    for run in runs:
        last = ends[-1]
        ends.append(
            (
                last[0] + len(run.pieces),
                last[1] + len(run.messages),
                last[2] + len(run.sent_ids),
                last[3] + run.tokens,
            )
        )


def chain(runs: Sequence[Composed], made: Sequence[Chain]) -> Chain:
    """``runs`` laid out as one; the part an earlier chain already holds is sliced from it.

    Args:
        runs: Neighbouring runs, each independent of the next.
        made: Chains made before.

    Returns:
        The chain of ``runs``.
    """
    ends: list[_Ends] = [(0, 0, 0, 0)]
    head: Sequence[Composed] = runs
    middle: tuple[tuple[Piece, ...], tuple[dict[str, Any], ...], tuple[int, ...]] = ((), (), ())
    tail: Sequence[Composed] = ()
    found = _overlap(runs, made)
    if found is not None:
        previous, index, at = found
        same = list(map(is_, previous.runs[at:], runs[index:]))
        count = same.index(False) if False in same else len(same)
        if index == 0 and at == 0 and count == len(runs) == len(previous.runs):
            return previous  # the same runs: nothing to join or copy
        head, tail = runs[:index], runs[index + count :]
        _grow(ends, head)
        start, stop = previous.ends[at], previous.ends[at + count]
        middle = (
            previous.pieces[start[0] : stop[0]],
            previous.messages[start[1] : stop[1]],
            previous.sent_ids[start[2] : stop[2]],
        )
        base = ends[-1]
        shift = tuple(b - a for a, b in zip(start, base, strict=True))
        ends.extend(
            (e[0] + shift[0], e[1] + shift[1], e[2] + shift[2], e[3] + shift[3])
            for e in previous.ends[at + 1 : at + count + 1]
        )
    else:
        _grow(ends, head)
    _grow(ends, tail)
    return Chain(
        (*_flat(r.pieces for r in head), *middle[0], *_flat(r.pieces for r in tail)),
        (*_flat(r.messages for r in head), *middle[1], *_flat(r.messages for r in tail)),
        ends[-1][3],
        (*_flat(r.sent_ids for r in head), *middle[2], *_flat(r.sent_ids for r in tail)),
        opens_clean=runs[0].opens_clean if runs else False,
        ends_on_reply=runs[-1].ends_on_reply if runs else False,
        runs=tuple(runs),
        ends=tuple(ends),
    )


def pieces_of(unit: Unit) -> Sequence[Piece]:
    """The pieces of a unit."""
    return unit.pieces if isinstance(unit, Composed) else unit


def _first_role(pieces: Sequence[Piece]) -> Role:
    return pieces[0].role


def _opens_clean(pieces: Sequence[Piece]) -> bool:
    return bool(pieces) and _first_role(pieces) == "user" and not _opens_with_results(pieces)


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
    if isinstance(before, Composed):
        ends_on_reply = before.ends_on_reply
    else:
        ends_on_reply = before[-1].role == "assistant"
    opens_clean = after.opens_clean if isinstance(after, Composed) else _opens_clean(after)
    return ends_on_reply and opens_clean


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


def spans(levels: list[list[int]]) -> list[tuple[int, int]]:
    """Runs from bounds at several widths (finest first, each coarser level a subset of the
    finer): the coarsest runs in the middle, finer ones towards both ends."""
    *finer, coarse = levels
    if not finer:
        return list(pairwise(coarse))
    if len(coarse) < 2:
        return spans(finer)
    left = [level[: bisect_right(level, coarse[0])] for level in finer]
    right = [level[bisect_left(level, coarse[-1]) :] for level in finer]
    return [*spans(left), *pairwise(coarse), *spans(right)]
