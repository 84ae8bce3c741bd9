"""Turn grouping and fold boundaries (docs/design.md, "Turns"; seed 001)."""

from __future__ import annotations

from typing import Any

import pytest

from tui_chat.core.models import ContentBlock, Message, MessageStatus, Role
from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, get_counter
from tui_chat.core.turns import (
    boundary_for_keep_recent,
    boundary_for_token_budget,
    complete_turns,
    current_turn,
    ends_turn,
    group_turns,
    message_tokens,
    starts_turn,
    turn_starts,
)

_ids = iter(range(1, 1_000_000))


def msg(
    role: Role,
    *blocks: ContentBlock | str,
    status: MessageStatus = "complete",
    token_count: int = 10,
    **extra: Any,
) -> Message:
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return Message(
        id=next(_ids),
        conversation_id="c",
        role=role,
        content=content,
        text=" ".join(b for b in blocks if isinstance(b, str)),
        turn=0,
        token_count=token_count,
        status=status,
        created_at="2026-01-01T00:00:00+00:00",
        **extra,
    )


def tool_use(tid: str, name: str = "search") -> ContentBlock:
    return {"type": "tool_use", "id": tid, "name": name, "input": {"q": tid}}


def tool_result(tid: str) -> ContentBlock:
    return {"type": "tool_result", "tool_use_id": tid, "content": f"result {tid}"}


def simple_turn(question: str = "q") -> list[Message]:
    return [msg("user", question), msg("assistant", "a " + question)]


def tool_turn() -> list[Message]:
    """Seed 001's turn: a question, two tool calls and the final answer."""
    return [
        msg("user", "search python 3.13"),
        msg("assistant", tool_use("t1")),
        msg("user", tool_result("t1")),
        msg("assistant", "thinking more", tool_use("t2", "reasoning")),
        msg("user", tool_result("t2"), "also check the JIT"),
        msg("assistant", "Python 3.13 brings …"),
    ]


def test_starts_turn() -> None:
    assert starts_turn("user", [{"type": "text", "text": "hi"}])
    assert starts_turn("user", [])
    assert not starts_turn("assistant", [{"type": "text", "text": "hi"}])
    assert not starts_turn("user", [tool_result("t1")])
    # Text next to a tool result still answers the call: same turn.
    assert not starts_turn("user", [tool_result("t1"), {"type": "text", "text": "and"}])


def test_ends_turn() -> None:
    assert ends_turn(msg("assistant", "done"))
    assert ends_turn(msg("assistant", "partial", status="incomplete"))
    assert not ends_turn(msg("assistant", tool_use("t1")))
    assert not ends_turn(msg("assistant", status="error"))
    assert not ends_turn(msg("assistant", "so far", status="streaming"))
    assert not ends_turn(msg("user", "hi"))


def test_group_turns_keeps_tool_calls_in_their_turn() -> None:
    first, second = tool_turn(), simple_turn("next")
    messages = [*first, *second]
    turns = group_turns(messages)
    assert turns == [first, second]
    assert turn_starts(messages) == [0, len(first)]
    assert [m for turn in turns for m in turn] == messages


def test_group_turns_leading_assistant_forms_its_own_group() -> None:
    lead = msg("assistant", "welcome")
    rest = simple_turn()
    assert group_turns([lead, *rest]) == [[lead], rest]
    assert group_turns([]) == []


def test_failed_reply_then_new_message() -> None:
    failed = [msg("user", "q1"), msg("assistant", status="error")]
    retry = simple_turn("q2")
    turns = group_turns([*failed, *retry])
    assert turns == [failed, retry]
    assert complete_turns([*failed, *retry]) == [retry]


def test_complete_turns_and_current_turn() -> None:
    done = tool_turn()
    pending = [msg("user", "go"), msg("assistant", tool_use("t9"))]
    messages = [*done, *pending]
    assert complete_turns(messages) == [done]
    assert current_turn(messages) == pending
    assert current_turn([]) == []


def test_keep_recent_rounds_out_to_whole_turns() -> None:
    t1, t2, t3 = tool_turn(), simple_turn("b"), simple_turn("c")
    messages = [*t1, *t2, *t3]  # 6 + 2 + 2 messages
    assert boundary_for_keep_recent(messages, 4) == len(t1)
    assert boundary_for_keep_recent(messages, 3) == len(t1)  # rounded out: keeps 4
    assert boundary_for_keep_recent(messages, 2) == len(t1) + len(t2)
    assert boundary_for_keep_recent(messages, 5) == 0  # would split t1
    assert boundary_for_keep_recent(messages, 100) == 0


def test_keep_recent_zero_never_folds_the_current_turn() -> None:
    # Seed 001 at turn 4: turns 1–3 folded, turn 4 (just asked) kept.
    history = [*simple_turn("1"), *simple_turn("2"), *simple_turn("3")]
    now = [msg("user", "4")]
    assert boundary_for_keep_recent([*history, *now], 0) == len(history)
    # A finished last turn is still the current one: it stays.
    assert boundary_for_keep_recent(history, 0) == 4
    assert boundary_for_keep_recent(simple_turn(), 0) == 0


def test_keep_recent_never_separates_tool_pairs() -> None:
    messages = [*tool_turn(), *tool_turn(), *tool_turn()]
    for keep in range(len(messages) + 2):
        boundary = boundary_for_keep_recent(messages, keep)
        assert boundary in (0, 6, 12)
        if boundary:
            assert starts_turn(messages[boundary].role, messages[boundary].content)
            assert not messages[boundary - 1].has_tool_use


def test_token_budget_window() -> None:
    t1 = [msg("user", "a", token_count=100), msg("assistant", "b", token_count=100)]
    t2 = [msg("user", "c", token_count=300), msg("assistant", "d", token_count=300)]
    t3 = [msg("user", "e", token_count=50), msg("assistant", "f", token_count=50)]
    messages = [*t1, *t2, *t3]
    counter = get_counter()
    assert boundary_for_token_budget(messages, counter, 800) == 2  # t2 + t3 = 700
    assert boundary_for_token_budget(messages, counter, 900) == 0
    assert boundary_for_token_budget(messages, counter, 699) == 4  # only t3
    assert boundary_for_token_budget(messages, counter, 10) == 4  # last turn always kept
    sizes = [1, 1, 1, 1, 1, 1]
    assert boundary_for_token_budget(messages, sizes, 4) == 2
    with pytest.raises(ValueError):
        boundary_for_token_budget(messages, [1, 2], 4)


def test_token_budget_stops_at_first_turn_that_does_not_fit() -> None:
    small_old = [msg("user", "a", token_count=1), msg("assistant", "b", token_count=1)]
    big = [msg("user", "c", token_count=500), msg("assistant", "d", token_count=500)]
    last = [msg("user", "e", token_count=10)]
    # The window is contiguous: the small old turn is not kept past the big one.
    assert boundary_for_token_budget([*small_old, *big, *last], get_counter(), 100) == 4


def test_message_tokens_counts_only_when_missing() -> None:
    counter = get_counter()
    stored = msg("user", "hello world", token_count=77)
    assert message_tokens(stored, counter) == 77
    missing = msg("user", "hello world", token_count=0)
    assert message_tokens(missing, counter) == MESSAGE_OVERHEAD_TOKENS + 2
