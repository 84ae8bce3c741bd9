"""Which messages the fake server's summarizer reads from a continuation summary request.

tui-chat's ``claude`` summarizer repeats the conversation and ends it with one instruction
naming where the span to summarize ends ("up to and including the … message of turn N that
begins «…»") or, for segments, where it starts and ends. A model follows that; the fake
server follows it too, so a continuation summarizes what the instruction names — plus the
memory block of the system prompt (the summary in force) when the whole start is asked
for — and never the instruction itself or the turns kept verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["summary_sources"]

_QUOTED = re.compile(r"begins «(.*?)»", re.DOTALL)


def _normal(text: str) -> str:
    return " ".join(text.split())


def summary_sources(
    body: dict[str, Any], marker: str, text_of: Callable[[Any], str]
) -> list[dict[str, Any]]:
    """The messages a summary request asks to summarize.

    Args:
        body: The request.
        marker: The text that marks the summary instruction.
        text_of: Renders a message's content as text.

    Returns:
        The request's messages for a standalone prompt; for a continuation, the span its
        instruction names (memory block first when it asks from the start).
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if len(messages) < 2 or not marker:
        return messages
    instruction = text_of(messages[-1].get("content"))
    quotes = _QUOTED.findall(instruction) if marker in instruction else []
    if not quotes:
        return messages
    earlier = messages[:-1]

    def find(quote: str) -> int:
        wanted = _normal(quote).rstrip("…")
        for i, message in enumerate(earlier):
            if _normal(text_of(message.get("content"))).startswith(wanted):
                return i
        return len(earlier) - 1

    end = find(quotes[-1])
    if len(quotes) > 1:
        return earlier[find(quotes[0]) : end + 1]
    system = body.get("system")
    memory = [b for b in system[1:] if isinstance(b, dict)] if isinstance(system, list) else []
    return (
        [{"role": "user", "content": memory}, *earlier[: end + 1]] if memory else earlier[: end + 1]
    )
