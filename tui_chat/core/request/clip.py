"""Cutting what a request carries to its limits: blocks, characters and tokens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tui_chat.core.blocks import THINKING_TYPES
from tui_chat.core.models import ContentBlock
from tui_chat.core.tokens import TokenCounter

CUT_NOTE = "[… cut {n} chars]"
"""Where ``message_char_limit`` cut a message (``n``: characters left out)."""

CUT_MARKER = " […]"
"""Ends a recalled excerpt cut to its token budget."""


def strip_cache_control(value: Any) -> Any:
    """Deep copy of a block without ``cache_control`` anywhere (the builder places its own).

    Args:
        value: A content block, or any value inside one.

    Returns:
        The copy.
    """
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


TOOL_RESULT_CHARS = 40_000
"""Characters of a tool result's text sent back (about 10k tokens); the rest is stored whole
and the result sent ends with a :data:`CUT_NOTE`."""

LOCAL_KEYS = ("elapsed_ms",)
"""Keys of a stored block that are tui-chat's own (how long a call took): never sent."""


def _sent_result(block: ContentBlock) -> ContentBlock:
    """A ``tool_result`` as sent: tui-chat's own keys left out, a long text cut."""
    out = {k: v for k, v in block.items() if k not in LOCAL_KEYS}
    if _text_chars(out) > TOOL_RESULT_CHARS:
        (cut,), _ = cut_content([out], TOOL_RESULT_CHARS)
        out = cut
    return out


def clean_blocks(content: Iterable[ContentBlock]) -> list[ContentBlock]:
    """Drop thinking and empty text blocks; copy the rest without ``cache_control`` (a tool
    result without tui-chat's own keys, its text cut to :data:`TOOL_RESULT_CHARS`).

    Args:
        content: A message's stored blocks.

    Returns:
        The blocks that can be sent.
    """
    out: list[ContentBlock] = []
    for block in content:
        kind = block.get("type")
        if kind in THINKING_TYPES:
            continue
        if kind == "text" and not str(block.get("text") or "").strip():
            continue
        if kind == "tool_result":
            block = _sent_result(block)
        out.append(strip_cache_control(block))
    return out


class _Cutter:
    """Cuts a message's text to ``limit`` characters across its text-bearing blocks."""

    def __init__(self, limit: int, total: int) -> None:
        self.remaining = limit
        self.note = CUT_NOTE.format(n=total - limit)
        self.noted = False

    def cut(self, text: str) -> str | None:
        """The kept part of ``text`` (with the note where the cut falls), or None to drop."""
        if len(text) <= self.remaining:
            self.remaining -= len(text)
            return text
        if self.noted:
            return None
        kept = text[: self.remaining]
        self.remaining = 0
        self.noted = True
        return f"{kept}\n{self.note}" if kept.strip() else self.note


def _text_chars(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text") or ""))
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return len(inner)
        if isinstance(inner, list):
            return sum(_text_chars(item) for item in inner)
    return 0


def cut_content(blocks: list[ContentBlock], limit: int) -> tuple[list[ContentBlock], bool]:
    """Cut a message's text to ``limit`` characters; tool blocks keep their structure.

    Args:
        blocks: The cleaned blocks of one message.
        limit: Characters of text (text blocks and tool-result text together) to keep.

    Returns:
        The blocks, cut where needed with a :data:`CUT_NOTE`, and whether anything was cut.
    """
    total = sum(_text_chars(block) for block in blocks)
    if total <= limit:
        return blocks, False
    cutter = _Cutter(limit, total)

    def cut_text_block(block: ContentBlock) -> ContentBlock | None:
        kept = cutter.cut(str(block.get("text") or ""))
        if kept is None:
            return None
        new = {k: v for k, v in block.items() if k != "citations"}
        new["text"] = kept
        return new

    out: list[ContentBlock] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            new_block = cut_text_block(block)
            if new_block is not None:
                out.append(new_block)
        elif kind == "tool_result":
            inner = block.get("content")
            new_result = dict(block)
            if isinstance(inner, str):
                new_result["content"] = cutter.cut(inner) or "[cut]"
            elif isinstance(inner, list):
                items: list[ContentBlock] = []
                for item in inner:
                    if item.get("type") == "text":
                        kept_item = cut_text_block(item)
                        if kept_item is not None:
                            items.append(kept_item)
                    else:
                        items.append(item)
                new_result["content"] = items or "[cut]"
            out.append(new_result)
        else:
            out.append(block)
    return out, True


def fit_text(text: str, budget: int, counter: TokenCounter) -> str:
    """The longest prefix of ``text`` (marked as cut) within ``budget`` tokens.

    Args:
        text: The text to fit.
        budget: Tokens it may take, marker included.
        counter: Counts tokens.

    Returns:
        ``text`` itself when it fits, else its cut prefix with :data:`CUT_MARKER`, or ``""``
        when not even one character fits.
    """
    if counter.count(text) <= budget:
        return text
    low, high = 0, min(len(text), budget * 8)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count(text[:middle] + CUT_MARKER) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + CUT_MARKER if low else ""
