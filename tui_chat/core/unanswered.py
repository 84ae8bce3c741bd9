"""Unanswered prompts: the rule for a prompt whose reply failed before any text arrived.

A reply that fails with nothing received (a 429, a 529, a dropped connection before the first
word) leaves its prompt without an answer. Such a prompt stays in the conversation, marked in
the chat and in the context preview, but it is **left out of every later request**: the next
send carries the answered turns and the new message only. Retrying (``ctrl+r``, ``tui-chat
retry``) sends it again while it is the last prompt; an older one can be copied and sent anew.

Without this rule the request builder would merge the consecutive user messages into one user
turn, silently re-sending every failed prompt with the next one.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.models import Message
from tui_chat.core.turns import group_turns, starts_turn


def is_unanswered(turn: Sequence[Message]) -> bool:
    """Tell whether a turn is a prompt that got nothing back.

    Args:
        turn: One group from :func:`~tui_chat.core.turns.group_turns`.

    Returns:
        True when the turn opens with a prompt (a user message without tool results) and no
        assistant message of the turn holds any content (its replies failed before any text,
        or there is no reply at all).
    """
    if not turn or not starts_turn(turn[0].role, turn[0].content):
        return False
    return not any(m.role == "assistant" and m.content for m in turn)


def unanswered_prompts(messages: Sequence[Message], *, keep_last: bool = True) -> list[Message]:
    """The prompts of ``messages`` that are left out of the next request.

    Args:
        messages: Messages in conversation order.
        keep_last: Keep the last turn even when it is unanswered (it is the prompt being sent
            or retried); ``False`` when a new message follows (a draft being previewed).

    Returns:
        The user messages that open unanswered turns, in order.
    """
    turns = group_turns(messages)
    if keep_last and turns:
        turns = turns[:-1]
    return [turn[0] for turn in turns if is_unanswered(turn)]


def without_unanswered(messages: Sequence[Message], *, keep_last: bool = True) -> list[Message]:
    """``messages`` without the unanswered turns (see :func:`unanswered_prompts`).

    Args:
        messages: Messages in conversation order.
        keep_last: As for :func:`unanswered_prompts`.

    Returns:
        The messages to send, in order.
    """
    turns = group_turns(messages)
    last = len(turns) - 1
    kept: list[Message] = []
    for index, turn in enumerate(turns):
        if is_unanswered(turn) and not (keep_last and index == last):
            continue
        kept.extend(turn)
    return kept


def left_out_note(prompts: Sequence[Message]) -> str | None:
    """The warning the context preview shows for left-out prompts (``None`` when none).

    Args:
        prompts: What :func:`unanswered_prompts` returned.

    Returns:
        One line naming the prompts by id, or ``None``.
    """
    if not prompts:
        return None
    ids = ", ".join(f"#{m.id}" for m in prompts)
    noun = "prompt" if len(prompts) == 1 else "prompts"
    return (
        f"{len(prompts)} {noun} left out ({ids}): the reply failed before any text; "
        "ctrl+r retries the last prompt, an older one can be sent again"
    )
