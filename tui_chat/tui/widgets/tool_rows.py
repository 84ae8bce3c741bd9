"""Tool calls and their results in the chat, one folded row each.

A reply's ``tool_use`` shows as ``⚒ server__tool {arguments}`` under its text; the result
message that follows shows one row per result: ``↳ result · 2,481 chars · 0.4 s`` (or the
error). ``t`` in navigation mode (``f5``) or a click opens a row: the whole arguments, or the
first :data:`SHOWN_CHARS` characters of the result (the store keeps it whole; ``c`` copies it).
Everything a tool or the model wrote is shown inert: escapes and markup are displayed, never
interpreted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from textual.content import Content

from tui_chat.core.blocks import block_text
from tui_chat.tui.text import inert_content
from tui_chat.tui.widgets.folding import Folding

__all__ = ["SHOWN_CHARS", "ToolRow", "result_rows", "use_rows"]

SHOWN_CHARS = 4_000
"""Characters of a result an opened row shows."""

FOLDED_CHARS = 70
"""Characters of a call's arguments its folded row shows."""


def _arguments(value: object, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True)


def _result_text(block: Mapping[str, Any]) -> str:
    inner = block.get("content")
    if isinstance(inner, str):
        return inner
    if isinstance(inner, list):
        return "\n".join(block_text(item) for item in inner if isinstance(item, dict))
    return ""


class ToolRow(Folding):
    """One call or one result: a folded line, opened by ``t`` or a click."""

    DEFAULT_CSS = """
    ToolRow {
        height: auto;
        color: $text-muted;
        &.-error { color: $text-error; }
        &.-expanded { border-left: vkey $foreground 25%; padding-left: 1; }
    }
    """

    def __init__(self, folded: str, opened: str, *, error: bool = False) -> None:
        super().__init__(classes="tool-row -error" if error else "tool-row")
        self.folded = folded
        self.opened = opened

    def show_fold(self) -> None:
        """The folded line, or the line and the whole arguments or result text."""
        if self.expanded:
            head = Content.styled("▾ ", "bold")
            self.update(
                Content.assemble(head, inert_content(self.folded), "\n", inert_content(self.opened))
            )
        else:
            self.update(Content.assemble(Content.styled("▸ ", "bold"), inert_content(self.folded)))


def use_rows(content: Sequence[Mapping[str, Any]]) -> list[ToolRow]:
    """A row per ``tool_use`` of a reply."""
    rows = []
    for block in content:
        if block.get("type") != "tool_use":
            continue
        shown = _arguments(block.get("input"))
        if len(shown) > FOLDED_CHARS:
            shown = shown[:FOLDED_CHARS] + "…"
        folded = f"⚒ {block.get('name')} {shown}"
        rows.append(ToolRow(folded, _arguments(block.get("input"), indent=2)))
    return rows


def result_rows(content: Sequence[Mapping[str, Any]]) -> list[ToolRow]:
    """A row per ``tool_result`` of a message."""
    rows = []
    for block in content:
        if block.get("type") != "tool_result":
            continue
        text = _result_text(block)
        error = bool(block.get("is_error"))
        elapsed = block.get("elapsed_ms")
        took = f" · {elapsed / 1000:.1f} s" if isinstance(elapsed, int | float) else ""
        if error:
            first = " ".join(text.split())[:FOLDED_CHARS]
            folded = f"↳ error{took} · {first}"
        else:
            folded = f"↳ result · {len(text):,} chars{took}"
        shown = text[:SHOWN_CHARS]
        if len(text) > SHOWN_CHARS:
            shown += f"\n… {len(text) - SHOWN_CHARS:,} more characters (stored whole; c copies)"
        rows.append(ToolRow(folded, shown, error=error))
    return rows
