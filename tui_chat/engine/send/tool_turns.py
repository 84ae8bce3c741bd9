"""The tool rounds of a send: the calls a reply asks for answered, until the model stops.

A reply that ends with ``stop_reason: "tool_use"`` has its calls run (:class:`ToolCalls`:
approval, then the call) and their results stored as the next message — a user message of
``tool_result`` blocks, one per call, in the calls' order, its text searchable — and the
session streams the next reply. At most :data:`MAX_TOOL_ROUNDS` rounds a send; past them the
calls are answered with an error and the model gets one more reply to say where it stands.

Whatever ends a send — a cancel (``escape``), a reply cut off with its calls, the round limit —
every ``tool_use`` stored is answered by a ``tool_result``: the history stays one the API takes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from tui_chat.core.blocks import content_text
from tui_chat.core.models import ContentBlock, Message
from tui_chat.core.request import BuiltRequest
from tui_chat.core.request.bound_thinking import answers_calls, loop_replies, restore
from tui_chat.core.request.clip import clean_blocks
from tui_chat.core.tokens import TokenCounter
from tui_chat.engine.events import EventCallback, ToolResultsSaved
from tui_chat.engine.tools.calls import Approver, ToolCalls
from tui_chat.engine.tools.results import error_result
from tui_chat.store.repository import Store

__all__ = ["MAX_TOOL_ROUNDS", "ToolTurns", "asks_for_tools", "with_loop_thinking"]

MAX_TOOL_ROUNDS = 12
"""Rounds of tool calls one send runs before the model is told to stop calling."""

ROUND_LIMIT = (
    f"not run: the limit of {MAX_TOOL_ROUNDS} rounds of tool calls in one send was reached"
)
CANCELLED = "not run: the send was cancelled before this call finished"
CUT_OFF = "not run: the reply asking for it was cut off"


def asks_for_tools(reply: Message) -> bool:
    """Whether a stored reply ended asking for its tool calls to be run."""
    return reply.status == "complete" and reply.stop_reason == "tool_use" and reply.has_tool_use


async def with_loop_thinking(store: Store, built: BuiltRequest) -> BuiltRequest:
    """``built`` with the thinking of the current tool loop's replies sent back where it is
    still bound to this request's model and prefix (core/request/bound_thinking.py)."""
    if not answers_calls(built.request):
        return built  # no tool loop is open: nothing to look up
    tail = built.sent_message_ids[-(2 * MAX_TOOL_ROUNDS + 2) :]
    loop = loop_replies(await store.messages.get_many(tail))
    return replace(built, request=restore(built.request, loop)) if loop else built


def _calls(reply: Message) -> list[ContentBlock]:
    return [block for block in reply.content if block.get("type") == "tool_use"]


class ToolTurns:
    """Answers the calls of one conversation's replies and stores the results."""

    def __init__(self, store: Store, counter: TokenCounter, calls: ToolCalls) -> None:
        self.store = store
        self.counter = counter
        self.calls = calls

    async def answer(
        self,
        conversation_id: str,
        reply: Message,
        approve: Approver | None,
        on_event: EventCallback | None,
    ) -> Message:
        """Run the reply's calls and store their results (on a cancel: what finished, and
        :data:`CANCELLED` for the rest, then the cancel goes on)."""
        results: dict[str, ContentBlock] = {}
        seconds: dict[str, float] = {}
        try:
            for block in _calls(reply):
                use_id = str(block.get("id"))
                results[use_id], seconds[use_id] = await self.calls.run(
                    conversation_id, block, approve, on_event
                )
        except BaseException:
            await asyncio.shield(self.close(conversation_id, reply, CANCELLED, results, on_event))
            raise
        return await self.close(conversation_id, reply, CANCELLED, results, on_event, seconds)

    async def close(
        self,
        conversation_id: str,
        reply: Message,
        reason: str,
        results: dict[str, ContentBlock] | None = None,
        on_event: EventCallback | None = None,
        seconds: dict[str, float] | None = None,
    ) -> Message:
        """Store a result for each call of ``reply``: the one in ``results``, else ``reason``."""
        done = results or {}
        blocks = [
            done.get(str(block.get("id"))) or error_result(str(block.get("id")), reason)
            for block in _calls(reply)
        ]
        return await self._store(conversation_id, blocks, seconds or {}, on_event)

    async def close_last(
        self, conversation_id: str, reason: str, on_event: EventCallback | None = None
    ) -> None:
        """Answer the calls of the conversation's last message if it is a reply with calls
        no result follows (a send cancelled or broken mid-reply)."""
        last = await self.store.messages.last(conversation_id)
        if last is not None and last.role == "assistant" and last.has_tool_use:
            await self.close(conversation_id, last, reason, on_event=on_event)

    async def _store(
        self,
        conversation_id: str,
        blocks: Sequence[ContentBlock],
        seconds: dict[str, float],
        on_event: EventCallback | None,
    ) -> Message:
        # How long each call took is kept with its result (never sent: core/request/clip.py).
        content = [
            {**b, "elapsed_ms": round(seconds[str(b.get("tool_use_id"))] * 1000)}
            if str(b.get("tool_use_id")) in seconds
            else b
            for b in blocks
        ]
        message = await self.store.messages.add(
            conversation_id,
            role="user",
            content=content,
            text=content_text(content),  # what search and recall find
            # What it costs as sent: a long result is cut when sent (core/request/clip.py).
            token_count=self.counter.count_message("user", clean_blocks(content)),
        )
        if on_event:
            on_event(ToolResultsSaved(message, seconds))
        return message
