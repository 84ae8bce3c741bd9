"""The unanswered-prompt rule: a prompt whose reply failed is left out of later requests."""

from __future__ import annotations

from tui_chat.core.models import ContentBlock, Message, MessageStatus, Role
from tui_chat.core.unanswered import (
    is_unanswered,
    left_out_note,
    unanswered_prompts,
    without_unanswered,
)

_ids = iter(range(1, 1_000_000))


def msg(role: Role, *blocks: ContentBlock | str, status: MessageStatus = "complete") -> Message:
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return Message(
        id=next(_ids),
        conversation_id="c",
        role=role,
        content=content,
        text=" ".join(b for b in blocks if isinstance(b, str)),
        turn=0,
        token_count=10,
        status=status,
        created_at="2026-01-01T00:00:00+00:00",
    )


def failed() -> Message:
    return msg("assistant", status="error")


def test_a_prompt_whose_reply_failed_before_any_text_is_unanswered() -> None:
    assert is_unanswered([msg("user", "q"), failed()])
    assert is_unanswered([msg("user", "q")])  # the process died before the reply row
    assert is_unanswered([msg("user", "q"), failed(), failed()])  # a retry failed too


def test_a_partial_or_complete_reply_answers_the_prompt() -> None:
    assert not is_unanswered([msg("user", "q"), msg("assistant", "a")])
    assert not is_unanswered([msg("user", "q"), msg("assistant", "par", status="incomplete")])
    assert not is_unanswered([msg("user", "q"), failed(), msg("assistant", "a")])  # retried
    tool_use: ContentBlock = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
    assert not is_unanswered([msg("user", "q"), msg("assistant", tool_use), failed()])


def test_failed_prompts_are_left_out_but_the_last_one_is_kept_for_send_and_retry() -> None:
    first, first_reply = msg("user", "first"), failed()
    second, second_reply = msg("user", "second"), failed()
    third = msg("user", "third")
    history = [first, first_reply, second, second_reply, third]
    assert unanswered_prompts(history) == [first, second]
    assert without_unanswered(history) == [third]
    # A retry of the second prompt: it is last, so it is kept; the first is not.
    assert without_unanswered(history[:4]) == [second, second_reply]
    # A draft follows: the last failed prompt is left out too.
    assert without_unanswered(history[:4], keep_last=False) == []
    assert unanswered_prompts(history[:4], keep_last=False) == [first, second]


def test_answered_turns_around_a_failed_one_are_kept_in_order() -> None:
    q1, a1 = msg("user", "one"), msg("assistant", "answer one")
    q2, e2 = msg("user", "two"), failed()
    q3, a3 = msg("user", "three"), msg("assistant", "answer three")
    history = [q1, a1, q2, e2, q3, a3]
    assert without_unanswered(history) == [q1, a1, q3, a3]
    assert unanswered_prompts(history) == [q2]
    assert without_unanswered([]) == [] and unanswered_prompts([]) == []


def test_the_note_names_the_left_out_prompts() -> None:
    first, second = msg("user", "a"), msg("user", "b")
    note = left_out_note([first, second])
    assert note is not None
    assert note.startswith(f"2 prompts left out (#{first.id}, #{second.id})")
    assert left_out_note([]) is None
