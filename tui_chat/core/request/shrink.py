"""Large tool results of older turns, cut down before anything is folded.

A coding chat's history is mostly what its tools returned: files read, listings, logs (seed
002's "large file reads"). When a request is over its budget, the first thing to give way is
the text of those results in the older turns (:data:`~.budget.GIVE_WAY`): a result longer than
:data:`LARGE_CHARS` is sent as its first :data:`HEAD_CHARS` characters, then a marker saying how
much was cut, that the whole result is in the store (and recall can bring it back), and the
identifiers it held that its head does not show — paths, ids, figures, names — so what the
result established stays in the request. Only when that is not enough are turns folded into a
summary. The newest turn's results are never cut: they are what the model is working on.

A message's cut form depends on that message alone, so it is prepared once with the message
(:func:`cut_piece`, kept as :attr:`~.types.Piece.shrunk`) and the builder chooses per build
which turns send it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tui_chat.core.blocks import block_text
from tui_chat.core.identifiers import scan
from tui_chat.core.models import ContentBlock, Message
from tui_chat.core.request.types import Piece
from tui_chat.core.tokens import TokenCounter

__all__ = ["HEAD_CHARS", "LARGE_CHARS", "cut_piece", "cut_result_text"]

LARGE_CHARS = 6_000
"""A tool result's text longer than this (about 1,500 tokens) is large: it is cut first when a
request is over its budget."""

HEAD_CHARS = 1_200
"""Characters of a large result's text that are kept, from its start."""

IDENTIFIER_CHARS = 1_200
"""Characters the identifiers a cut result held may take after the marker."""

SCAN_CHARS = 200_000
"""Characters of a result scanned for identifiers (a megabyte's scan would cost more than it
keeps: what lies past this is still in the store and found by recall)."""

MARKER = (
    "[… {cut:,} of {total:,} characters of this tool result cut to fit the request's budget; "
    "the whole result is in the store (message #{id}): call the tool again for a part you need]"
)
"""Ends the kept head of a cut result (``cut``, ``total``: characters; ``id``: the message).
It tells the model what it no longer sees and how to see it again; the user finds the whole
result in the chat (its row), by search, and recall brings it back once it is folded."""

NAMED = "It held: "
"""Opens the line of identifiers a cut result held beyond its head."""


def _result_text(block: Mapping[str, Any]) -> str:
    inner = block.get("content")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return "\n".join(
            block_text(item) for item in inner if isinstance(item, Mapping) and item.get("text")
        )
    return ""


KIND_ORDER: tuple[str, ...] = (
    "path",
    "url",
    "ticket",
    "code",
    "quote",
    "version",
    "date",
    "name",
    "number",
    "line",
)
"""The identifiers a cut result keeps come in this order of kind: a path, a URL or an id says
what it is; the line numbers of a file dump say least."""

VOCABULARY_KINDS = frozenset(("name", "number"))
"""Kinds a result repeats as its vocabulary (a file's variables, a table's figures): of each,
the values it names least often come first — a value named once is a fact it states."""

SHORT_NUMBER = 3
"""A bare number of at most this many digits (a count, a line's number, an argument) says
nothing alone: it is not kept (with a unit, ``375 ms``, it is)."""


def _held(text: str, head: str) -> str:
    """The identifiers of ``text`` its ``head`` does not show, by :data:`KIND_ORDER` (names
    and numbers the rarest first) and then in the order they first occur, within
    :data:`IDENTIFIER_CHARS`."""
    scanned = text[:SCAN_CHARS]
    found: dict[str, tuple[int, int]] = {}
    seen: dict[str, int] = {}
    for kind, value in scan(scanned):
        seen[value] = seen.get(value, 0) + 1
        if kind == "number" and value.isdigit() and len(value) <= SHORT_NUMBER:
            continue
        if value not in found and value not in head:
            rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
            found[value] = (rank, scanned.find(value))

    def order(value: str) -> tuple[int, int, int]:
        rank, first = found[value]
        vocabulary = KIND_ORDER[rank] in VOCABULARY_KINDS if rank < len(KIND_ORDER) else False
        return (rank, seen[value] if vocabulary else 0, first)

    kept: list[str] = []
    room = IDENTIFIER_CHARS
    for value in sorted(found, key=order):
        if len(value) + 2 > room:
            continue
        kept.append(value)
        room -= len(value) + 2
    return ", ".join(kept)


def cut_result_text(text: str, message_id: int) -> str | None:
    """A large result's text as it is sent once cut (``None`` when it is not large).

    Args:
        text: The whole text of the result.
        message_id: The stored message that holds it (named in the marker).

    Returns:
        Its head, the marker and the identifiers it held beyond the head.
    """
    if len(text) <= LARGE_CHARS:
        return None
    head = text[:HEAD_CHARS]
    marker = MARKER.format(cut=len(text) - len(head), total=len(text), id=message_id)
    held = _held(text, head)
    return f"{head}\n{marker}" + (f"\n{NAMED}{held}" if held else "")


def _cut_block(block: ContentBlock, whole: Mapping[str, Any], message_id: int) -> ContentBlock:
    cut = cut_result_text(_result_text(whole), message_id)
    if cut is None:
        return block
    inner = block.get("content")
    others = [i for i in inner if i.get("type") != "text"] if isinstance(inner, list) else []
    return {**block, "content": [{"type": "text", "text": cut}, *others]}


def cut_piece(piece: Piece, message: Message, counter: TokenCounter) -> Piece | None:
    """The piece with its large tool results cut (``None`` when it holds none).

    Args:
        piece: A stored message's piece as prepared (already within the sent limits).
        message: The stored message: its results' whole text is what is measured and scanned.
        counter: Counts the cut piece.

    Returns:
        The cut piece, its tokens counted; ``None`` when nothing in it is large.
    """
    if message.role != "user" or not any(b.get("type") == "tool_result" for b in piece.content):
        return None
    wholes = {
        str(b.get("tool_use_id")): b for b in message.content if b.get("type") == "tool_result"
    }
    content = [
        _cut_block(block, wholes.get(str(block.get("tool_use_id")), block), message.id)
        if block.get("type") == "tool_result"
        else block
        for block in piece.content
    ]
    if all(new is old for new, old in zip(content, piece.content, strict=True)):
        return None
    tokens = counter.count_message(piece.role, content)
    if tokens >= piece.tokens:
        return None
    return replace(piece, content=content, tokens=tokens)
