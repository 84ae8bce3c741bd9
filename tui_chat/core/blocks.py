"""Anthropic content blocks as plain text: the one renderer every reader of blocks uses.

The request builder (pins, recalled excerpts, the single-message layout, tool blocks sent as
text), the summarizers (prompts, fields, sentence scoring), imports (a message's searchable
text) and the context preview all show blocks the same way:

- ``text``: its text;
- ``thinking`` / ``redacted_thinking``: nothing (private reasoning is never repeated);
- a tool call (``tool_use``, ``server_tool_use``, ``mcp_tool_use``):
  ``[tool call NAME] {"input": "as sorted JSON"}``;
- a tool result (``tool_result`` or any ``*_tool_result``): ``[tool result] BODY``, or
  ``[tool error] BODY`` when it failed; BODY is its inner content, one block per line;
- ``image``: ``[image]``; ``document``: ``[document: TITLE]``;
- an attached file (``attachment``, see :mod:`tui_chat.core.attachments`):
  ``[image attached: NAME, W×H]``, ``[document attached: NAME, N pages]``, or a text file's
  name and content;
- a ``search_result`` (recalled passages): ``[search result: TITLE (SOURCE)]`` and its text
  blocks, one a line;
- a search hit (anything with a ``url``): ``TITLE (URL)``; anything else: ``[TYPE]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from tui_chat.core.attachments import is_ref, ref_label
from tui_chat.core.models import Message

BlockKind = Literal["text", "tool_use", "tool_result", "thinking", "other"]
"""What a block is, for readers that treat tool traffic differently from prose."""

SERVER_TOOL_USE_TYPES = ("server_tool_use", "mcp_tool_use")
"""Tool calls run by the API itself; answered inside the same assistant message."""

TOOL_USE_TYPES = ("tool_use", *SERVER_TOOL_USE_TYPES)
"""Every kind of tool call block."""

THINKING_TYPES = ("thinking", "redacted_thinking")
"""Blocks of private reasoning, never rendered and never sent back."""


def to_json(value: Any) -> str:
    """Serialise a tool input the way every rendering shows it: sorted keys, real Unicode.

    Args:
        value: A JSON-compatible value.

    Returns:
        The compact JSON text.
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def is_tool_result(block: Mapping[str, Any]) -> bool:
    """True for a client tool result and for a server tool's result (``*_tool_result``).

    Args:
        block: One content block.

    Returns:
        Whether the block carries a tool's output.
    """
    kind = str(block.get("type", ""))
    return kind == "tool_result" or kind.endswith("_tool_result")


def block_kind(block: Mapping[str, Any]) -> BlockKind:
    """Classify one content block.

    Args:
        block: One content block.

    Returns:
        ``text``, ``tool_use``, ``tool_result``, ``thinking`` or ``other``.
    """
    kind = block.get("type")
    if kind == "text":
        return "text"
    if kind in TOOL_USE_TYPES:
        return "tool_use"
    if is_tool_result(block):
        return "tool_result"
    if kind in THINKING_TYPES:
        return "thinking"
    return "other"


def block_text(block: Mapping[str, Any]) -> str:
    """Render one content block as plain text (the rules are in the module docstring).

    Args:
        block: One content block.

    Returns:
        Its text; the empty string for thinking and empty text.
    """
    kind = block_kind(block)
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "thinking":
        return ""
    if kind == "tool_use":
        return f"[tool call {block.get('name', '?')}] {to_json(block.get('input', {}))}"
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            body = "\n".join(block_text(item) for item in inner if isinstance(item, Mapping))
        elif isinstance(inner, Mapping):  # a web fetch's page, or a server tool's error
            body = block_text(inner)
        else:
            body = "" if inner is None else str(inner)
        label = "tool error" if block.get("is_error") else "tool result"
        return f"[{label}] {body}".rstrip()
    if is_ref(block):
        return ref_label(block)
    other = str(block.get("type") or "")
    if other == "image":
        return "[image]"
    if other == "document":
        title = block.get("title")
        return f"[document: {title}]" if title else "[document]"
    if other == "search_result":  # recalled passages (or a tool's search results)
        inner = block.get("content")
        body = content_text(inner) if isinstance(inner, list) else ""
        return f"[search result: {block.get('title') or ''} ({block.get('source') or ''})]\n{body}"
    if block.get("url"):
        return f"{block.get('title') or ''} ({block['url']})".strip()
    return f"[{other}]" if other else ""


def content_text(content: Iterable[Mapping[str, Any]], sep: str = "\n") -> str:
    """Render content blocks as plain text, leaving out blocks that render blank.

    Args:
        content: Anthropic content blocks.
        sep: What goes between two blocks (``"\\n\\n"`` for one paragraph per block).

    Returns:
        The rendered text.
    """
    parts = (block_text(block) for block in content)
    return sep.join(part for part in parts if part.strip())


def message_parts(message: Message) -> list[tuple[BlockKind, str]]:
    """Split a message into ``(kind, text)`` parts, leaving out thinking and blank blocks.

    Args:
        message: A stored message.

    Returns:
        Its text, tool calls and tool results in order; the stored plain ``text`` when the
        content blocks carry nothing readable.
    """
    parts = [(block_kind(block), block_text(block)) for block in message.content]
    kept: list[tuple[BlockKind, str]] = [
        (kind, text) for kind, text in parts if kind != "thinking" and text.strip()
    ]
    if not kept and message.text.strip():
        return [("text", message.text)]
    return kept


def message_body(message: Message, sep: str = "\n") -> str:
    """Return the readable text of a message: its text, tool calls and tool results.

    Args:
        message: A stored message.
        sep: What goes between two parts (``"\\n\\n"`` for one paragraph per block).

    Returns:
        The parts of :func:`message_parts` joined by ``sep``.
    """
    return sep.join(text for _, text in message_parts(message))
