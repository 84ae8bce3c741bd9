"""A reply whose server tools paused it (``stop_reason: "pause_turn"``) is continued.

Claude's "Web search tool" page (read 2026-11-26): the API may pause a long-running turn of
server tool calls with ``pause_turn``; sending the response back as it is, as the last
(assistant) message of the same request, lets Claude continue the turn. The pieces are stored as
one reply: the blocks in order, the text joined, the usage summed (each call is billed).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from tui_chat.core.models import Usage
from tui_chat.llm.client import ClaudeClient, OnBlock, OnText, StreamResult

__all__ = ["MAX_CONTINUATIONS", "PAUSE_TURN", "stream_to_end"]

PAUSE_TURN = "pause_turn"
MAX_CONTINUATIONS = 4
"""Continuations of one paused reply before it is kept as it stands (stop reason pause_turn)."""


async def stream_to_end(
    client: ClaudeClient,
    request: dict[str, Any],
    on_text: OnText | None = None,
    on_thinking: OnText | None = None,
    on_block: OnBlock | None = None,
) -> StreamResult:
    """Stream a reply, continuing it while the API pauses it (see the module docstring)."""
    result = await client.stream(request, on_text, on_thinking, on_block)
    for _ in range(MAX_CONTINUATIONS):
        if not (result.ok and result.stop_reason == PAUSE_TURN and result.content):
            break
        paused = {"role": "assistant", "content": result.content}
        follow = {**request, "messages": [*request["messages"], paused]}
        result = joined(result, await client.stream(follow, on_text, on_thinking, on_block))
    return result


def joined(first: StreamResult, more: StreamResult) -> StreamResult:
    """One reply of a paused one and its continuation (how it ended: the continuation's)."""
    return StreamResult(
        content=[*first.content, *more.content],
        text=first.text + more.text,
        usage=Usage(
            **{
                f.name: getattr(first.usage, f.name) + getattr(more.usage, f.name)
                for f in fields(Usage)
                if f.name != "speed"
            },
            speed=more.usage.speed or first.usage.speed,
        ),
        stop_reason=more.stop_reason,
        model=more.model or first.model,
        complete=more.complete,
        error=more.error,
        message_id=more.message_id or first.message_id,
        stop_details=more.stop_details,
    )
