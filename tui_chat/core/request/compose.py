"""Laying out one candidate request: the messages layout and seed 000's single message.

Messages layout::

    system   = [base system prompt]
               [memory: summary + pinned messages older than the raw window]  <- cache breakpoint
    messages = raw turns after the summary's coverage
               + the new user message: [its own content]  <- cache breakpoint
                                       [recalled excerpts: legend, one search_result]

Single-message layout (``single_user_message``): one user message with
``[CONVERSATION CONTEXT]``, ``[RECENT MESSAGES]`` and ``[CURRENT MESSAGE]`` sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tui_chat.core.blocks import content_text
from tui_chat.core.models import ContentBlock
from tui_chat.core.request.render import PARAGRAPH, SINGLE_CONTEXT_HEADER, memory_block
from tui_chat.core.request.runs import Composed, Unit, joined, pieces_of
from tui_chat.core.request.types import Piece, Section
from tui_chat.core.request.wellformed import (
    group_roles,
    message_content,
    open_with_user,
    pair_tools,
    trim_final_assistant,
)
from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter

EPHEMERAL = {"type": "ephemeral"}
"""The ``cache_control`` of a prompt-cache breakpoint."""

_CONTEXT_HEADER = "[CONVERSATION CONTEXT]"
_RECENT_HEADER = "[RECENT MESSAGES]"
_CURRENT_HEADER = "[CURRENT MESSAGE]"
_TEXTUAL = ("text", "tool_result")


@dataclass
class Candidate:
    """One way of filling the request; the builder sheds parts until one fits."""

    sections: dict[str, int]
    """Tokens per part (see :data:`~.types.SECTIONS`); the layout adds what it sends."""
    anchor_ids: list[int]
    """Pinned messages carried in the memory block."""
    recalled_ids: list[int]
    """Messages whose excerpts are carried."""
    over_budget_anchors: int
    """Pins left out over the anchor budget."""
    cut_messages: int
    """Messages cut to ``message_char_limit``."""
    system: list[ContentBlock] = field(default_factory=list)
    """The ``system`` blocks (empty for none)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The ``messages``."""
    sent_ids: list[int] = field(default_factory=list)
    """Stored messages sent as messages, in order."""
    recall_tokens: int = 0
    """Tokens of the recall section."""
    recall_at: int | None = None
    """Where the recalled excerpts start in the last message's content (they close it; the
    cache breakpoint goes on the block before them), ``None`` without excerpts there."""

    @property
    def total(self) -> int:
        """Tokens of the whole request."""
        return sum(self.sections.values())


@dataclass(frozen=True)
class MemoryTexts:
    """The texts that stand in for the summarized part, each ``""`` when absent."""

    summary: str
    """The summary section."""
    anchors: str
    """The pinned-messages section."""
    recall: str
    """The recalled excerpts section."""
    block: ContentBlock | None = None
    """The active ``server`` version's compaction block, sent first in ``messages``."""
    recall_blocks: Sequence[ContentBlock] = ()
    """The recalled excerpts as ``search_result`` blocks (:func:`~.render.recall_blocks`),
    sent instead of the text in the last user message; the text stays the form of the
    single-message layout and of a preview's system."""


class RequestLayout:
    """Lays out candidates for one build.

    Args:
        system_prompt: The conversation's base system prompt.
        new_piece: The new user message, or ``None`` (preview or retry).
        counter: Counts what the layout adds.
    """

    def __init__(self, system_prompt: str, new_piece: Piece | None, counter: TokenCounter) -> None:
        self.base = system_prompt.strip()
        self.new_piece = new_piece
        self.counter = counter

    def compose(
        self, candidate: Candidate, units: Sequence[Unit], texts: MemoryTexts, single: bool
    ) -> Candidate:
        """Fill ``candidate``'s system, messages and sent ids with one of the layouts.

        Args:
            candidate: A fresh candidate, with its memory sections counted.
            units: The raw messages kept, in order: runs laid out already (reused from
                earlier builds, see :mod:`.runs`) or pieces to lay out.
            texts: The memory texts kept.
            single: Use seed 000's single-message layout.

        Returns:
            ``candidate``, laid out.
        """
        if single:
            self._single(candidate, [p for unit in units for p in pieces_of(unit)], texts)
        else:
            self._messages(candidate, units, texts)
        if texts.block is not None:
            # Exactly as received, first in messages, in the assistant message the API
            # returned it in (Claude's "Compaction on demand"): it stands for the prefix.
            candidate.messages.insert(0, {"role": "assistant", "content": [texts.block]})
            candidate.sections["summary"] += MESSAGE_OVERHEAD_TOKENS + self.counter.count(
                str(texts.block.get("content") or "")
            )
        return candidate

    def _system_blocks(self, memory: str, recall_text: str = "") -> list[ContentBlock]:
        blocks: list[ContentBlock] = [
            {"type": "text", "text": text} for text in (self.base, memory) if text
        ]
        if blocks:
            # One breakpoint after the stable prefix: the memory block, else the base prompt.
            blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
        if recall_text:
            blocks.append({"type": "text", "text": recall_text})
        return blocks

    def _messages(self, candidate: Candidate, units: Sequence[Unit], texts: MemoryTexts) -> None:
        memory = memory_block(texts.summary, texts.anchors)
        candidate.system = self._system_blocks(memory)
        new = [self.new_piece] if self.new_piece is not None else []
        laid = joined([*units, new])
        if self.new_piece is None and laid and isinstance(laid[-1], Composed):
            laid[-1] = list(laid[-1].pieces)  # the last reply is trimmed below
        for index, unit in enumerate(laid):
            if isinstance(unit, Composed):
                candidate.sections["recent"] += unit.tokens
                candidate.sent_ids.extend(unit.sent_ids)
                candidate.messages.extend(unit.messages)
                continue
            pieces = open_with_user(list(unit), self.counter) if index == 0 else unit
            groups = pair_tools(group_roles(pieces), self.counter)
            if self.new_piece is None and index == len(laid) - 1:
                trim_final_assistant(groups, self.counter)
                if not groups and index > 0:
                    # Trimming emptied the last run: the run before it ends the request.
                    merged = [p for part in laid for p in pieces_of(part)]
                    candidate.sections["recent"] = 0
                    candidate.sent_ids.clear()
                    candidate.messages.clear()
                    self._messages(candidate, [merged], texts)
                    return
            for group in groups:
                for piece in group:
                    candidate.sections[piece.section] += piece.tokens
                    if piece.source is not None:
                        candidate.sent_ids.append(piece.source.id)
                candidate.messages.append(
                    {"role": group[0].role, "content": message_content(group)}
                )
        if not texts.recall:
            return
        last = candidate.messages[-1] if candidate.messages else None
        if last is None or last["role"] != "user":
            # A preview ending on a reply: nothing is sent, the excerpts stay in the system.
            candidate.system = self._system_blocks(memory, texts.recall)
            return
        # After the message's own content, so that the breakpoint on its last block caches
        # the message with the history: the next request sends it again without excerpts.
        content = list(last["content"])
        recalled = list(texts.recall_blocks) or [{"type": "text", "text": texts.recall}]
        candidate.sections["recall"] = self.counter.count_content(recalled)
        candidate.messages[-1] = {"role": "user", "content": [*content, *recalled]}
        candidate.recall_at = len(content)

    def _single(self, candidate: Candidate, pieces: list[Piece], texts: MemoryTexts) -> None:
        """Seed 000: one user message with context, recent messages and the current one."""
        if self.base:
            candidate.system = [{"type": "text", "text": self.base, "cache_control": EPHEMERAL}]
        current = self.new_piece
        if current is None and pieces and pieces[-1].role == "user":
            current, pieces = pieces[-1], pieces[:-1]
        text_parts = [
            part
            for part in (self._context(candidate, texts), self._recent(candidate, pieces))
            if part
        ]
        extra: list[ContentBlock] = []
        if current is not None:
            textual = [b for b in current.content if b.get("type") in _TEXTUAL]
            extra = [b for b in current.content if b.get("type") not in _TEXTUAL]
            current_text = content_text(textual, sep=PARAGRAPH)
            if text_parts or not current_text:
                current_text = f"{_CURRENT_HEADER}\n{current_text}".rstrip()
            text_parts.append(current_text)  # alone, seed 000's case A: the message as it is
            if current.source is not None:
                candidate.sent_ids.append(current.source.id)
            section: Section = "new_message" if current.source is None else "recent"
            candidate.sections[section] += (
                MESSAGE_OVERHEAD_TOKENS
                + self.counter.count(current_text)
                + self.counter.count_content(extra)
            )
        elif text_parts:
            candidate.sections["recent"] += MESSAGE_OVERHEAD_TOKENS
        if text_parts:
            content: list[ContentBlock] = [{"type": "text", "text": PARAGRAPH.join(text_parts)}]
            candidate.messages = [{"role": "user", "content": [*content, *extra]}]

    def _context(self, candidate: Candidate, texts: MemoryTexts) -> str:
        """The ``[CONVERSATION CONTEXT]`` part, its sections counted part by part (no memory
        preamble here, and the one message overhead goes with the current message)."""
        count = self.counter.count
        sections = candidate.sections
        sections["summary"] = count(texts.summary)
        sections["anchors"] = count(texts.anchors)
        sections["recall"] = count(texts.recall)
        parts = [part for part in (texts.summary, texts.anchors, texts.recall) if part]
        if not parts:
            return ""
        # Seed 000's header; the summary line only when there is a summary.
        header = SINGLE_CONTEXT_HEADER if texts.summary else _CONTEXT_HEADER
        first = "summary" if texts.summary else "anchors" if texts.anchors else "recall"
        sections[first] += count(header)
        return PARAGRAPH.join([header, *parts])

    def _recent(self, candidate: Candidate, pieces: list[Piece]) -> str:
        """The ``[RECENT MESSAGES]`` part: one ``ROLE: text`` line per message."""
        count = self.counter.count
        lines = [
            f"{piece.role.upper()}: {content_text(piece.content, sep=PARAGRAPH)}"
            for piece in pieces
        ]
        candidate.sent_ids.extend(piece.source.id for piece in pieces if piece.source is not None)
        candidate.sections["recent"] = sum(count(line) for line in lines)
        if not lines:
            return ""
        candidate.sections["recent"] += count(_RECENT_HEADER)
        return f"{_RECENT_HEADER}\n" + "\n".join(lines)
