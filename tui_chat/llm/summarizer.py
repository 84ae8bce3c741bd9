"""The Claude side of summarisation: a ``Complete`` callable over :class:`ClaudeClient`.

The prompts, extraction and strategies live in :mod:`tui_chat.core.summarize`; this module
only makes the call and turns every failure into a :class:`SummaryError`, so an error text
can never become a summary.
"""

from __future__ import annotations

import asyncio

from tui_chat.core.models import Usage
from tui_chat.core.summarize import Complete, SummaryError
from tui_chat.llm.client import ClaudeClient


def claude_complete(client: ClaudeClient, model: str, *, timeout: float) -> Complete:
    """A ``Complete`` function that asks ``model`` through ``client``.

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

    return complete
