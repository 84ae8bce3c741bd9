"""Builds that reuse what earlier builds prepared send exactly what a fresh build sends.

The request builder keeps a :class:`Timeline` per conversation and the engine a
:class:`TailCache` (the raw tail read between builds). Over random sequences of appends,
replaced messages (a streaming reply completing), the front moving both ways, pins, policy
and window changes, summaries and previews, the kept build must equal a build that prepares
everything anew, byte for byte.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.raw_tail import raw_tail
from tui_chat.core.attachments import ATTACHMENT_TYPE
from tui_chat.core.models import Anchor, ContentBlock, Message, MessageStatus, Role, Summary
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.core.request import BuiltRequest, ContextInputs, build_request, fresh_timeline
from tui_chat.core.request.recall import as_passages
from tui_chat.core.request.render import request_text
from tui_chat.core.request.superseded import without_superseded
from tui_chat.core.request.timeline import Timeline, prepared
from tui_chat.core.tokens import get_counter
from tui_chat.engine.build import TailCache
from tui_chat.engine.build.assemble import assemble
from tui_chat.llm.models import model_info
from tui_chat.store.repository import Store

COUNTER = get_counter()
WINDOW = PRESETS["window"]

KINDS = (
    "ask",
    "answer",
    "call",
    "result",
    "result_text",
    "failed",
    "cut_off",
    "streaming",
    "blank",
    "long",
    "file",
)


def content_of(kind: str, n: int) -> tuple[Role, list[ContentBlock], MessageStatus]:
    """A message of one kind; ``n`` numbers its tool ids and words."""
    words = f"word{n} " * (1 + n % 7)
    if kind == "ask":
        return "user", [{"type": "text", "text": f"question {words}"}], "complete"
    if kind == "call":
        use = {"type": "tool_use", "id": f"t{n // 3}", "name": "s", "input": {}}
        return "assistant", [{"type": "text", "text": "look"}, use], "complete"
    if kind == "result":
        return (
            "user",
            [{"type": "tool_result", "tool_use_id": f"t{n // 3}", "content": "ok"}],
            ("complete"),
        )
    if kind == "result_text":
        blocks: list[ContentBlock] = [
            {"type": "tool_result", "tool_use_id": f"t{n // 3}", "content": "ok"},
            {"type": "text", "text": "and more"},
        ]
        return "user", blocks, "complete"
    if kind == "failed":
        return "assistant", [], "error"
    if kind == "cut_off":
        return "assistant", [{"type": "text", "text": f"partial {words}"}], "incomplete"
    if kind == "streaming":
        return "assistant", [{"type": "text", "text": f"so far {words}"}], "streaming"
    if kind == "blank":
        return "assistant", [{"type": "text", "text": "   "}], "complete"
    if kind == "long":
        return "assistant", [{"type": "text", "text": "long " * 60}], "complete"
    if kind == "file":
        ref = {"type": ATTACHMENT_TYPE, "kind": "text", "name": "a.txt", "sha256": f"{n:064x}"}
        return "user", [ref, {"type": "text", "text": "see file"}], "complete"
    return "assistant", [{"type": "text", "text": f"answer {words} "}], "complete"


def make(message_id: int, kind: str) -> Message:
    role, content, status = content_of(kind, message_id)
    return Message(
        id=message_id,
        conversation_id="c1",
        role=role,
        content=content,
        text=" ".join(str(b.get("text", "")) for b in content),
        turn=0,
        token_count=COUNTER.count_message(role, content) if content else 0,
        status=status,
        created_at="2026-01-01T00:00:00+00:00",
    )


def same(kept: BuiltRequest, fresh: BuiltRequest) -> None:
    assert json.dumps(kept.request) == json.dumps(fresh.request)
    assert kept == fresh


OPS = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(KINDS)),
    st.tuples(st.just("front"), st.integers(1, 6)),
    st.tuples(st.just("back"), st.integers(1, 6)),
    st.tuples(st.just("end"), st.integers(0, 3)),
    st.tuples(st.just("replace"), st.integers(0, 1_000)),
    st.tuples(st.just("pin"), st.integers(0, 1_000)),
    st.tuples(st.just("limit"), st.sampled_from([None, 30, 120])),
    st.tuples(st.just("window"), st.sampled_from([1_400, 2_500, 200_000])),
    st.tuples(st.just("new"), st.sampled_from([None, "next?", "file"])),
    st.tuples(st.just("single"), st.booleans()),
)


class Scenario:
    """A history, the window of it sent, and the build settings, changed op by op."""

    def __init__(self) -> None:
        self.history: list[Message] = []
        self.low = 0
        self.cut_end = 0
        """Newest messages not sent (the end of the list moving back, e.g. a retry)."""
        self.pins: set[int] = set()
        self.policy: Policy = WINDOW
        self.window = 200_000
        self.new: str | None = "next?"

    def apply(self, op: tuple[str, Any]) -> None:
        name, value = op
        if name == "add":
            self.history.append(make(len(self.history) + 1, value))
        elif name == "front":
            self.low = min(self.low + value, len(self.history))
        elif name == "back":
            self.low = max(0, self.low - value)
        elif name == "end":
            self.cut_end = value
        elif name == "replace" and self.history:
            index = value % len(self.history)
            old = self.history[index]
            status: MessageStatus = "complete" if old.status != "complete" else "incomplete"
            self.history[index] = replace(old, status=status, content=[*old.content])
        elif name == "pin" and self.history:
            self.pins ^= {self.history[value % len(self.history)].id}
        elif name == "limit":
            self.policy = replace(self.policy, message_char_limit=value)
        elif name == "window":
            self.window = value
        elif name == "new":
            self.new = value
        elif name == "single":
            self.policy = replace(self.policy, single_user_message=value)

    def build(self, timeline: Timeline | None) -> BuiltRequest:
        """A fresh build (``None``), or one with the kept ``timeline`` as the engine makes it:
        replies a retry replaced left out of the messages, then the timeline aligned."""
        inputs = self.inputs()
        if timeline is None:
            return build_request(inputs, fresh_timeline(inputs))
        inputs = replace(inputs, raw_messages=without_superseded(inputs.raw_messages))
        built = build_request(inputs, prepared(inputs, timeline))
        timeline.keep(built.layout)
        return built

    def inputs(self) -> ContextInputs:
        pinned = [m for m in self.history if m.id in self.pins]
        anchors = [(Anchor(m.id, "c1", "", "2026-01-02T00:00:00+00:00"), m) for m in pinned]
        new: list[ContentBlock] | None = None
        if self.new == "file":
            new = [
                {"type": ATTACHMENT_TYPE, "kind": "text", "name": "b.txt", "sha256": "f" * 64},
                {"type": "text", "text": "about this"},
            ]
        elif self.new is not None:
            new = [{"type": "text", "text": self.new}]
        return ContextInputs(
            model="claude-haiku-4-5",
            context_window=self.window,
            max_output=1_000,
            system_prompt="You are helpful.",
            policy=self.policy,
            summary=None,
            anchors=anchors,
            recalled=as_passages(self.history[: self.low][-3:], request_text),
            raw_messages=self.history[self.low : len(self.history) - self.cut_end],
            new_message=new,
            counter=COUNTER,
        )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(OPS, min_size=20, max_size=80),
    grid=st.sampled_from([1, 2, 3, 8]),
)
def test_kept_timeline_builds_what_a_fresh_build_does(ops: list[Any], grid: int) -> None:
    scenario = Scenario()
    timeline = Timeline(grid)
    for op in ops:
        scenario.apply(op)
        try:
            fresh = scenario.build(None)
        except ValueError:
            with pytest.raises(ValueError):
                scenario.build(timeline)
            continue
        same(scenario.build(timeline), fresh)


def test_a_kept_timeline_prepares_only_new_messages() -> None:
    history = [make(i, "ask" if i % 2 else "answer") for i in range(1, 200)]
    timeline = Timeline(8)
    scenario = Scenario()
    scenario.history = history
    scenario.build(timeline)
    before = dict(zip(timeline.ids, timeline.pieces, strict=True))
    runs = dict(timeline.runs)
    assert runs, "runs between grid lines are kept"
    scenario.history = [*history[10:], make(200, "ask"), make(201, "answer")]
    scenario.low = 0
    same(scenario.build(timeline), scenario.build(None))
    # Messages seen before keep their prepared piece (the same object); runs past the front
    # that did not change are the same objects too.
    for message_id, piece in zip(timeline.ids, timeline.pieces, strict=True):
        if message_id in before and message_id < 198:
            assert piece is before[message_id]
    assert any(timeline.runs.get(span) is run for span, run in runs.items())


def test_a_build_writes_nothing_to_the_timeline_it_reads() -> None:
    """The builder is pure: what it laid out comes back as its layout, and the timeline
    changes only when its keeper hands that back (before, each build wrote its runs and
    chains into the timeline it was given)."""
    history = [make(i, "ask" if i % 2 else "answer") for i in range(1, 120)]
    scenario = Scenario()
    scenario.history = history
    inputs = scenario.inputs()
    timeline = prepared(inputs, Timeline(8))
    runs, chains, pieces = dict(timeline.runs), list(timeline.chains), list(timeline.pieces)
    first = build_request(inputs, timeline)
    assert (timeline.runs, timeline.chains, timeline.pieces) == (runs, chains, pieces)
    assert first.layout.runs and first.layout.chains, "this build laid runs out"
    assert build_request(inputs, timeline).request == first.request  # the same, again
    timeline.keep(first.layout)
    assert timeline.runs == first.layout.runs
    again = build_request(inputs, timeline)
    assert again.request == first.request
    assert not again.layout.runs  # every run came from the timeline


def test_a_reply_no_longer_followed_by_a_retry_is_sent_again() -> None:
    scenario = Scenario()
    for kind in ("ask", "answer", "ask", "cut_off", "answer"):
        scenario.apply(("add", kind))
    timeline = Timeline(2)
    kept = scenario.build(timeline)
    assert 4 not in kept.sent_message_ids  # replaced by the retry after it
    scenario.apply(("end", 1))
    kept = scenario.build(timeline)
    same(kept, scenario.build(None))
    assert kept.sent_message_ids[-1] == 4


def test_a_replaced_message_is_prepared_again() -> None:
    scenario = Scenario()
    for kind in ("ask", "answer", "ask", "streaming"):
        scenario.apply(("add", kind))
    timeline = Timeline(2)
    scenario.build(timeline)
    scenario.history[-1] = replace(
        scenario.history[-1], status="complete", content=[{"type": "text", "text": "done"}]
    )
    kept = scenario.build(timeline)
    same(kept, scenario.build(None))
    assert kept.request["messages"][-2]["content"][0]["text"] == "done"


def test_a_pin_or_a_new_limit_prepares_everything_again() -> None:
    scenario = Scenario()
    scenario.history = [make(i, "long" if i % 2 == 0 else "ask") for i in range(1, 40)]
    timeline = Timeline(4)
    scenario.build(timeline)
    first = list(timeline.pieces)
    scenario.pins = {scenario.history[3].id}
    same(scenario.build(timeline), scenario.build(None))
    assert all(a is not b for a, b in zip(first, timeline.pieces, strict=True) if a)
    scenario.policy = replace(scenario.policy, message_char_limit=25)
    kept = scenario.build(timeline)
    same(kept, scenario.build(None))
    assert any("cut to 25 characters" in w for w in kept.breakdown.warnings)


# -- the engine: the kept raw tail ---------------------------------------------------------


async def _add(store: Store, cid: str, kind: str, n: int) -> Message:
    role, content, status = content_of(kind, n)
    return await store.messages.add(
        cid,
        role=role,
        content=content,
        text=" ".join(str(b.get("text", "")) for b in content),
        token_count=COUNTER.count_message(role, content) if content else 0,
        status=status,
    )


ENGINE_OPS = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(KINDS)),
    st.tuples(st.just("add"), st.sampled_from(["streaming", "ask", "answer"])),
    st.tuples(st.just("finish"), st.sampled_from(["complete", "incomplete", "error"])),
    st.tuples(st.just("pin"), st.integers(0, 1_000)),
    st.tuples(st.just("calibration"), st.sampled_from([0.5, 0.8, 1.0, 1.3])),
    st.tuples(st.just("window"), st.sampled_from([1_200, 1_800, 3_000, 50_000])),
    st.tuples(st.just("limit"), st.sampled_from([None, 40])),
    st.tuples(st.just("summary"), st.integers(0, 1_000)),
    st.tuples(st.just("draft"), st.sampled_from([None, "and now?"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(ENGINE_OPS, min_size=15, max_size=40))
def test_kept_tail_builds_what_a_fresh_build_does(tmp_path_factory: Any, ops: list[Any]) -> None:
    asyncio.run(_engine_scenario(tmp_path_factory.mktemp("reuse") / "t.db", ops))


async def test_a_reply_that_completes_is_read_again(tmp_path: Path) -> None:
    ops = [("add", "streaming"), ("finish", "complete"), ("add", "ask"), ("finish", "error")]
    await _engine_scenario(tmp_path / "t.db", ops)


async def _engine_scenario(path: Path, ops: list[Any]) -> None:
    store = await Store.open(path)
    try:
        conversation = await store.conversations.create(title="t", model="claude-haiku-4-5")
        cid = conversation.id
        for n in range(12):
            await _add(store, cid, "ask" if n % 2 == 0 else "answer", n)
        cache, tails = TailCache(), TailCache()
        policy = replace(WINDOW, recall=True)
        calibration, window, coverage, draft = 1.0, 50_000, 0, "first?"
        for op in ops:
            name, value = op
            ids = await store.messages.ids(cid)
            if name == "add":
                await _add(store, cid, value, len(ids))
            elif name == "finish":
                history = await store.messages.history(cid)
                streaming = [m.id for m in history if m.status == "streaming"]
                if streaming:
                    await store.messages.update(
                        streaming[0], status=value, text="done", token_count=9
                    )
            elif name == "pin" and ids:
                target = ids[value % len(ids)]
                if not await store.anchors.unpin(target):
                    await store.anchors.pin(target)
            elif name == "calibration":
                calibration = value
            elif name == "window":
                window = value
            elif name == "limit":
                policy = replace(policy, message_char_limit=value)
            elif name == "summary":
                coverage = ids[value % len(ids)] if value % 3 else 0
            elif name == "draft":
                draft = value
            summary = None
            if coverage:
                summary = Summary(
                    id=1,
                    conversation_id=cid,
                    version=1,
                    parent_id=None,
                    strategy="running",
                    text="Earlier: word1 and word2.",
                    segments=[],
                    covers_to_message_id=coverage,
                    covered_messages=1,
                    source_tokens=100,
                    summary_tokens=9,
                    trigger="auto",
                    summarizer="extractive",
                    status="completed",
                    created_at="2026-01-01T00:00:00+00:00",
                )
            info = replace(model_info("claude-haiku-4-5"), context_window=window)
            common: dict[str, Any] = {
                "policy": policy,
                "info": info,
                "counter": COUNTER,
                "new_text": draft,
                "summary": summary,
                "calibration": calibration,
            }
            fresh = await assemble(store, conversation, **common)
            kept = await assemble(store, conversation, cache=cache, **common)
            same(kept, fresh)
            # The tail alone, its budget moving both ways.
            budget = int(window * calibration) // 2
            assert await tails.raw_tail(store, cid, coverage, budget, None) == (
                await raw_tail(store, cid, coverage, budget)
            )
    finally:
        await store.close()
