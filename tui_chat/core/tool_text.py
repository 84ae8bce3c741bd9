"""Text between tool calls that a model returns in ``thinking`` blocks, shown as reply text.

On Opus 5.5 and Sonnet 5.5 the short notes a reply writes between its tool calls ("Searching
the docs for …") come back in ``thinking`` blocks (their what's-new pages, read 2026-12-02:
"text between tool calls comes back in thinking blocks"; an application that streams that
text to its users shows it once a ``display`` returns it: core/reply_options.py). tui-chat
shows such a block — a thinking block of one of these models that a tool call follows — in
the reply's body, where the text stood on earlier models, and keeps the other thinking
blocks as thinking. The blocks themselves are stored and sent back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.core.blocks import THINKING_TYPES
from tui_chat.core.reply_options import tool_text_as_thinking
from tui_chat.core.web import cited_text, has_citations

__all__ = ["CALL_TYPES", "body_blocks", "body_text", "progress_indexes"]

CALL_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
"""Blocks that are a tool call."""

SEPARATOR = "\n\n"
"""What follows a note in the body (it is a paragraph of its own)."""


def progress_indexes(content: Sequence[Mapping[str, Any]], model: str | None) -> set[int]:
    """The positions of the thinking blocks that hold text between tool calls: on a model
    that returns it as thinking, each thinking block a tool call follows."""
    if not model or not tool_text_as_thinking(model):
        return set()
    return {
        i
        for i, block in enumerate(content[:-1])
        if block.get("type") in THINKING_TYPES and content[i + 1].get("type") in CALL_TYPES
    }


def body_blocks(content: Sequence[Mapping[str, Any]], model: str | None) -> list[Mapping[str, Any]]:
    """``content`` with each note between tool calls as a text block (empty notes left out)."""
    notes = progress_indexes(content, model)
    out: list[Mapping[str, Any]] = []
    for i, block in enumerate(content):
        if i not in notes:
            out.append(block)
        elif text := str(block.get("thinking") or "").strip():
            out.append({"type": "text", "text": text + SEPARATOR})
    return out


def body_text(content: Sequence[Mapping[str, Any]], model: str | None) -> str | None:
    """The body of a reply holding notes between tool calls (with ``[n]`` marks where it
    cites), or ``None`` when it holds none (its stored ``text`` is the body)."""
    if not any(
        str(content[i].get("thinking") or "").strip() for i in progress_indexes(content, model)
    ):
        return None
    blocks = body_blocks(content, model)
    if has_citations(blocks):
        return cited_text(blocks)
    return "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
