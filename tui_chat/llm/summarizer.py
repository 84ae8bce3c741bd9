"""The Claude side of summarisation: ``Complete`` callables over :class:`ClaudeClient`.

``claude_complete`` sends a prompt of its own to the summarizer model; ``continuation_complete``
continues the conversation's cached prefix (the ``claude`` summarizer's cheap path).

The prompts, extraction and strategies live in :mod:`tui_chat.core.summarize`; this module
only makes the call and turns every failure into a :class:`SummaryError`, so an error text
can never become a summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from tui_chat.core.models import ContentBlock, Usage
from tui_chat.core.summarize import Complete, SummaryError
from tui_chat.core.summarize.continuation import continuation_request
from tui_chat.llm.client import ClaudeClient


async def _summary_call(
    client: ClaudeClient, request: dict[str, Any], timeout: float
) -> tuple[str, Usage | None]:
    """Make one summary call; every failure becomes a :class:`SummaryError`."""
    try:
        result = await asyncio.wait_for(client.complete(request), timeout)
    except TimeoutError:
        raise SummaryError(f"the summary call timed out after {timeout:g} s") from None
    if result.error is not None:
        raise SummaryError(f"{result.error.message} ({result.error.kind})")
    if not result.complete:
        raise SummaryError("the summary reply was cut off")
    if result.stop_reason == "max_tokens" and "</summary>" not in result.text:
        raise SummaryError("the summary reply hit max_tokens before it finished")
    return result.text, result.usage


def claude_complete(client: ClaudeClient, model: str, *, timeout: float) -> Complete:
    """A ``Complete`` function that asks ``model`` through ``client`` in a prompt of its own.

    Args:
        client: The Claude client.
        model: The summarizer model (e.g. ``claude-haiku-4-5``).
        timeout: Seconds before the call is abandoned.
    """

    async def complete(system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        request = {
            "model": model,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "max_tokens": max_tokens,
        }
        return await _summary_call(client, request, timeout)

    return complete


def continuation_complete(
    client: ClaudeClient,
    chat_request: Mapping[str, Any],
    reply: Sequence[ContentBlock],
    *,
    timeout: float,
) -> Complete:
    """A ``Complete`` function that continues the conversation's cached prefix.

    Every call sends ``chat_request`` unchanged (same model, system, messages and cache
    breakpoints), then ``reply`` and one user turn holding the prompt: the system part of a
    prompt (empty for the continuation prompt, the summarizer's role for a roll-up of
    segments) followed by its user part.

    Args:
        client: The Claude client.
        chat_request: The preceding chat request exactly as it was sent.
        reply: The reply it got.
        timeout: Seconds before a call is abandoned.
    """

    async def complete(system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        instruction = "\n\n".join(part for part in (system, user) if part)
        try:
            request = continuation_request(chat_request, reply, instruction, max_tokens)
        except ValueError as exc:
            raise SummaryError(f"cannot continue the conversation: {exc}") from None
        return await _summary_call(client, request, timeout)

    return complete
