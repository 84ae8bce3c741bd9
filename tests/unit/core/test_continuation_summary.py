"""The continuation summary: the chat request repeated unchanged, then the reply and the
instruction (pure parts; the engine path runs against the fake server in test_summary_cost)."""

from __future__ import annotations

import json

import pytest

from tests.unit.core.test_summarizers import msg
from tui_chat.core.policy import Policy
from tui_chat.core.summarize import MARKER, SummaryInput
from tui_chat.core.summarize.continuation import continuation_prompt, continuation_request

CHAT = {
    "model": "claude-sonnet-4-6",
    "system": [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "Memory: earlier summary", "cache_control": {"type": "ephemeral"}},
    ],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Rename utils.py?"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Yes.", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "user", "content": [{"type": "text", "text": "And tests/test_x.py?"}]},
    ],
    "max_tokens": 16_384,
}


def test_request_repeats_the_chat_prefix_byte_for_byte() -> None:
    reply = [
        {"type": "thinking", "thinking": "hm", "signature": "s"},
        {"type": "text", "text": "Also."},
    ]
    request = continuation_request(CHAT, reply, "Summarize. <summary>", 2_048)
    dumped = json.dumps(request["messages"][:3], sort_keys=True)
    assert dumped == json.dumps(CHAT["messages"], sort_keys=True)
    assert request["system"] == CHAT["system"] and request["model"] == CHAT["model"]
    assert request["messages"][3] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Also."}],
    }
    assert request["messages"][4]["content"][0]["text"] == "Summarize. <summary>"
    assert request["max_tokens"] == 2_048
    assert CHAT["max_tokens"] == 16_384  # the chat request itself is not touched


def test_request_refuses_an_unfinished_turn() -> None:
    with pytest.raises(ValueError):
        continuation_request(
            CHAT, [{"type": "tool_use", "id": "t", "name": "x", "input": {}}], "S", 10
        )
    with pytest.raises(ValueError):
        continuation_request(
            {**CHAT, "messages": CHAT["messages"][:2]}, [{"type": "text", "text": "a"}], "S", 10
        )


def test_prompt_names_the_end_of_the_span_and_keeps_the_structure() -> None:
    span = [msg(1, "user", "Rename utils.py?", 1), msg(2, "assistant", "Yes, to helpers.py.", 1)]
    request = SummaryInput(
        policy=Policy(), previous=None, messages=span, instructions="keep every path"
    )
    system, user = continuation_prompt(after=2)(request)
    assert system == ""
    assert MARKER in user and "<summary></summary>" in user
    assert "turn 1 that begins «Yes, to helpers.py.»" in user
    assert "The 2 message(s) after that point stay verbatim" in user
    assert "keep every path" in user and "Task overview" in user
    segments = SummaryInput(policy=Policy(strategy="segments"), previous=None, messages=span)
    _, text = continuation_prompt(after=0)(segments)
    assert "from the user message of turn 1 that begins «Rename utils.py?»" in text
    assert "stay verbatim" not in text
