"""Thinking blocks sent back inside a tool loop, and only where they are still bound.

Claude's docs (docs corpus, read 2026-12-02): "Building with extended thinking", *Preserving
thinking blocks*: while tools are used, the thinking blocks of the assistant turn whose calls
are being answered are passed back to the API, complete and unmodified; "Preserved
thinking" (platform.claude.com/docs/build-with-claude/preserved-thinking, English): a
``thinking`` or ``redacted_thinking`` block sent back is checked against its signature for the
model (each model reads only its own blocks and a fixed set of others') and for its prefix
(the top-level ``system``, ``tools`` and every message before the block): a changed prefix
makes that block and every later one invalid, a 400 or dropped; "send assistant turns back
exactly as the API returned them". The 5.5 models' pages ("What's new in Claude Sonnet 5.5",
"… Opus 5.5") say the same: thinking blocks are tied to the model and the conversation.

So tui-chat sends thinking back only inside the current tool loop — the replies after the
last message the user wrote, whose tool calls are being answered — and each reply's blocks
only when the request's model is the one that wrote them and the prefix before the reply is
byte for byte the one it was written after. Each stored thinking block carries
:data:`BOUND_KEY` (tui-chat's own key, never sent): the model and a fingerprint of the
request's ``system``, ``tools`` and ``messages`` that produced it (``cache_control`` left
out: the builder moves its breakpoints between requests). From the first reply that fails
the check on, nothing is sent back. Every other thinking block is dropped
(:func:`tui_chat.core.request.clip.clean_blocks`): no block crosses a changed model, a fold,
an edit or a branch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.core.blocks import THINKING_TYPES
from tui_chat.core.models import ContentBlock, Message
from tui_chat.core.request.clip import clean_blocks, strip_cache_control

__all__ = ["BOUND_KEY", "answers_calls", "bind", "loop_replies", "prefix_of", "restore"]

BOUND_KEY = "bound_to"
"""The key of a stored thinking block naming what it is bound to: ``{"model", "prefix"}``."""


def prefix_of(request: Mapping[str, Any], upto: int) -> str:
    """A fingerprint of what comes before ``request["messages"][upto]``: system, tools and the
    messages before it (``cache_control`` left out)."""
    prefix = {
        "system": strip_cache_control(request.get("system")),
        "tools": strip_cache_control(request.get("tools")),
        "messages": strip_cache_control(list(request.get("messages") or [])[:upto]),
    }
    text = json.dumps(prefix, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _signed(block: Mapping[str, Any]) -> bool:
    """A whole thinking block (a cut one has no signature and is never sent)."""
    return bool(block.get("signature") if block.get("type") == "thinking" else block.get("data"))


def bind(content: Sequence[ContentBlock], request: Mapping[str, Any]) -> list[ContentBlock]:
    """A reply's blocks, each whole thinking block bound to the request that produced it."""
    bound = {
        "model": str(request.get("model")),
        "prefix": prefix_of(request, len(request.get("messages") or [])),
    }
    return [
        {**b, BOUND_KEY: bound} if b.get("type") in THINKING_TYPES and _signed(b) else b
        for b in content
    ]


def loop_replies(messages: Sequence[Message]) -> list[Message]:
    """The replies of the current tool loop, oldest first: the assistant messages after the
    last message the user wrote (tool results are not written by the user), ending in calls
    that a message of results answers."""
    tail: list[Message] = []
    for message in reversed(messages):
        if message.role == "user" and not message.has_tool_result:
            break
        tail.append(message)
    tail.reverse()
    return [m for m in tail if m.role == "assistant" and m.has_tool_use]


def answers_calls(request: Mapping[str, Any]) -> bool:
    """Whether ``request`` ends with tool results: a tool loop is open."""
    messages = request.get("messages") or []
    last = messages[-1].get("content") if messages else None
    return isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)


def _uses(content: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(b.get("id")) for b in content if b.get("type") == "tool_use"]


def _merged(sent: list[ContentBlock], stored: Sequence[ContentBlock]) -> list[ContentBlock]:
    """The stored reply's blocks in their order: its thinking as received, every other block
    as the request holds it (with the request's ``cache_control``)."""
    rest = iter(sent)
    out: list[ContentBlock] = []
    for block in stored:
        if block.get("type") in THINKING_TYPES:
            out.append({k: v for k, v in block.items() if k != BOUND_KEY})
        elif clean_blocks([block]):
            out.append(next(rest))
    return out


def restore(request: dict[str, Any], replies: Sequence[Message]) -> dict[str, Any]:
    """``request`` with the thinking of ``replies`` (:func:`loop_replies`) put back where it is
    still bound (the request itself when nothing is)."""
    if not answers_calls(request):
        return request  # no tool loop is open
    messages = list(request.get("messages") or [])
    for reply in replies:
        thinking = [b for b in reply.content if b.get("type") in THINKING_TYPES]
        index = next(
            (
                i
                for i, m in enumerate(messages)
                if m.get("role") == "assistant"
                and isinstance(m.get("content"), list)
                and _uses(m["content"]) == _uses(reply.content)
            ),
            None,
        )
        if not thinking or index is None:
            break
        sent = list(messages[index]["content"])
        bound = {"model": str(request.get("model")), "prefix": prefix_of(request, index)}
        if not all(b.get(BOUND_KEY) == bound for b in thinking) or strip_cache_control(
            sent
        ) != clean_blocks(reply.content):
            break  # a changed model or prefix: this block and every later one are invalid
        messages[index] = {**messages[index], "content": _merged(sent, reply.content)}
        request = {**request, "messages": messages}
        messages = list(messages)
    return request
