"""The fixed texts of a request: the memory block, pinned entries and recalled excerpts.

Everything here is a pure function of stored records, so the same summary and pins give the
same bytes, which is what keeps the prompt cache warm between compactions.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.blocks import message_body
from tui_chat.core.models import Anchor, ContentBlock, Message, Summary
from tui_chat.core.request.recall import Passage

MEMORY_PREAMBLE = (
    "# Memory of this conversation\n"
    "The earlier part of this conversation is not repeated in the messages; "
    "this memory stands in for it."
)
"""Opens the memory block."""

RECALL_HEADER = (
    "# Recalled from the summarized part of this conversation\n"
    "Verbatim, by date: #message id (part i/n of a long one), speaker; … marks a cut."
)
"""Opens the recalled excerpts."""

RECALL_SOURCE = "recall"
"""The ``source`` of the recalled passages' ``search_result`` block."""

RECALL_TITLE = "Recalled from the summarized part"
"""Its ``title`` (the text form's first line, shortened: the block costs no more than it)."""

PINNED_HEADER = "## Pinned messages (verbatim)"
"""Opens the pinned messages inside the memory block."""

CONTINUED_TEXT = "(continued from earlier in this conversation)"
"""The user message put in front of a request whose first kept message is a reply."""

SINGLE_CONTEXT_HEADER = (
    "[CONVERSATION CONTEXT]\nThe following is a summary of our earlier conversation:"
)
"""Seed 000's context header, used when there is a summary."""

PARAGRAPH = "\n\n"
"""Between two blocks of a message rendered as text in a request: one paragraph each."""


def request_text(message: Message) -> str:
    """A stored message as the request carries it in text: one paragraph per block.

    Args:
        message: A stored message.

    Returns:
        Its readable text (see :mod:`tui_chat.core.blocks`).
    """
    return message_body(message, sep=PARAGRAPH)


def summary_section(summary: Summary) -> str:
    """The summary part of the memory block, headed by its coverage and version.

    Args:
        summary: The active summary version.

    Returns:
        The section text; byte-identical for the same version.
    """
    return f"{summary_section_header(summary)}\n{summary.text.strip()}"


def summary_section_header(summary: Summary | None) -> str:
    """The line that opens the summary section (``""`` without a summary)."""
    if summary is None:
        return ""
    return (
        f"## Summary of messages up to #{summary.covers_to_message_id} "
        f"({summary.covered_messages} messages, version {summary.version})"
    )


def anchor_entry(anchor: Anchor, message: Message) -> str:
    """One pinned message as the memory block carries it: id, role, time, note, then text.

    Args:
        anchor: The pin.
        message: The pinned message.

    Returns:
        The entry text (empty when the message has nothing to send).
    """
    text = request_text(message).strip()
    if not text:
        return ""
    note = anchor.note.strip()
    label = f"[#{message.id} {message.role}, {message.created_at}"
    label += f", note: {note}]" if note else "]"
    return f"{label}\n{text}"


def anchors_section(entries: Sequence[str]) -> str:
    """The pinned part of the memory block.

    Args:
        entries: Entries made by :func:`anchor_entry`, in conversation order.

    Returns:
        The entries under :data:`PINNED_HEADER`, or ``""`` when there are none.
    """
    return PARAGRAPH.join([PINNED_HEADER, *entries]) if entries else ""


def memory_block(summary_text: str, anchors_text: str) -> str:
    """The memory block from its two parts, either of which may be empty.

    Args:
        summary_text: A :func:`summary_section`, or ``""``.
        anchors_text: An :func:`anchors_section`, or ``""``.

    Returns:
        The parts under :data:`MEMORY_PREAMBLE`, or ``""`` when both are empty.
    """
    parts = [part for part in (summary_text, anchors_text) if part]
    return PARAGRAPH.join([MEMORY_PREAMBLE, *parts]) if parts else ""


def memory_text(summary: Summary | None, anchors: Sequence[tuple[Anchor, Message]]) -> str:
    """The memory block: the summary with its coverage, then the given pins in order.

    The caller chooses which pins go here (those older than the raw window, within budget);
    :func:`~tui_chat.core.request.build_request` does. Same summary and pins give the same
    bytes, which is what keeps the prompt cache warm between compactions.

    Args:
        summary: The active summary version, or ``None``.
        anchors: Pinned messages to carry, in conversation order.

    Returns:
        The block's text, or the empty string when there is nothing to remember.
    """
    entries = [entry for entry in (anchor_entry(a, m) for a, m in anchors) if entry]
    summary_text = summary_section(summary) if summary is not None else ""
    return memory_block(summary_text, anchors_section(entries))


def day_of(message: Message) -> str:
    """The ``YYYY-MM-DD`` a message was written (its ``created_at`` date)."""
    return message.created_at[:10]


def day_header(day: str) -> str:
    """The line that opens a day's passages in the recall section."""
    return f"[{day}]"


def passage_entry(passage: Passage, text: str) -> str:
    """One recalled passage: ``#id role:`` (``#id i/n role:`` for part i of a long message's n),
    then its text.

    The date is on the day's header line (:func:`recall_section`), so each entry costs about
    four tokens of label (measured on the dev LoCoMo conversations, a label with the time of
    day, ``[#id role hh:mm]``, left 0.8 points of evidence out at a 2k window).

    Args:
        passage: The recalled passage.
        text: The part of its text that is sent (``""``: the label alone, to count it).

    Returns:
        The entry text.
    """
    message = passage.message
    part = f" {passage.part + 1}/{passage.parts}" if passage.parts > 1 else ""
    label = f"#{message.id}{part} {message.role}:"
    return f"{label} {text}" if text else label


def recall_section(entries: Sequence[tuple[Passage, str]]) -> str:
    """The recalled passages under :data:`RECALL_HEADER`, in conversation order, one date line
    per day.

    Args:
        entries: ``(passage, entry text)`` pairs made with :func:`passage_entry`, any order.

    Returns:
        The section text, or ``""`` when there are none.
    """
    if not entries:
        return ""
    lines = [RECALL_HEADER]
    day = None
    for passage, text in sorted(entries, key=lambda e: e[0].key):
        this_day = day_of(passage.message)
        if this_day != day:
            lines.append(day_header(this_day))
            day = this_day
        lines.append(text)
    return "\n".join(lines)


def recall_blocks(entries: Sequence[tuple[Passage, str]]) -> list[ContentBlock]:
    """The recalled passages as Claude's ``search_result`` blocks, so a reply can cite them.

    Claude's docs ("Search results", read 2026-11-26): a ``search_result`` (``source``,
    ``title``, ``content`` a list of text blocks, ``citations: {"enabled": true}``) may be
    top-level content of a user message; a citation of it names the result's ``source`` and
    ``title``, the cited range of its ``content`` blocks and their text. Here the legend's
    second line is a text block, then one result (:data:`RECALL_SOURCE`,
    :data:`RECALL_TITLE`) whose blocks are the passages as the text form has them (``#id
    role:``, the first of each day after its ``[date]`` line), so a citation's text names the
    message it came from. One result for all: the same passages cost no more tokens than the
    text form; a result per day cost 2 % more per request and one per message about 12
    tokens a passage where the label costs 4 (``benchmarks/history/RESULTS-2026-11.md``,
    "Cited recall").

    Args:
        entries: ``(passage, entry text)`` pairs made with :func:`passage_entry`, any order.

    Returns:
        The blocks (empty when there are none); the same entries give the same blocks.
    """
    if not entries:
        return []
    content: list[ContentBlock] = []
    day = None
    for passage, text in sorted(entries, key=lambda e: e[0].key):
        this_day = day_of(passage.message)
        opening = f"{day_header(this_day)}\n" if this_day != day else ""
        day = this_day
        content.append({"type": "text", "text": opening + text})
    return [
        {"type": "text", "text": RECALL_HEADER.split("\n", 1)[1]},
        {
            "type": "search_result",
            "source": RECALL_SOURCE,
            "title": RECALL_TITLE,
            "content": content,
            "citations": {"enabled": True},
        },
    ]
