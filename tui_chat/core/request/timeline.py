"""A message list kept between request builds, so each build only prepares what is new.

A conversation's raw tail changes little from one build to the next: new messages at its end,
the oldest ones leaving (or a few earlier ones coming back) at its front, and now and then a
reply that was still streaming replaced. :class:`Timeline` holds the last list it was given,
with what the builder derives from each message (turn starts, the prompts left unanswered, the
prepared :class:`~.types.Piece` and running token sums), at *absolute* positions that stay put
while the list's front moves. :meth:`Timeline.align` finds the old list inside the new one by
object identity (a stored message is a frozen object: the same object is the same message) and
prepares only the messages that are new or changed.

Rules that keep a reused fact right:

- a fact is kept only for a message that is the very same object at the same place;
- a message's piece depends on that message alone (replies a retry replaced are left out
  before, :mod:`.superseded`);
- pieces depend on the counter, the character limit and which messages are pinned: when any of
  them changes, everything is prepared again;
- a composed run of messages (:mod:`.runs`) is dropped as soon as any message in it changes.

Pure: no I/O; the engine keeps one timeline per conversation and passes it in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter, is_
from typing import Any

from tui_chat.core.attachments import is_ref
from tui_chat.core.models import Message
from tui_chat.core.request.pieces import prepare
from tui_chat.core.request.runs import Chain
from tui_chat.core.request.superseded import without_superseded
from tui_chat.core.request.types import ContextInputs, Layout, Piece
from tui_chat.core.tokens import TokenCounter
from tui_chat.core.turns import starts_turn
from tui_chat.core.unanswered import answers

_ID = attrgetter("id")

PieceKey = tuple[TokenCounter, int | None, frozenset[int]]
"""What a message's piece depends on besides the message: counter, character limit, pins."""


class Timeline:
    """One conversation's message list and what is derived from each message.

    Args:
        grid: Messages per composed run (0: runs are not kept, every build composes anew).
    """

    def __init__(self, grid: int = 0) -> None:
        self.grid = grid
        self.messages: list[Message] = []
        """The list last aligned to."""
        self.ids: list[int] = []
        self.origin = 0
        """Absolute position of ``messages[0]``."""
        self.starts: list[int] = []
        """Absolute positions of the messages that open a turn (:func:`starts_turn`)."""
        self.marks: list[int] = [0]
        """Running count of answering messages, before each position (one more entry)."""
        self.silent: list[int] = []
        """Absolute starts of closed turns that open with a prompt and got no answer."""
        self.key: PieceKey | None = None
        self.pieces: list[Piece | None] = []
        self.tokens: list[int] = [0]
        """Running tokens of the pieces, before each position (one more entry)."""
        self.cuts: list[int] = [0]
        """Running count of pieces cut to the character limit."""
        self.refs: list[int] = [0]
        """Running count of pieces holding an attachment reference."""
        self.saved: list[int] = [0]
        """Running tokens that cutting the pieces' large tool results saves (:mod:`.shrink`)."""
        self.bounds: list[int] = []
        """Absolute turn starts where kept runs begin: the first start past each multiple of
        :attr:`grid` (any split into whole turns lays out the same; this one is stable)."""
        self.runs: dict[tuple[int, int], Any] = {}
        """Composed runs by absolute ``(start, end)`` (see :mod:`.runs`)."""
        self.chains: list[Chain] = []
        """The chains of runs laid out last, newest first (see :func:`.runs.chain`)."""
        self._shift = 0
        self._turns = 0

    # -- alignment ---------------------------------------------------------------------

    def align(self, messages: Sequence[Message], key: PieceKey | None = None) -> None:
        """Hold ``messages`` from now on, reusing what was derived for the same objects.

        Args:
            messages: The new list, in conversation order (ids ascending).
            key: What pieces depend on; ``None`` keeps pieces off (turn facts only).
        """
        if key != self.key:
            self.key = key
            self._reset(messages)
        else:
            self._follow(messages)
        self._index()

    def _follow(self, messages: Sequence[Message]) -> None:
        """Move from the old list to ``messages``, keeping what is the same."""
        old = self.messages
        if not old or not messages:
            self._reset(messages)
            return
        at = bisect_left(self.ids, messages[0].id)
        if at < len(old) and old[at] is messages[0]:
            if at:
                self._drop_front(at)
        else:
            back = bisect_left(messages, old[0].id, key=_ID)
            if back < len(messages) and messages[back] is old[0]:
                self._prepend(messages[:back])
            else:
                self._reset(messages)
                return
        size = min(len(self.messages), len(messages))
        kept = size
        # Equal lists are compared by identity first, element by element, in C; an equal
        # but distinct message derives the same facts, so either way nothing is prepared.
        old = self.messages if len(self.messages) == size else self.messages[:size]
        new = messages if len(messages) == size and isinstance(messages, list) else None
        if old != (new if new is not None else list(messages[:size])):
            kept = list(map(is_, self.messages, messages)).index(False)
        if kept < len(self.messages):
            self._truncate(kept)
        if kept < len(messages):
            self._append(messages[kept:])

    def _reset(self, messages: Sequence[Message]) -> None:
        self.messages, self.ids, self.origin = [], [], 0
        self.starts, self.marks, self.silent, self.bounds = [], [0], [], []
        self.pieces, self.tokens, self.cuts, self.refs, self.saved = [], [0], [0], [0], [0]
        self.runs, self.chains = {}, []
        self._append(messages)

    def _piece(self, message: Message) -> Piece | None:
        if self.key is None:
            return None
        counter, limit, pinned = self.key
        return prepare(message, counter, limit, message.id in pinned)

    def _append(self, messages: Sequence[Message]) -> None:
        for message in messages:
            position = self.origin + len(self.messages)
            if starts_turn(message.role, message.content):
                self._close_turn(position)
                if self._is_bound(self.starts[-1] if self.starts else None, position):
                    self.bounds.append(position)
                self.starts.append(position)
            piece = self._piece(message)
            self.messages.append(message)
            self.ids.append(message.id)
            self.marks.append(self.marks[-1] + answers(message))
            self.pieces.append(piece)
            self.tokens.append(self.tokens[-1] + (piece.tokens if piece else 0))
            self.cuts.append(self.cuts[-1] + (1 if piece and piece.cut else 0))
            self.refs.append(self.refs[-1] + _holds_refs(piece))
            self.saved.append(self.saved[-1] + _saves(piece))

    def _close_turn(self, end: int) -> None:
        """A turn starting before ``end`` (absolute) closes there: note it if unanswered."""
        if self.starts and self.starts[-1] >= self.origin:
            start = self.starts[-1]
            if self.marks[end - self.origin] == self.marks[start - self.origin]:
                self.silent.append(start)

    def _drop_front(self, count: int) -> None:
        self.origin += count
        del self.messages[:count], self.ids[:count], self.pieces[:count]
        for values in self._running():
            del values[:count]
        del self.starts[: bisect_left(self.starts, self.origin)]
        del self.silent[: bisect_left(self.silent, self.origin)]
        del self.bounds[: bisect_left(self.bounds, self.origin)]
        self.runs = {span: run for span, run in self.runs.items() if span[0] >= self.origin}

    def _truncate(self, count: int) -> None:
        end = self.origin + count
        del self.messages[count:], self.ids[count:], self.pieces[count:]
        for values in self._running():
            del values[count + 1 :]
        del self.starts[bisect_left(self.starts, end) :]
        del self.bounds[bisect_left(self.bounds, end) :]
        # The turn holding the new last message is open again.
        last = self.starts[-1] if self.starts and self.starts[-1] >= self.origin else self.origin
        del self.silent[bisect_left(self.silent, last) :]
        self._forget_runs(end)

    def _running(self) -> tuple[list[int], ...]:
        """The running counts (one entry more than messages)."""
        return (self.marks, self.tokens, self.cuts, self.refs, self.saved)

    def _forget_runs(self, position: int) -> None:
        """Drop the composed runs that reach ``position`` (absolute) or beyond."""
        if any(end > position for _, end in self.runs):
            self.runs = {span: run for span, run in self.runs.items() if span[1] <= position}

    def _prepend(self, messages: Sequence[Message]) -> None:
        """Earlier messages come back in front (the tail's budget grew)."""
        count = len(messages)
        self.origin -= count
        starts = [self.origin + i for i, m in enumerate(messages) if starts_turn(m.role, m.content)]
        pieces = [self._piece(m) for m in messages]
        self.marks[:0] = _running_before(self.marks[0], [answers(m) for m in messages])
        self.tokens[:0] = _running_before(self.tokens[0], [p.tokens if p else 0 for p in pieces])
        self.cuts[:0] = _running_before(self.cuts[0], [1 if p and p.cut else 0 for p in pieces])
        self.refs[:0] = _running_before(self.refs[0], [_holds_refs(p) for p in pieces])
        self.saved[:0] = _running_before(self.saved[0], [_saves(p) for p in pieces])
        self.messages[:0] = messages
        self.ids[:0] = [m.id for m in messages]
        self.pieces[:0] = pieces
        # Turns that close within the new part, and the last one where the old part opens one.
        ends = [*starts[1:], *self.starts[:1]]
        silent = [
            start
            for start, end in zip(starts, ends, strict=False)
            if self.marks[end - self.origin] == self.marks[start - self.origin]
        ]
        self.starts[:0] = starts
        self.silent[:0] = silent
        self.bounds[:0] = [
            start
            for before, start in zip([None, *starts], starts, strict=False)
            if self._is_bound(before, start)
        ]

    def _is_bound(self, before: int | None, start: int) -> bool:
        """Whether a turn start (absolute) begins a run: a grid line lies since ``before``."""
        return self.grid > 0 and (before is None or start // self.grid > before // self.grid)

    # -- queries (positions relative to ``messages``) ----------------------------------

    def __len__(self) -> int:
        return len(self.messages)

    def _index(self) -> None:
        """Where the list's turns are found in :attr:`starts` (after every change)."""
        first = bisect_left(self.starts, self.origin)
        opens = first < len(self.starts) and self.starts[first] == self.origin
        # Turn ``i`` (i > 0) starts at ``starts[i + self._shift]``: a list that does not open
        # a turn has a turn of its own in front.
        self._shift = first - (0 if opens else 1)
        self._turns = len(self.starts) - first + (0 if opens else 1) if self.messages else 0

    def turn_count(self) -> int:
        """How many turns :func:`~tui_chat.core.turns.group_turns` makes of the list."""
        return self._turns

    def turn_start(self, index: int) -> int:
        """Where turn ``index`` begins (``len(self)`` for one past the last turn)."""
        if index == 0:
            return 0
        if index >= self._turns:
            return len(self.messages)
        return self.starts[index + self._shift] - self.origin

    def first_turn_reaching(self, low: int, high: int, tokens: int, *, saved: bool = False) -> int:
        """The first turn index in ``(low, high]`` whose start is ``tokens`` or more past the
        start of turn ``low`` (``high`` when none is): the turns to leave out to free them
        (``saved``: the turns whose large tool results to cut, :mod:`.shrink`)."""
        if low >= high:
            return high
        sums = self.saved if saved else self.tokens
        base = sums[self.turn_start(low)]
        found = bisect_left(
            range(low + 1, high + 1),
            base + tokens,
            key=lambda index: sums[self.turn_start(index)],
        )
        return low + 1 + found if found < high - low else high

    def _turn_end(self, start: int) -> int:
        """The end of the turn opening at absolute ``start``."""
        after = bisect_left(self.starts, start + 1)
        end = self.starts[after] if after < len(self.starts) else self.origin + len(self)
        return end - self.origin

    def unanswered(self, *, keep_last: bool) -> list[tuple[int, int]]:
        """The turns left out as unanswered prompts (see :mod:`~tui_chat.core.unanswered`).

        Args:
            keep_last: Keep the last turn even when it is unanswered.

        Returns:
            ``(start, end)`` of each such turn, in order.
        """
        spans = [(s - self.origin, self._turn_end(s)) for s in self.silent if s >= self.origin]
        if not keep_last and self.messages:
            last = self.starts[-1] if self.starts and self.starts[-1] >= self.origin else None
            if last is not None and self.marks[-1] == self.marks[last - self.origin]:
                spans.append((last - self.origin, len(self)))
        return spans

    def span_tokens(self, start: int, end: int) -> int:
        """Tokens of the pieces of ``messages[start:end]``."""
        return self.tokens[end] - self.tokens[start]

    def span_saved(self, start: int, end: int) -> int:
        """Tokens that cutting the large tool results of ``messages[start:end]`` saves."""
        return self.saved[end] - self.saved[start]

    def span_shrunk(self, start: int, end: int) -> list[Piece]:
        """The pieces of ``messages[start:end]`` that can be sent, their large tool results
        cut (:attr:`~.types.Piece.shrunk`), in order."""
        return [p.shrunk or p for p in self.pieces[start:end] if p is not None]

    def span_cuts(self, start: int, end: int) -> int:
        """Pieces of ``messages[start:end]`` cut to the character limit."""
        return self.cuts[end] - self.cuts[start]

    def span_refs(self, start: int, end: int) -> int:
        """Pieces of ``messages[start:end]`` holding an attachment reference."""
        return self.refs[end] - self.refs[start]

    def span_pieces(self, start: int, end: int) -> list[Piece]:
        """The pieces of ``messages[start:end]`` that can be sent, in order."""
        return [piece for piece in self.pieces[start:end] if piece is not None]

    def run_bounds(self, start: int) -> list[int]:
        """Where the kept runs of ``messages[start:]`` begin and end (absolute positions):
        the :attr:`bounds` from ``start`` on. Empty without a grid."""
        return self.bounds[bisect_left(self.bounds, self.origin + start) :]

    def wide_bounds(self, start: int, factor: int) -> list[int]:
        """Bounds of wider runs of ``messages[start:]`` (absolute positions): the first of
        :attr:`bounds` at or after each multiple of ``grid × factor`` past ``start``."""
        if self.grid <= 0 or not self.bounds:
            return []
        width = self.grid * factor
        line = -(-(self.origin + start) // width) * width
        end = self.bounds[-1]
        found: list[int] = []
        while line <= end:
            bound = self.bounds[bisect_left(self.bounds, line)]
            if not found or bound > found[-1]:
                found.append(bound)
            line = -(-(bound + 1) // width) * width
        return found

    def keep(self, layout: Layout) -> None:
        """Keep what a build of the messages this timeline holds laid out, for the next
        builds to reuse (call it before the timeline is aligned again)."""
        if self.grid > 0:
            self.runs.update(layout.runs)
        if layout.chains is not None:
            self.chains = list(layout.chains)


def _holds_refs(piece: Piece | None) -> int:
    """1 when ``piece`` holds an attachment reference block, else 0."""
    return int(piece is not None and any(is_ref(block) for block in piece.content))


def _saves(piece: Piece | None) -> int:
    """Tokens that sending ``piece`` with its large tool results cut saves."""
    return piece.tokens - piece.shrunk.tokens if piece is not None and piece.shrunk else 0


def _running_before(base: int, values: Sequence[int]) -> list[int]:
    """Running sums for positions in front of one whose running sum is ``base``."""
    out = [0] * len(values)
    total = base
    for index in range(len(values) - 1, -1, -1):
        total -= values[index]
        out[index] = total
    return out


def prepared(inputs: ContextInputs, kept: Timeline | None = None) -> Timeline:
    """``inputs.raw_messages`` prepared for :func:`~.builder.build_request`.

    Args:
        inputs: The build's inputs (its raw messages, counter, character limit and pins).
        kept: The conversation's timeline kept between builds: only what changed since it was
            last aligned is prepared. ``None``: a new timeline that keeps no runs.

    Returns:
        The timeline, aligned to ``inputs.raw_messages``.
    """
    timeline = kept if kept is not None else Timeline()
    pinned = frozenset(message.id for _, message in inputs.anchors)
    timeline.align(inputs.raw_messages, (inputs.counter, inputs.policy.message_char_limit, pinned))
    return timeline


def fresh_timeline(inputs: ContextInputs) -> Timeline:
    """``inputs.raw_messages`` prepared for one build that keeps nothing: replies a retry
    replaced are left out (:mod:`.superseded`), as the engine's tail leaves them out."""
    return prepared(replace(inputs, raw_messages=without_superseded(inputs.raw_messages)))
