"""Turns: the unit every cut in a conversation respects (docs/design.md, "Turns"; seed 001).

A turn is one user message plus everything up to the assistant's final message that has no
``tool_use``: the tool calls, their results and the answer. Every boundary computed here falls
between turns, so a ``tool_use`` is never separated from the ``tool_result`` that answers it
(the API rejects such a request).

A user message that carries any ``tool_result`` block continues the turn it answers, even when
it also has text next to the results: a cut before it would orphan the tool call.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_chat.core.models import ContentBlock, Message, Role
from tui_chat.core.tokens import TokenCounter


def starts_turn(role: Role, content: list[ContentBlock]) -> bool:
    """Tell whether a message opens a new turn (the store numbers turns with this at insert).

    Args:
        role: The message's role.
        content: The message's content blocks.

    Returns:
        True for a user message without ``tool_result`` blocks; False for assistant messages
        and for user messages that answer tool calls.
    """
    if role != "user":
        return False
    return not any(block.get("type") == "tool_result" for block in content)


def ends_turn(message: Message) -> bool:
    """Tell whether a message is a turn's final answer.

    Args:
        message: Any message.

    Returns:
        True for an assistant message without ``tool_use`` whose reply finished, completely or
        cut off (``complete`` / ``incomplete``); False while streaming or after an error.
    """
    return (
        message.role == "assistant"
        and not message.has_tool_use
        and message.status in ("complete", "incomplete")
    )


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes at which the turns of ``messages`` begin.

    Args:
        messages: Messages in conversation order.

    Returns:
        Ascending indexes; the first is always 0 when ``messages`` is not empty (messages before
        the first turn-opening message form a group of their own).
    """
    starts: list[int] = []
    for index, message in enumerate(messages):
        if index == 0 or starts_turn(message.role, message.content):
            starts.append(index)
    return starts


def group_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Split messages into turns.

    Args:
        messages: Messages in conversation order.

    Returns:
        One list per turn, in order; concatenated they give back ``messages``.
    """
    starts = turn_starts(messages)
    if not starts:
        return []
    ends = [*starts[1:], len(messages)]
    return [list(messages[start:end]) for start, end in zip(starts, ends, strict=True)]


def is_complete_turn(turn: Sequence[Message]) -> bool:
    """Tell whether a turn has its final answer (its last message :func:`ends_turn`).

    Args:
        turn: One group from :func:`group_turns`.

    Returns:
        True when the turn is complete.
    """
    return bool(turn) and ends_turn(turn[-1])


def complete_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """The complete turns of ``messages`` (seed 001's ``extract_last_n_turns`` input).

    Args:
        messages: Messages in conversation order.

    Returns:
        The turns that end with a final answer, in order; the current turn is left out while it
        waits for its answer, and so is a turn whose reply failed.
    """
    return [turn for turn in group_turns(messages) if is_complete_turn(turn)]


def current_turn(messages: Sequence[Message]) -> list[Message]:
    """The last turn of ``messages`` (seed 001's ``extract_current_turn``).

    Args:
        messages: Messages in conversation order.

    Returns:
        The messages of the last turn, complete or not; empty for no messages.
    """
    turns = group_turns(messages)
    return turns[-1] if turns else []


def message_tokens(message: Message, counter: TokenCounter) -> int:
    """Tokens of a stored message: its stored ``token_count``, counted only when missing.

    Args:
        message: A stored message.
        counter: Used when ``token_count`` is not positive (e.g. an old import).

    Returns:
        The message's tokens as a request would carry it unmodified.
    """
    if message.token_count > 0:
        return message.token_count
    return counter.count_message(message.role, message.content)


def boundary_for_keep_recent(messages: Sequence[Message], keep_recent: int) -> int:
    """How many leading messages may be folded while ``keep_recent`` stay verbatim.

    The kept tail is rounded out to whole turns (it may keep more than ``keep_recent``), the cut
    falls only between turns, and the last (current) turn is never folded.

    Args:
        messages: Unsummarised messages in conversation order.
        keep_recent: Trailing messages to keep verbatim at least (0 keeps only the last turn).

    Returns:
        The number of leading messages that can be folded (0 when none).
    """
    total = len(messages)
    boundary = 0
    for start in turn_starts(messages)[1:]:
        if total - start >= keep_recent:
            boundary = start
        else:
            break
    return boundary


def boundary_for_token_budget(
    messages: Sequence[Message],
    counter_or_tokens: TokenCounter | Sequence[int],
    budget: int,
) -> int:
    """How many leading messages may be folded while the recent window stays within ``budget``.

    Seed 004's recent window: the newest whole turns whose tokens fit in ``budget`` stay
    verbatim. The last (current) turn always stays, even over budget.

    Args:
        messages: Unsummarised messages in conversation order.
        counter_or_tokens: A counter (stored ``token_count`` is used, counted only when
            missing) or the tokens of each message, aligned with ``messages``.
        budget: Tokens the recent window may take.

    Returns:
        The number of leading messages that can be folded (0 when none).

    Raises:
        ValueError: when a token list does not match ``messages``.
    """
    if isinstance(counter_or_tokens, TokenCounter):
        counter = counter_or_tokens
        sizes = [message_tokens(message, counter) for message in messages]
    else:
        sizes = list(counter_or_tokens)
        if len(sizes) != len(messages):
            raise ValueError(f"{len(sizes)} token counts for {len(messages)} messages")
    starts = turn_starts(messages)
    if len(starts) <= 1:
        return 0
    ends = [*starts[1:], len(messages)]
    kept = sum(sizes[starts[-1] :])
    boundary = starts[-1]
    for start, end in zip(reversed(starts[:-1]), reversed(ends[:-1]), strict=True):
        size = sum(sizes[start:end])
        if kept + size > budget:
            break
        kept += size
        boundary = start
    return boundary
