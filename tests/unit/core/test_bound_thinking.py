"""A tool loop's thinking goes back only where it is still bound (core/request/bound_thinking.py):
the same model, the same prefix; a later turn's request never carries it; and the notes between
tool calls that a model writes as thinking are the reply's text (core/tool_text.py)."""

from __future__ import annotations

from typing import Any

from tui_chat.core.models import Message
from tui_chat.core.request.bound_thinking import BOUND_KEY, bind, loop_replies, restore
from tui_chat.core.tool_text import body_text, progress_indexes

MODEL = "claude-sonnet-4-6"


def message(
    mid: int, role: str, content: list[dict[str, Any]], model: str | None = None
) -> Message:
    return Message(
        id=mid,
        conversation_id="c",
        role=role,  # type: ignore[arg-type]
        content=content,
        text="",
        turn=1,
        status="complete",
        created_at="2026-12-02T00:00:00Z",
        token_count=1,
        model=model,
    )


def first_request(system: str = "Be brief.") -> dict[str, Any]:
    return {
        "model": MODEL,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "t__add", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "2 + 40?"}]}],
    }


THOUGHT = {"type": "thinking", "thinking": "Add them.", "signature": "sig-1"}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "t__add", "input": {"a": 2, "b": 40}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}


def loop(system: str = "Be brief.", model: str = MODEL) -> tuple[list[Message], dict[str, Any]]:
    """A stored tool loop (the question, the reply with its call, the results) and the next
    request as the builder makes it: thinking left out, a breakpoint on the last block."""
    reply = message(2, "assistant", bind([THOUGHT, CALL], first_request()), MODEL)
    history = [
        message(1, "user", [{"type": "text", "text": "2 + 40?"}]),
        reply,
        message(3, "user", [RESULT]),
    ]
    request = first_request(system)
    request["model"] = model
    request["messages"] += [
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": [{**RESULT, "cache_control": {"type": "ephemeral"}}]},
    ]
    return history, request


def test_the_loop_s_thinking_goes_back_first_and_unchanged() -> None:
    history, request = loop()
    assert [m.id for m in loop_replies(history)] == [2]
    sent = restore(request, loop_replies(history))
    assert sent["messages"][1]["content"] == [THOUGHT, CALL]  # as received, no local key
    assert BOUND_KEY not in str(sent["messages"])
    assert sent["messages"][2] == request["messages"][2]  # the breakpoint stays


def test_a_changed_prefix_or_model_sends_none_back() -> None:
    for history, request in (loop(system="Be thorough."), loop(model="claude-opus-4-6")):
        assert restore(request, loop_replies(history)) == request


def test_a_turn_that_is_over_is_not_a_tool_loop() -> None:
    history, _ = loop()
    history += [
        message(4, "assistant", [{"type": "text", "text": "42"}], MODEL),
        message(5, "user", [{"type": "text", "text": "thanks"}]),
    ]
    assert loop_replies(history) == []


def test_a_cut_thinking_block_is_never_bound() -> None:
    cut = {"type": "thinking", "thinking": "Add", "signature": ""}
    assert BOUND_KEY not in bind([cut, CALL], first_request())[0]


def test_notes_between_tool_calls_are_the_body_on_models_that_write_them_as_thinking() -> None:
    note = {"type": "thinking", "thinking": "Adding the numbers.", "signature": "s"}
    content = [THOUGHT, note, CALL]
    assert progress_indexes(content, "claude-sonnet-5-5") == {1}
    assert body_text(content, "claude-sonnet-5-5") == "Adding the numbers.\n\n"
    # An earlier model's thinking before a call is its reasoning, not text.
    assert progress_indexes(content, "claude-sonnet-4-6") == set()
    assert body_text(content, "claude-sonnet-4-6") is None
    # At the default display the note is empty: nothing to show.
    assert body_text([{**note, "thinking": ""}, CALL], "claude-opus-5-5") is None
