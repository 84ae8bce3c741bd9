"""A summary written as a continuation of the conversation's cached prefix.

The ``claude`` summarizer does not send the covered history in a prompt of its own: it sends
the preceding chat request again, byte for byte — the same ``system`` blocks, the same
messages, the same ``cache_control`` breakpoints — followed by the reply that request got and
one final user turn with the summary instruction. Everything up to the chat request's last
breakpoint is then read from the prompt cache at 0.1x the input price; only the reply and the
instruction are new.

The instruction keeps the standalone prompt's structure (:mod:`.prompt`): the summarizer's
role, the headings of seed 002, the length target, pins, tracked fields, the user's
instructions and the ``<summary>`` tags. Since the whole conversation is in view, it names
the part to summarize by where it ends (and, for segments, where it begins); the summary
already in force is in the system prompt's memory block and is merged in.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tui_chat.core.blocks import message_body
from tui_chat.core.models import ContentBlock, Message
from tui_chat.core.request.clip import clean_blocks
from tui_chat.core.summarize.prompt import (
    CONTENT_GUIDE,
    SEGMENT_GUIDE,
    SUMMARIZER_ROLE,
    build_summary_prompt,
    closing_sections,
    length_line,
)
from tui_chat.core.summarize.targets import targets_for
from tui_chat.core.summarize.types import SummaryInput

__all__ = ["PromptBuilder", "continuation_prompt", "continuation_request", "opening"]

PromptBuilder = Callable[[SummaryInput], tuple[str, str]]
"""Builds the ``(system, user)`` prompts of one summary call from the version being made."""

_OPENING_CHARS = 80


def opening(message: Message) -> str:
    """The first words of a message, to point at it inside the conversation."""
    text = " ".join(message_body(message).split())
    return text if len(text) <= _OPENING_CHARS else text[: _OPENING_CHARS - 1] + "…"


def _where(message: Message) -> str:
    role = "user" if message.role == "user" else "assistant"
    return f"the {role} message of turn {message.turn} that begins «{opening(message)}»"


def continuation_prompt(after: int) -> PromptBuilder:
    """The prompt builder of a continuation summary.

    Args:
        after: How many messages of the conversation follow the span (kept verbatim).

    Returns:
        A builder whose system prompt is empty (the conversation's own is sent) and whose
        user prompt is the instruction that ends the continuation.
    """

    def build(request: SummaryInput) -> tuple[str, str]:
        span = request.messages
        if not span:
            return build_summary_prompt(request)
        first, last = span[0], span[-1]
        sections = [SUMMARIZER_ROLE, "The conversation above is now being compacted."]
        if request.policy.strategy == "segments":
            sections.append(
                f"Summarize only the part from {_where(first)} to {_where(last)}; what comes "
                "before it is already summarized in your context: do not repeat it."
            )
            sections.append(SEGMENT_GUIDE)
        else:
            sections.append(
                f"Summarize the conversation from its start up to and including {_where(last)}. "
                "If your context already holds a summary (the memory block of the system "
                "prompt), merge it in and drop only what later messages made obsolete."
            )
            sections.append(CONTENT_GUIDE)
        if after:
            sections.append(
                f"The {after} message(s) after that point stay verbatim in the assistant's "
                "context: do not summarize them."
            )
        sections.append(length_line(request, targets_for(request)))
        sections.extend(closing_sections(request))
        return "", "\n\n".join(sections)

    return build


def continuation_request(
    chat: Mapping[str, Any],
    reply: Sequence[ContentBlock],
    instruction: str,
    max_tokens: int,
) -> dict[str, Any]:
    """The preceding chat request continued by its reply and the summary instruction.

    Args:
        chat: The chat request exactly as it was sent (its ``system``, ``messages`` and
            breakpoints are kept unchanged, so the prefix is read from the cache).
        reply: The reply that request got (stored blocks; thinking is not sent back).
        instruction: The final user turn.
        max_tokens: The summary call's ``max_tokens``.

    Returns:
        The summary request.

    Raises:
        ValueError: When the chat request does not end with a user message, or the reply
            has nothing to send or asks for a tool (the turn is not finished).
    """
    request = copy.deepcopy(dict(chat))
    messages = list(request.get("messages") or [])
    if not messages or messages[-1].get("role") != "user":
        raise ValueError("the chat request does not end with a user message")
    blocks = clean_blocks(reply)
    if not blocks or any(b.get("type") == "tool_use" for b in blocks):
        raise ValueError("the reply is not a finished answer")
    if any(str(tool.get("type", "")).startswith("web_") for tool in request.get("tools") or ()):
        # The tools stay as sent (the cached prefix); the summary needs no new pages.
        instruction += "\n\nDo not search the web or fetch pages: use only this conversation."
    messages.append({"role": "assistant", "content": blocks})
    messages.append({"role": "user", "content": [{"type": "text", "text": instruction}]})
    request["messages"] = messages
    request["max_tokens"] = max_tokens
    thinking = request.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        # The budget form needs max_tokens above budget_tokens; the summary keeps its own room.
        request["max_tokens"] = max_tokens + int(thinking.get("budget_tokens") or 0)
    return request
