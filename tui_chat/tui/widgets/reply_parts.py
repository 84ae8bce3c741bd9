"""The parts of a reply around its Markdown body: thinking and web searches above, sources
below (:mod:`~tui_chat.tui.widgets.thinking_block`, :mod:`~tui_chat.tui.widgets.web_blocks`,
:mod:`~tui_chat.tui.widgets.recall_chips`).

:class:`~tui_chat.tui.widgets.message_view.MessageView` composes them for a stored reply, mounts
them as a streaming reply's thinking and tool blocks arrive, and brings them in line with the
stored message when the reply ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.widget import Widget
from textual.widgets import Markdown

from tui_chat.core.models import Message
from tui_chat.core.recall_cites import recalled_ids
from tui_chat.core.reply_options import tool_text_as_thinking
from tui_chat.core.tool_text import CALL_TYPES, SEPARATOR, body_text, progress_indexes
from tui_chat.core.web import activity, cited_text, has_citations, sources
from tui_chat.tui.widgets.recall_chips import RecallChips
from tui_chat.tui.widgets.thinking_block import ThinkingBlock
from tui_chat.tui.widgets.tool_rows import ToolRow, use_rows
from tui_chat.tui.widgets.web_blocks import WebActivity, WebSources

__all__ = [
    "add_block",
    "finish_parts",
    "parts_above",
    "parts_below",
    "shown_text",
    "take_note",
    "thinking",
]


def thinking(message: Message) -> str | None:
    """The reply's thinking text (``""`` when omitted), or ``None`` when it did not think (its
    notes between tool calls are its body's text: core/tool_text.py)."""
    notes = progress_indexes(message.content, message.model)
    blocks = [
        b
        for i, b in enumerate(message.content)
        if b.get("type") in ("thinking", "redacted_thinking") and i not in notes
    ]
    if not blocks:
        return None
    return "\n\n".join(str(b.get("thinking") or "") for b in blocks)


def thinking_tokens(message: Message) -> int:
    """The output tokens the reply spent thinking (``usage.output_tokens_details``; 0 when the
    API did not say)."""
    return message.usage.thinking_tokens if message.usage is not None else 0


def shown_text(message: Message) -> str:
    """The body's text: with ``[n]`` after cited passages when the reply cites pages, and the
    notes between tool calls that came as thinking (core/tool_text.py)."""
    if message.role == "assistant" and (body := body_text(message.content, message.model)):
        return body
    if message.role == "assistant" and has_citations(message.content):
        return cited_text(message.content)
    return message.text


def parts_above(message: Message) -> list[Widget]:
    """The thinking block and the searches of a stored reply, as present."""
    parts: list[Widget] = []
    text = thinking(message)
    if text is not None:
        streaming = message.status == "streaming"
        parts.append(ThinkingBlock(text, streaming=streaming, tokens=thinking_tokens(message)))
    if any(activity(b) is not None for b in message.content):
        parts.append(WebActivity(message.content))
    return parts


def parts_below(message: Message) -> list[Widget]:
    """The numbered sources of a stored reply that cites pages, the chips of the messages it
    cites from recall."""
    parts: list[Widget] = [WebSources(message.content)] if sources(message.content) else []
    if ids := recalled_ids(message.content):
        parts.append(RecallChips(ids))
    parts.extend(use_rows(message.content))  # the tool calls it asks for
    return parts


async def write_thinking(view: Widget, delta: str) -> None:
    """Append streamed thinking, mounting the block above the body at its first delta."""
    found = view.query(ThinkingBlock)
    if found:
        found.first().append(delta)
        return
    block = ThinkingBlock(streaming=True)
    await view.mount(block, before=view.query_one(Markdown))
    block.append(delta)


async def take_note(view: Widget, block: Mapping[str, Any], model: str | None) -> str:
    """The streamed thinking a tool call ``block`` follows, taken out of the thinking block
    when ``model`` writes its text between tool calls as thinking (it is the body's: the
    caller writes it there); ``""`` when there is none."""
    found = view.query(ThinkingBlock)
    if block.get("type") not in CALL_TYPES or not found or not model:
        return ""
    if not tool_text_as_thinking(model) or not found.last().streaming:
        return ""
    note = found.last().text.strip()
    await found.last().remove()
    return note + SEPARATOR if note else ""


async def add_block(view: Widget, block: Mapping[str, Any]) -> None:
    """Show a search, fetch or result that arrived while the reply streams."""
    if activity(block) is None:
        return
    found = view.query(WebActivity)
    if found:
        found.first().add(block)
    else:
        await view.mount(WebActivity([block]), before=view.query_one(Markdown))


async def finish_parts(view: Widget, message: Message) -> None:
    """Bring the parts in line with the stored reply (the stream may have missed some)."""
    text = thinking(message)
    block = view.query(ThinkingBlock)
    if text is not None and block:
        block.first().finish(text, thinking_tokens(message))
    elif block:  # its only thinking was text between tool calls, now in the body
        await block.remove()
    await view.query(WebActivity).remove()
    await view.query(WebSources).remove()
    await view.query(RecallChips).remove()
    await view.query(ToolRow).remove()
    markdown = view.query_one(Markdown)
    above: list[Widget] = [p for p in parts_above(message) if isinstance(p, WebActivity)]
    if text is not None and not block:
        above.insert(0, ThinkingBlock(text, tokens=thinking_tokens(message)))
    if above:
        await view.mount_all(above, before=markdown)
    if below := parts_below(message):
        await view.mount_all(below, after=markdown)
