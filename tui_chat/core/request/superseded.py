"""The one "superseded reply" rule: a failed or cut-off reply a later reply replaced.

A reply that failed (``error``), was cut off (``incomplete``) or is still marked ``streaming``
is not sent once a later reply of the same turn exists: a retry replaced it. Until then it is
sent with whatever text it has (a cut-off reply is context too). The engine applies the rule
to the raw tail it reads (:mod:`tui_chat.engine.build.assemble`); :func:`~.builder.build_request`
applies it to the messages it is given when it prepares them itself.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterator, Sequence
from operator import attrgetter

from tui_chat.core.models import Message

UNFINISHED = ("error", "incomplete", "streaming")
"""Statuses of a reply a later one can replace."""

_STATUS = attrgetter("status")
_ID = attrgetter("id")


def _positions(values: list[str], value: str) -> Iterator[int]:
    """Where ``value`` occurs in ``values`` (found by ``list.index``, not a Python loop)."""
    at = -1
    while True:
        try:
            at = values.index(value, at + 1)
        except ValueError:
            return
        yield at


def without_spans(messages: list[Message], spans: Sequence[tuple[int, int]]) -> list[Message]:
    """``messages`` without the ``(start, end)`` spans (ascending, not overlapping); the list
    itself when there is nothing to leave out (no copy of a window-sized list)."""
    if not spans:
        return messages
    out: list[Message] = []
    at = 0
    for start, end in spans:
        out += messages[at:start]
        at = end
    out += messages[at:]
    return out


def without_superseded(
    messages: Sequence[Message], unfinished: Collection[int] | None = None
) -> list[Message]:
    """``messages`` without the replies a later reply of the same turn replaced.

    Turn numbers never decrease along a conversation (the store numbers them so), so the
    replies of a turn follow each other and the search for a later one stops at the next turn.

    Args:
        messages: Messages in conversation order.
        unfinished: The ids of the messages that are not ``complete``, when known (a kept
            tail knows them): only those are looked at.

    Returns:
        The messages to send (``messages`` itself when it is a list and nothing is left out).
    """
    if unfinished is None:
        statuses = list(map(_STATUS, messages))
        found = [i for status in UNFINISHED for i in _positions(statuses, status)]
    else:
        found = []
        for message_id in unfinished:
            index = bisect_left(messages, message_id, key=_ID)
            if index < len(messages) and messages[index].id == message_id:
                found.append(index)
    replaced: list[tuple[int, int]] = []
    for index in sorted(found):
        message = messages[index]
        if message.role != "assistant":
            continue
        for later in range(index + 1, len(messages)):
            if messages[later].turn != message.turn:
                break
            if messages[later].role == "assistant":
                replaced.append((index, index + 1))
                break
    return without_spans(messages if isinstance(messages, list) else list(messages), replaced)
