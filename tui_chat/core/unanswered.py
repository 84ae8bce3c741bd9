"""Unanswered prompts: the rule for a prompt whose reply failed before any text arrived.

A reply that fails with nothing received (a 429, a 529, a dropped connection before the first
word) leaves its prompt without an answer. Such a prompt stays in the conversation, marked in
the chat and in the context preview, but it is **left out of every later request**, and of
the summaries that fold its span: the next send carries the answered turns and the new message
only. Retrying (``ctrl+r``, ``tui-chat retry``) sends it again while it is the last prompt; an
older one can be copied and sent anew.

Without this rule the request builder would merge the consecutive user messages into one user
turn, silently re-sending every failed prompt with the next one.

A **refused** reply (``stop_reason: "refusal"``: Claude's streaming classifiers stopped it, with
``stop_details`` naming a policy category) does not answer its prompt either. Claude's docs
("Handle streaming refusals") say the refused turn must be removed or rephrased before the
conversation goes on, or the next replies are refused too; so a refused turn is kept and shown,
marked with its category, and left out of later requests like a failed one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tui_chat.core.models import Message
from tui_chat.core.turns import group_turns, starts_turn

REFUSAL = "refusal"
"""The stop reason of a reply Claude's classifiers refused (stored on the reply)."""

REFUSAL_CATEGORIES: Mapping[str, str] = {
    "cyber": "the request could enable cyber harm",
    "bio": "the request could enable biological harm",
    "frontier_llm": "the request could assist the development of competing AI models",
    "reasoning_extraction": "the request asks Claude to reproduce its internal reasoning",
    "general_harms": "the request could be related to an area determined as harmful",
}
"""What each ``stop_details.category`` of the API means (its documented meaning), used when
the API gives no ``explanation``."""

_CATEGORY = re.compile(r"\(refused, category: ([a-z_]+|none given)\)")
_MAX_EXPLANATION = 300


def refusal_message(category: str | None, explanation: str | None) -> str:
    """The stored reason of a refused reply: it was refused, the category and why.

    Args:
        category: ``stop_details.category`` (``None`` when the refusal has no named category).
        explanation: ``stop_details.explanation`` (``None`` when the API gives none).

    Returns:
        One sentence; :func:`refusal_category` reads the category back from it.
    """
    label = category if category and re.fullmatch(r"[a-z_]{1,40}", category) else None
    text = f"Claude declined to answer (refused, category: {label or 'none given'})"
    why = " ".join((explanation or "").split())[:_MAX_EXPLANATION]
    why = why or REFUSAL_CATEGORIES.get(label or "", "")
    return f"{text}: {why}" if why else text


def refused(message: Message) -> bool:
    """Tell whether ``message`` is a reply Claude refused (``stop_reason: "refusal"``)."""
    return message.role == "assistant" and message.stop_reason == REFUSAL


def refusal_category(message: Message) -> str | None:
    """The category of a refused reply (``"none given"`` when it had none), else ``None``."""
    if not refused(message):
        return None
    found = _CATEGORY.search(message.error or "")
    return found.group(1) if found else "none given"


def answers(message: Message) -> bool:
    """Tell whether ``message`` answers its turn: an assistant message with content that was
    not refused."""
    return message.role == "assistant" and bool(message.content) and not refused(message)


def is_unanswered(turn: Sequence[Message]) -> bool:
    """Tell whether a turn is a prompt that got nothing back.

    Args:
        turn: One group from :func:`~tui_chat.core.turns.group_turns`.

    Returns:
        True when the turn opens with a prompt (a user message without tool results) and no
        assistant message of the turn answers it (:func:`answers`: its replies failed before
        any text or were refused, or there is no reply at all).
    """
    if not turn or not starts_turn(turn[0].role, turn[0].content):
        return False
    return not any(answers(m) for m in turn)


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


def refused_prompts(messages: Sequence[Message]) -> dict[int, str]:
    """The prompts of ``messages`` whose turn holds a refused reply, with its category.

    Args:
        messages: Messages in conversation order.

    Returns:
        Prompt id → category (``"none given"`` when the API named none).
    """
    found: dict[int, str] = {}
    for turn in group_turns(messages):
        for message in turn:
            if (category := refusal_category(message)) is not None:
                found[turn[0].id] = category
    return found


def not_sent_again(prompts: Sequence[Message], messages: Sequence[Message]) -> list[Message]:
    """The left-out prompts the user did not send again: one whose text a later prompt of
    ``messages`` repeats was resent, and is no longer worth a warning (still left out).

    Args:
        prompts: What :func:`unanswered_prompts` returned.
        messages: The messages they are among, in conversation order.
    """
    later: dict[str, int] = {}
    for message in messages:
        if message.role == "user" and (text := message.text.strip()):
            later[text] = max(later.get(text, 0), message.id)
    return [p for p in prompts if later.get(p.text.strip(), 0) <= p.id]


def left_out_note(
    prompts: Sequence[Message], refusals: Mapping[int, str] | None = None
) -> str | None:
    """The warning the context preview shows for left-out prompts (``None`` when none).

    Args:
        prompts: What :func:`unanswered_prompts` returned.
        refusals: What :func:`refused_prompts` returned (names the refused ones).

    Returns:
        One line naming the prompts by id (a refused one with its category), or ``None``.
    """
    if not prompts:
        return None
    refusals = refusals or {}
    ids = ", ".join(
        f"#{m.id} refused: {refusals[m.id]}" if m.id in refusals else f"#{m.id}" for m in prompts
    )
    noun = "prompt" if len(prompts) == 1 else "prompts"
    refused_count = sum(m.id in refusals for m in prompts)
    reasons = [
        *(["the reply failed before any text"] if refused_count < len(prompts) else []),
        *(["Claude refused it (its docs say to leave such a turn out)"] if refused_count else []),
    ]
    why = " or ".join(reasons)
    return (
        f"{len(prompts)} {noun} left out ({ids}): {why}; "
        "ctrl+r retries the last prompt, an older one can be sent again"
    )
