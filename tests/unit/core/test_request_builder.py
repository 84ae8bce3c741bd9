"""The request builder: shape, caching, memory, recall, fitting, and properties over histories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_chat.core.models import Anchor, ContentBlock, Message, MessageStatus, Role, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.core.request import (
    CUT_NOTE,
    SECTIONS,
    BuiltRequest,
    ContextInputs,
    anchor_entry,
    build_request,
    draft_breakdown,
    fresh_timeline,
    memory_text,
)
from tui_chat.core.request.budget import within_budget
from tui_chat.core.request.recall import as_passages
from tui_chat.core.request.render import request_text
from tui_chat.core.request.superseded import without_superseded
from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter, get_counter
from tui_chat.core.turns import starts_turn

COUNTER = get_counter()
WINDOW = replace(PRESETS["window"], recall_fill=False)
"""The window preset with recall held to its own budget (the preset fills the room left)."""


# -- factories --------------------------------------------------------------------------------


def build_alone(inputs: ContextInputs) -> BuiltRequest:
    """The request built with a fresh timeline (nothing kept from an earlier build)."""
    return build_request(inputs, fresh_timeline(inputs))


def text(value: str) -> ContentBlock:
    return {"type": "text", "text": value}


def tool_use(tid: str, name: str = "search") -> ContentBlock:
    return {"type": "tool_use", "id": tid, "name": name, "input": {"q": tid}}


def tool_result(tid: str, body: str = "found") -> ContentBlock:
    return {"type": "tool_result", "tool_use_id": tid, "content": body}


class History:
    """Builds messages with increasing ids and stored token counts, like the store does."""

    def __init__(self, start: int = 1) -> None:
        self.next_id = start
        self.turn_number = 0
        self.messages: list[Message] = []

    def add(
        self,
        role: Role,
        *blocks: ContentBlock | str,
        status: MessageStatus = "complete",
        token_count: int | None = None,
    ) -> Message:
        content = [text(b) if isinstance(b, str) else b for b in blocks]
        if starts_turn(role, content) or self.turn_number == 0:
            self.turn_number += 1  # numbered as the store numbers turns
        message = Message(
            id=self.next_id,
            conversation_id="c1",
            role=role,
            content=content,
            text=" ".join(str(b.get("text", "")) for b in content),
            turn=self.turn_number,
            token_count=(
                COUNTER.count_message(role, content) if token_count is None else token_count
            ),
            status=status,
            created_at=f"2026-01-01T00:00:{self.next_id % 60:02d}+00:00",
        )
        self.next_id += 1
        self.messages.append(message)
        return message

    def turn(self, question: str, answer: str) -> list[Message]:
        return [self.add("user", question), self.add("assistant", answer)]


def summary(covers_to: int, version: int = 1, body: str = "Earlier: they chose SQLite.") -> Summary:
    return Summary(
        id=version,
        conversation_id="c1",
        version=version,
        parent_id=None,
        strategy="running",
        text=body,
        segments=[],
        covers_to_message_id=covers_to,
        covered_messages=covers_to,
        source_tokens=1_000_000,  # stands for a long history: recall is worth its cost
        summary_tokens=20,
        trigger="auto",
        summarizer="extractive",
        status="completed",
        created_at="2026-01-01T00:00:00+00:00",
    )


def pin(message: Message, note: str = "") -> tuple[Anchor, Message]:
    return (Anchor(message.id, "c1", note, "2026-01-02T00:00:00+00:00"), message)


def inputs(
    raw: Sequence[Message] = (),
    new: str | list[ContentBlock] | None = "what next?",
    *,
    policy: Policy = WINDOW,
    window: int = 200_000,
    max_output: int = 8_000,
    system: str = "You are helpful.",
    summary_: Summary | None = None,
    anchors: Sequence[tuple[Anchor, Message]] = (),
    recalled: Sequence[Message] = (),
    calibration: float = 1.0,
    counter: TokenCounter = COUNTER,
) -> ContextInputs:
    new_message = [text(new)] if isinstance(new, str) else new
    return ContextInputs(
        model="claude-haiku-4-5",
        context_window=window,
        max_output=max_output,
        system_prompt=system,
        policy=policy,
        summary=summary_,
        anchors=list(anchors),
        recalled=as_passages(recalled, request_text),
        raw_messages=list(raw),
        new_message=new_message,
        counter=counter,
        calibration=calibration,
    )


def breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(breakpoints(v) for v in value)
    return 0


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b["type"] == "text"]


# -- shape and caching ------------------------------------------------------------------------


def test_first_message_alone() -> None:
    built = build_alone(inputs())
    request = built.request
    assert list(request) == ["model", "system", "messages", "max_tokens"]
    assert request["model"] == "claude-haiku-4-5"
    assert request["max_tokens"] == 8_000
    assert request["system"] == [
        {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}
    ]
    assert request["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what next?", "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    assert built.fits
    assert built.breakdown.sections["new_message"] == COUNTER.count_message(
        "user", [text("what next?")]
    )
    assert set(built.breakdown.sections) == set(SECTIONS)


def test_no_system_key_without_system_text() -> None:
    built = build_alone(inputs(system="   "))
    assert "system" not in built.request
    assert built.breakdown.sections["system"] == 0


def test_inputs_are_not_mutated() -> None:
    h = History()
    h.turn("hello", "hi")
    raw = list(h.messages)
    before = json.dumps([m.content for m in raw])
    new = [text("next")]
    build_alone(inputs(raw, new))
    assert json.dumps([m.content for m in raw]) == before
    assert new == [text("next")]


def test_memory_block_carries_the_breakpoint_and_recall_rides_in_the_new_message() -> None:
    h = History()
    old = h.turn("we use SQLite with WAL", "noted")
    raw = h.turn("and the schema?", "three tables")
    built = build_alone(
        inputs(
            raw,
            summary_=summary(old[-1].id, version=3),
            anchors=[pin(old[0], "storage decision")],
            recalled=[old[1]],
        )
    )
    system = built.request["system"]
    assert len(system) == 2
    assert "cache_control" not in system[0]
    memory = system[1]
    assert memory["cache_control"] == {"type": "ephemeral"}
    assert f"up to #{old[-1].id}" in memory["text"] and "version 3" in memory["text"]
    assert "Earlier: they chose SQLite." in memory["text"]
    assert "we use SQLite with WAL" in memory["text"] and "storage decision" in memory["text"]
    assert old[0].created_at in memory["text"]
    assert memory["text"] == memory_text(
        summary(old[-1].id, version=3), [pin(old[0], "storage decision")]
    )
    # The excerpts close the new message, after the breakpoint: they change per request,
    # and the next request sends the message again without them (read from the cache).
    messages = built.request["messages"]
    own, legend, excerpts = messages[-1]["content"]
    assert legend["text"].startswith("Verbatim, by date")
    # One search_result, its passages cited by their ``#id role:`` labels.
    assert excerpts["type"] == "search_result" and excerpts["citations"] == {"enabled": True}
    assert excerpts["source"] == "recall"
    (passage,) = excerpts["content"]
    assert "noted" in passage["text"]
    assert passage["text"].startswith(f"[{old[1].created_at[:10]}]\n#{old[1].id} ")
    assert own["text"] == "what next?"
    assert all("cache_control" not in block for block in (legend, excerpts))
    assert own["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in block for block in messages[-2]["content"])
    assert built.anchor_ids == (old[0].id,)
    assert built.recalled_ids == (old[1].id,)
    assert built.sent_message_ids == tuple(m.id for m in raw)
    assert breakpoints(built.request) == 2


def test_memory_block_is_byte_identical_between_compactions() -> None:
    h = History()
    old = h.turn("pinned fact: port 5432", "ok")
    raw = h.turn("q1", "a1")
    common: dict[str, Any] = {
        "summary_": summary(old[-1].id),
        "anchors": [pin(old[0], "db port")],
    }
    first = build_alone(inputs(raw, "q2", **common))
    more = [*raw, *h.turn("q2", "a2")]
    second = build_alone(inputs(more, "q3", **common))
    assert first.request["system"] == second.request["system"]
    # The previous request is a prefix of the next one (the cache can read it).
    assert second.request["messages"][: len(raw)] == first.request["messages"][: len(raw)]


def test_anchor_inside_the_raw_window_is_sent_raw_only() -> None:
    h = History()
    raw = h.turn("the key is X-42", "ok")
    built = build_alone(inputs(raw, anchors=[pin(raw[0], "key")]))
    assert built.anchor_ids == ()
    assert len(built.request["system"]) == 1  # no memory block
    assert built.sent_message_ids == (raw[0].id, raw[1].id)
    assert built.breakdown.sections["anchors"] == 0


def test_anchor_budget_sends_oldest_first_and_warns() -> None:
    h = History()
    old = [h.add("user", f"pinned fact number {i} " + "word " * 40) for i in range(4)]
    old.append(h.add("assistant", "ok"))
    raw = h.turn("now", "sure")
    entry_tokens = COUNTER.count(anchor_entry(*pin(old[0])))
    policy = replace(WINDOW, anchor_budget_tokens=entry_tokens * 2 + 1)
    built = build_alone(
        inputs(raw, policy=policy, summary_=summary(old[-1].id), anchors=[pin(m) for m in old[:4]])
    )
    assert built.anchor_ids == (old[0].id, old[1].id)
    assert any(w.startswith("2 pinned message(s) not sent") for w in built.breakdown.warnings)
    capped = build_alone(
        inputs(
            raw,
            policy=replace(WINDOW, max_anchors=1),
            summary_=summary(old[-1].id),
            anchors=[pin(m) for m in old[:4]],
        )
    )
    assert capped.anchor_ids == (old[0].id,)
    assert any("3 pinned message(s) not sent" in w for w in capped.breakdown.warnings)


def test_recall_skips_what_is_sent_and_respects_its_budget() -> None:
    h = History()
    old = [h.add("user", f"old fact {i} " + "alpha " * 30) for i in range(8)]
    old.append(h.add("assistant", "ok"))
    raw = h.turn("recent", "yes")
    policy = replace(WINDOW, recall_max_excerpts=3)
    built = build_alone(
        inputs(
            raw,
            policy=policy,
            summary_=summary(old[-1].id),
            anchors=[pin(old[0])],
            recalled=[old[0], raw[0], old[3], old[3], old[5], old[6], old[7]],
        )
    )
    assert built.recalled_ids == (old[3].id, old[5].id, old[6].id)
    small = replace(WINDOW, recall_budget_tokens=COUNTER.count(anchor_entry(*pin(old[3]))) + 40)
    built = build_alone(inputs(raw, policy=small, summary_=summary(old[-1].id), recalled=old[3:8]))
    assert built.recalled_ids == (old[3].id,)
    assert built.breakdown.sections["recall"] <= small.recall_budget_tokens
    off = build_alone(inputs(raw, policy=replace(WINDOW, recall=False), recalled=old[3:8]))
    assert off.recalled_ids == () and len(off.request["system"]) == 1


def test_huge_recalled_message_is_cut_to_the_budget() -> None:
    h = History()
    huge = h.add("assistant", "important detail " * 2_000)
    raw = h.turn("q", "a")
    built = build_alone(inputs(raw, summary_=summary(huge.id), recalled=[huge]))
    assert built.recalled_ids == (huge.id,)
    assert built.breakdown.sections["recall"] <= WINDOW.recall_budget_tokens
    result = built.request["messages"][-1]["content"][-1]
    assert result["type"] == "search_result" and result["content"][0]["text"].endswith("[…]")


# -- raw message hygiene ----------------------------------------------------------------------


def test_failed_reply_is_skipped_and_user_messages_merge() -> None:
    h = History()
    first = h.turn("hello", "hi")
    asked = h.add("user", "question one")
    failed = h.add("assistant", status="error")
    built = build_alone(inputs([*first, asked, failed], "question two"))
    messages = built.request["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert texts(messages[-1]) == ["question one", "question two"]
    assert failed.id not in built.sent_message_ids


def test_incomplete_reply_is_sent_with_its_partial_text() -> None:
    h = History()
    raw = [h.add("user", "write a poem"), h.add("assistant", "Roses are", status="incomplete")]
    built = build_alone(inputs(raw, "go on"))
    assert texts(built.request["messages"][1]) == ["Roses are"]


def test_retried_reply_replaces_the_cut_off_one() -> None:
    h = History()
    raw = [
        h.add("user", "write a poem"),
        h.add("assistant", "Roses are", status="incomplete"),
        h.add("assistant", "Roses are red."),
    ]
    built = build_alone(inputs(raw, "thanks"))
    assert texts(built.request["messages"][1]) == ["Roses are red."]
    assert raw[1].id not in built.sent_message_ids


def test_thinking_and_empty_text_are_never_sent() -> None:
    h = History()
    reply = h.add(
        "assistant",
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        "",
        "   ",
        "answer",
        token_count=999,
    )
    raw = [h.add("user", "q"), reply]
    raw = [raw[1], raw[0]][::-1]
    built = build_alone(inputs(raw, "next"))
    assert built.request["messages"][1]["content"] == [text("answer")]
    # Modified, so recounted rather than taken from the stored 999.
    assert built.breakdown.sections["recent"] < 999


def test_stored_token_count_is_reused_for_unmodified_messages() -> None:
    h = History()
    raw = [h.add("user", "hello", token_count=1_234), h.add("assistant", "hi", token_count=10)]
    built = build_alone(inputs(raw, "next"))
    assert built.breakdown.sections["recent"] == 1_244


def test_tool_pairs_are_kept_and_results_come_first() -> None:
    h = History()
    raw = [
        h.add("user", "search"),
        h.add("assistant", "let me look", tool_use("t1")),
        h.add("user", tool_result("t1"), "also this"),
        h.add("assistant", "found it"),
    ]
    built = build_alone(inputs(raw, "thanks"))
    messages = built.request["messages"]
    assert messages[1]["content"][1]["type"] == "tool_use"
    assert messages[2]["content"][0] == tool_result("t1")
    # Text typed after the results stays after them.
    built = build_alone(inputs(raw[:2], [text("wait"), tool_result("t1")]))
    last = built.request["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]


def test_orphan_tool_use_at_the_end_becomes_text() -> None:
    h = History()
    raw = [
        h.add("user", "run it"),
        h.add("assistant", tool_use("t9", "shell"), status="incomplete"),
    ]
    built = build_alone(inputs(raw, "what happened?"))
    reply = built.request["messages"][1]["content"]
    assert [b["type"] for b in reply] == ["text"]
    assert "shell" in reply[0]["text"] and "not recorded" in reply[0]["text"]


def test_broken_imported_pairs_become_text() -> None:
    h = History()
    raw = [
        h.add("user", "go"),
        h.add("assistant", tool_use("a"), tool_use("b")),
        h.add("user", tool_result("a"), tool_result("zzz")),
        h.add("assistant", "done"),
    ]
    built = build_alone(inputs(raw, "next"))
    messages = built.request["messages"]
    assert [b["type"] for b in messages[1]["content"]] == ["tool_use", "text"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]
    assert messages[2]["content"][0]["tool_use_id"] == "a"


def test_leading_assistant_gets_a_user_message_first() -> None:
    h = History()
    raw = [h.add("assistant", "welcome back"), *h.turn("hi", "hello")]
    built = build_alone(inputs(raw, "next"))
    messages = built.request["messages"]
    assert messages[0]["role"] == "user"
    assert messages[1]["content"] == [text("welcome back")]


def test_preview_ends_without_trailing_whitespace() -> None:
    h = History()
    raw = [h.add("user", "q"), h.add("assistant", "answer  \n")]
    built = build_alone(inputs(raw, None))
    last = built.request["messages"][-1]
    assert last["role"] == "assistant"
    assert last["content"][-1]["text"] == "answer"


def test_retry_sends_the_stored_question_last() -> None:
    h = History()
    raw = [*h.turn("q1", "a1"), h.add("user", "q2"), h.add("assistant", status="error")]
    built = build_alone(inputs(raw, None))
    assert built.request["messages"][-1]["role"] == "user"
    assert texts(built.request["messages"][-1]) == ["q2"]
    assert built.breakdown.sections["new_message"] == 0


def test_empty_new_message_is_refused() -> None:
    with pytest.raises(ValueError):
        build_alone(inputs([], [text("  ")]))


def test_message_char_limit_cuts_raw_but_not_new_or_pinned() -> None:
    h = History()
    long_a = "a" * 3_000
    raw = [h.add("user", long_a), h.add("assistant", "b" * 2_500), h.add("user", "c" * 2_200)]
    raw.append(h.add("assistant", "short"))
    policy = PRESETS["threshold"]
    built = build_alone(inputs(raw, "d" * 5_000, policy=policy, anchors=[pin(raw[2])]))
    messages = built.request["messages"]
    assert texts(messages[0]) == ["a" * 2_000 + "\n" + CUT_NOTE.format(n=1_000)]
    assert texts(messages[1])[0].endswith(CUT_NOTE.format(n=500))
    assert texts(messages[2])[0] == "c" * 2_200  # pinned: verbatim
    assert texts(messages[-1]) == ["d" * 5_000]
    assert any("2 message(s) cut to 2000" in w for w in built.breakdown.warnings)


def test_message_char_limit_cuts_tool_results_keeping_the_pair() -> None:
    h = History()
    raw = [
        h.add("user", "read the file"),
        h.add("assistant", tool_use("f")),
        h.add("user", tool_result("f", "x" * 5_000)),
        h.add("assistant", "it is long"),
    ]
    built = build_alone(inputs(raw, "ok", policy=PRESETS["threshold"]))
    result = built.request["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "f"
    assert len(result["content"]) < 2_100 and "cut 3000 chars" in result["content"]


# -- single user message (seed 000) ------------------------------------------------------------


def test_single_user_message_format() -> None:
    h = History()
    old = h.turn("old", "older")
    raw = [*h.turn("recent question", "recent answer"), h.add("user", "x" * 2_500)]
    raw.append(h.add("assistant", tool_use("t")))
    raw.append(h.add("user", tool_result("t")))
    raw.append(h.add("assistant", "tool done"))
    policy = replace(PRESETS["threshold"], single_user_message=True)
    built = build_alone(inputs(raw, "current one", policy=policy, summary_=summary(old[-1].id)))
    messages = built.request["messages"]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    body = messages[0]["content"][0]["text"]
    context, recent, current = (
        body.index("[CONVERSATION CONTEXT]"),
        body.index("[RECENT MESSAGES]"),
        body.index("[CURRENT MESSAGE]"),
    )
    assert context < recent < current
    assert "Earlier: they chose SQLite." in body
    assert "USER: recent question\nASSISTANT: recent answer" in body
    assert CUT_NOTE.format(n=500) in body
    assert body.endswith("[CURRENT MESSAGE]\ncurrent one")
    assert built.request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert breakpoints(built.request) == 2
    assert built.sent_message_ids == tuple(m.id for m in raw)


def test_single_user_message_case_a_sends_the_message_as_is() -> None:
    policy = replace(WINDOW, single_user_message=True)
    built = build_alone(inputs([], "just this", policy=policy))
    assert texts(built.request["messages"][0]) == ["just this"]


# -- fitting the window -----------------------------------------------------------------------


def test_oldest_turns_are_dropped_to_fit() -> None:
    h = History()
    raw = [m for i in range(10) for m in h.turn(f"q{i} " + "word " * 200, f"a{i}")]
    per_turn = raw[0].token_count + raw[1].token_count
    usable = per_turn * 4 + 200
    built = build_alone(inputs(raw, "now", window=usable + 1_000, max_output=1_000))
    assert built.fits
    assert built.breakdown.input_tokens <= usable
    dropped = built.dropped_message_ids
    assert dropped == tuple(m.id for m in raw[: len(dropped)])
    assert len(dropped) % 2 == 0 and dropped
    assert set(dropped).isdisjoint(built.sent_message_ids)
    (turns,) = [w for w in built.breakdown.warnings if "oldest turn(s)" in w]
    # What will happen comes first: a one-line warning at 80 columns shows no more.
    assert "will be summarised at the next send" in turns[:60]
    assert built.request["messages"][0]["role"] == "user"


def test_does_not_fit_when_the_new_message_alone_is_too_big() -> None:
    built = build_alone(inputs([], "word " * 5_000, window=3_000, max_output=1_000))
    assert not built.fits
    assert any("does not fit" in w for w in built.breakdown.warnings)
    assert built.request["messages"][-1]["content"][0]["text"].startswith("word")


def test_calibration_counts_when_fitting() -> None:
    h = History()
    raw = [m for i in range(6) for m in h.turn(f"q{i} " + "word " * 200, f"a{i}")]
    base = build_alone(inputs(raw, "now", window=10_000, max_output=1_000))
    assert base.breakdown.input_tokens < 9_000 and not base.dropped_message_ids
    scaled = build_alone(
        inputs(
            raw,
            "now",
            window=base.breakdown.input_tokens + 1_000,
            max_output=1_000,
            calibration=1.5,
        )
    )
    assert scaled.dropped_message_ids
    assert scaled.breakdown.calibrated_tokens <= scaled.breakdown.usable


def test_breakdown_trigger_and_warning_points() -> None:
    built = build_alone(inputs(window=100_000, max_output=20_000))
    assert built.breakdown.usable == 80_000
    assert built.breakdown.trigger_tokens == 60_000
    assert built.breakdown.warn_tokens == 64_000
    tokens = build_alone(inputs(policy=PRESETS["threshold"]))
    fixed = tokens.breakdown.sections["system"]
    assert tokens.breakdown.trigger_tokens == 8_000 + fixed
    assert build_alone(inputs(policy=PRESETS["turns"])).breakdown.trigger_tokens is None
    as_dict = built.breakdown.to_dict()
    sent = {k: v for k, v in built.breakdown.sections.items() if k != "tools"}  # no tools: none
    assert as_dict["sections"] == sent and as_dict["usable"] == 80_000


def test_draft_breakdown_counts_only_the_draft() -> None:
    h = History()
    base = build_alone(inputs(h.turn("q", "a"), None))
    draft = "a draft being typed"
    gauge = draft_breakdown(base, COUNTER.count(draft))
    assert gauge.sections["new_message"] == COUNTER.count(draft) + MESSAGE_OVERHEAD_TOKENS
    full = build_alone(inputs(h.messages, draft))
    assert gauge.sections == full.breakdown.sections
    assert gauge.input_tokens == full.breakdown.input_tokens
    assert draft_breakdown(base, 0).sections["new_message"] == 0
    small = build_alone(inputs([], None, window=1_200, max_output=1_000))
    over = draft_breakdown(small, 500)
    assert over.input_tokens > over.usable
    assert any(w.startswith("the draft ") for w in over.warnings)


# -- properties over random histories ---------------------------------------------------------

WORDS = ["alpha", "beta", "SQL", "port", "5432", "파일", "경로", "def", "x = 1;", "<|endoftext|>"]


@st.composite
def texts_st(draw: st.DrawFn, huge: bool = True) -> str:
    size = draw(st.sampled_from([0, 1, 3, 12, 40] + ([900] if huge else [])))
    words = draw(st.lists(st.sampled_from(WORDS), min_size=size, max_size=size))
    return " ".join(words)


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    h = History(start=draw(st.integers(1, 5)))
    if draw(st.booleans()) and draw(st.booleans()):
        h.add("assistant", draw(texts_st(huge=False)) or "welcome")
    tool_ids = iter(range(10_000))
    for _ in range(draw(st.integers(0, 7))):
        h.add("user", draw(texts_st()))
        for _ in range(draw(st.integers(0, 2))):
            ids = [f"t{next(tool_ids)}" for _ in range(draw(st.integers(1, 2)))]
            lead = [draw(texts_st(huge=False))] if draw(st.booleans()) else []
            h.add("assistant", *lead, *(tool_use(i) for i in ids))
            kind = draw(st.sampled_from(["ok", "ok", "ok", "missing", "wrong", "text"]))
            if kind == "ok":
                h.add("user", *(tool_result(i, draw(texts_st())) for i in ids))
            elif kind == "wrong":
                h.add("user", tool_result("nope"))
            elif kind == "text":
                h.add("user", tool_result(ids[0]), "and more")
        ending = draw(st.sampled_from(["complete", "complete", "incomplete", "error", "none"]))
        if ending == "complete":
            extra: list[ContentBlock] = []
            if draw(st.booleans()):
                extra.append({"type": "thinking", "thinking": "hmm", "signature": "s"})
            h.add("assistant", *extra, draw(texts_st()) or "ok")
        elif ending == "incomplete":
            h.add("assistant", draw(texts_st(huge=False)), status="incomplete")
        elif ending == "error":
            h.add("assistant", status="error")
    return h.messages


@st.composite
def scenarios(draw: st.DrawFn) -> ContextInputs:
    messages = draw(histories())
    cut = draw(st.integers(0, len(messages)))
    covered, raw = messages[:cut], messages[cut:]
    with_summary: bool = draw(st.booleans())
    summary_body: str = draw(texts_st())
    the_summary = (
        summary(covered[-1].id, body=summary_body or "sum") if covered and with_summary else None
    )
    size = len(messages)
    pinned: list[bool] = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    notes: list[str] = draw(st.lists(st.sampled_from(["", "note"]), min_size=size, max_size=size))
    pins = [pin(m, note) for m, keep, note in zip(messages, pinned, notes, strict=True) if keep]
    recalled = draw(st.lists(st.sampled_from(covered), max_size=6)) if covered else []
    preset = draw(st.sampled_from(sorted(PRESETS)))
    policy = replace(
        PRESETS[preset],
        single_user_message=draw(st.booleans()),
        message_char_limit=draw(st.sampled_from([None, 50, 2_000])),
        anchor_budget_tokens=draw(st.sampled_from([0, 60, 4_000])),
        max_anchors=draw(st.sampled_from([None, 1, 5])),
        recall_budget_tokens=draw(st.sampled_from([0, 80, 1_500])),
    )
    new = draw(st.one_of(st.none(), texts_st()))
    new_message = [text(new or "hi")] if new is not None or not raw else None
    window = draw(st.sampled_from([300, 1_000, 3_000, 20_000, 1_000_000]))
    return ContextInputs(
        model="m",
        context_window=window,
        max_output=min(200, window // 4),
        system_prompt=draw(st.sampled_from(["", "Be brief.", "word " * 50])),
        policy=policy,
        summary=the_summary,
        anchors=pins,
        recalled=as_passages(recalled, request_text),
        raw_messages=raw,
        new_message=new_message,
        counter=COUNTER,
        calibration=draw(st.sampled_from([1.0, 0.8, 1.3])),
    )


def _expected_memory_anchors(inp: ContextInputs, built: BuiltRequest) -> list[int]:
    """Independently: pins outside the sent raw window, oldest first, within the budget."""
    kept = {m.id for m in inp.raw_messages} - set(built.dropped_message_ids)
    chosen: list[int] = []
    spent = 0
    for anchor, message in inp.anchors:
        if message.id in kept:
            continue
        entry = anchor_entry(anchor, message)
        if not entry:
            continue
        tokens = COUNTER.count(entry)
        limit = inp.policy.max_anchors
        if (limit is not None and len(chosen) >= limit) or spent + tokens > (
            inp.policy.anchor_budget_tokens
        ):
            break
        chosen.append(message.id)
        spent += tokens
    return chosen


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios())
def test_request_invariants(inp: ContextInputs) -> None:
    built = build_alone(inp)
    request = built.request
    messages = request["messages"]
    breakdown = built.breakdown

    # Determinism.
    again = build_alone(inp)
    assert json.dumps(again.request, sort_keys=True) == json.dumps(request, sort_keys=True)
    assert again.breakdown == breakdown

    # Starts with a user message, roles alternate, nothing empty, no thinking.
    if messages:
        assert messages[0]["role"] == "user"
    for before, after in pairwise(messages):
        assert before["role"] != after["role"]
    for message in messages:
        assert message["content"]
        for block in message["content"]:
            assert block["type"] not in ("thinking", "redacted_thinking")
            if block["type"] == "text":
                assert block["text"].strip()

    # Every tool_use is answered in the next message, every tool_result answers the previous.
    for index, message in enumerate(messages):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result"]
        if message["role"] == "assistant":
            assert not results
            if uses:
                following = messages[index + 1]
                answered = [
                    b["tool_use_id"] for b in following["content"] if b["type"] == "tool_result"
                ]
                assert sorted(uses) == sorted(answered)
        else:
            assert not uses
            if results:
                previous = messages[index - 1]
                assert previous["role"] == "assistant"
                called = [b["id"] for b in previous["content"] if b["type"] == "tool_use"]
                assert sorted(results) == sorted(called)
                kinds = [b["type"] for b in message["content"]]
                assert kinds == sorted(kinds, key=lambda k: k != "tool_result")

    # At most 4 cache breakpoints (we place 2).
    assert breakpoints(request) <= 2

    # Sizes.
    assert set(breakdown.sections) == set(SECTIONS)
    assert breakdown.input_tokens == sum(breakdown.sections.values())
    limit = max(0, inp.context_window - inp.max_output)
    assert breakdown.usable == within_budget(inp.policy, limit)
    if built.fits:
        # Within the model's limit always; within the working budget unless it says why not.
        assert breakdown.input_tokens <= limit
        assert breakdown.calibrated_tokens <= limit
        if breakdown.used > breakdown.usable:
            assert breakdown.warnings
    else:
        # Only the system prompt and the message itself are left.
        for key in ("anchors", "summary", "recall"):
            assert breakdown.sections[key] == 0
        if inp.new_message is not None:
            assert breakdown.sections["recent"] == 0
        assert any("does not fit" in w for w in breakdown.warnings)

    # The new message is always present and last.
    if inp.new_message is not None:
        new_text = inp.new_message[0]["text"]
        last = messages[-1]
        assert last["role"] == "user"
        if inp.policy.single_user_message:
            assert last["content"][-1]["text"].endswith(new_text)
        else:
            # Its own content ends at the breakpoint; recalled excerpts (if any) follow it.
            own = [b for b in last["content"] if "cache_control" in b] or last["content"][-1:]
            assert own[-1]["text"] == new_text
            tail = last["content"][last["content"].index(own[-1]) + 1 :]
            assert all(b.get("type") == "search_result" or "text" in b for b in tail)
            assert bool(tail) == bool(breakdown.sections["recall"])

    # Dropped messages are whole leading turns, never also sent (of the messages a build
    # considers: replies a retry replaced are left out first, core/request/superseded).
    dropped = built.dropped_message_ids
    considered = without_superseded(inp.raw_messages)
    raw_ids = [m.id for m in considered]
    assert list(dropped) == raw_ids[: len(dropped)]
    assert set(dropped).isdisjoint(built.sent_message_ids)
    if dropped:
        assert any("oldest turn(s)" in w for w in breakdown.warnings)
    if 0 < len(dropped) < len(raw_ids):
        following = considered[len(dropped)]
        assert following.role == "user" and not following.has_tool_result
    assert set(built.sent_message_ids) <= set(raw_ids)

    # Pins within the budget are present unless the window itself forced them out.
    shed_pins = any("pinned messages reduced" in w for w in breakdown.warnings)
    shed_summary = any("summary was left out" in w for w in breakdown.warnings)
    if not shed_pins and not shed_summary:
        assert list(built.anchor_ids) == _expected_memory_anchors(inp, built)
    assert set(built.anchor_ids).isdisjoint(built.sent_message_ids)
    assert set(built.recalled_ids).isdisjoint(built.sent_message_ids)
    assert set(built.recalled_ids).isdisjoint(built.anchor_ids)
    assert len(built.recalled_ids) <= inp.policy.recall_max_excerpts
    if not inp.policy.single_user_message:
        limit = max(0, inp.policy.recall_budget_tokens)
        if inp.policy.recall_fill:  # recall may take what the other parts leave
            limit = max(limit, inp.policy.recall_max_tokens)
        assert breakdown.sections["recall"] <= limit


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_big_windows_never_drop(inp: ContextInputs) -> None:
    roomy = replace(inp, context_window=10_000_000, max_output=8_000)
    built = build_alone(roomy)
    assert built.fits
    assert built.dropped_message_ids == ()
    assert list(built.anchor_ids) == _expected_memory_anchors(roomy, built)
    assert not any("usable window" in w for w in built.breakdown.warnings)


def test_pin_in_a_dropped_turn_moves_to_the_memory_block() -> None:
    h = History()
    raw = [m for i in range(8) for m in h.turn(f"q{i} " + "word " * 200, f"a{i}")]
    pinned = raw[0]
    per_turn = raw[0].token_count + raw[1].token_count
    usable = per_turn * 4
    built = build_alone(
        inputs(raw, "now", window=usable + 1_000, max_output=1_000, anchors=[pin(pinned, "keep")])
    )
    assert built.fits and pinned.id in built.dropped_message_ids
    assert built.anchor_ids == (pinned.id,)
    assert "keep" in built.request["system"][1]["text"]
    assert built.breakdown.input_tokens <= built.breakdown.usable
