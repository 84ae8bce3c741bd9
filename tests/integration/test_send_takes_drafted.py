"""A send takes the request built for its draft (the gauge's full count, a preview) when
nothing but its own message was written since and every input is the same: that request is
built once, and it is exactly what a fresh build of the stored prompt makes.

Each case builds the draft's request, stores the prompt as a send does, builds the send's
request through the kept build state and again through a fresh one (nothing kept), and
compares the two byte for byte; the builder's runs are counted, so a case says whether the
send took the draft's request (no run) or built its own (one). A long message's send builds
it once too: the size check's build before it is stored is the request sent.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks.coding import generate
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import Engine, TestClock, open_engine
from tui_chat.config import Config
from tui_chat.core.models import ContentBlock
from tui_chat.core.request import BuiltRequest
from tui_chat.engine.build import assemble as assembly
from tui_chat.engine.build.requests import Requests
from tui_chat.engine.send.session import LARGE_MESSAGE_TOKENS
from tui_chat.engine.service import CompactionError

Setup = Callable[[Engine, str], Awaitable[None]]


def canonical(built: BuiltRequest) -> str:
    """The request and its breakdown as canonical JSON (what the recorded requests hash)."""
    data = {"request": built.request, "breakdown": built.breakdown.to_dict()}
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


async def chat(engine: Engine, preset: str, turns: int, fold: bool) -> str:
    """A conversation of the coding session's first ``turns`` turns, folded when ``fold``."""
    service = engine.service
    conversation = await service.conversations.new("drafted", system="You are a coder.")
    await service.conversations.set_setting(conversation.id, "preset", preset)
    await service.conversations.set_setting(conversation.id, "summarizer", "extractive")
    for role, text, created_at in generate().messages[: 2 * turns]:
        content: list[ContentBlock] = [{"type": "text", "text": text}]
        await engine.store.messages.add(
            conversation.id,
            role="user" if role == "user" else "assistant",
            content=content,
            text=text,
            token_count=engine.counter.count_message("user", content),
            created_at=created_at,
        )
    if fold:
        with contextlib.suppress(CompactionError):
            await service.summaries.compact(conversation.id)
        assert await engine.store.summaries.active(conversation.id) is not None
    return conversation.id


async def store_prompt(engine: Engine, conversation_id: str, text: str) -> None:
    """Store ``text`` as a send stores the prompt (the draft cleared with it)."""
    content: list[ContentBlock] = [{"type": "text", "text": text}]
    await engine.store.messages.add(
        conversation_id,
        role="user",
        content=content,
        text=text,
        token_count=engine.counter.count_message("user", content),
        clear_draft=True,
    )


async def nothing(engine: Engine, conversation_id: str) -> None:
    del engine, conversation_id


async def pin_one(engine: Engine, conversation_id: str) -> None:
    first = (await engine.store.messages.history(conversation_id, limit=1))[0]
    await engine.service.messages.pin(first.id, "kept")


async def fail_prompt(engine: Engine, conversation_id: str) -> None:
    """A prompt whose reply failed before any text (left out, and warned of)."""
    await store_prompt(engine, conversation_id, FAILED)
    await engine.store.messages.add(
        conversation_id,
        role="assistant",
        content=[],
        text="",
        token_count=0,
        status="error",
        stop_reason="error:overloaded",
        error="overloaded — retry",
    )


FAILED = "Which index did we pick for the sessions table?"
QUESTION = "Why did we choose that retry policy for the uploads?"
PERIOD = "What did we decide yesterday about the retry policy for the uploads?"

CASES: dict[str, tuple[str, int, bool, Setup, Setup, str, str, bool]] = {
    # name: preset, turns, folded, before the draft, between it and the send, draft, sent,
    # whether the send takes the draft's request
    "short chat": ("adaptive", 4, False, nothing, nothing, QUESTION, QUESTION, True),
    "folded, with recall": ("adaptive", 40, True, nothing, nothing, QUESTION, QUESTION, True),
    "folded, seed preset": ("hybrid", 40, True, nothing, nothing, QUESTION, QUESTION, True),
    "pinned in between": ("adaptive", 40, True, nothing, pin_one, QUESTION, QUESTION, False),
    "another text sent": ("adaptive", 40, True, nothing, nothing, QUESTION, FAILED, False),
    "a period named": (
        "adaptive",
        40,
        True,
        nothing,
        nothing,
        PERIOD,
        PERIOD,
        False,
    ),
    "a failed prompt sent again": (
        "adaptive",
        4,
        False,
        fail_prompt,
        nothing,
        FAILED,
        FAILED,
        False,
    ),
    "a failed prompt, another": (
        "adaptive",
        4,
        False,
        fail_prompt,
        nothing,
        QUESTION,
        QUESTION,
        True,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_a_send_takes_the_request_built_for_its_draft_only_when_it_is_the_same(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset, turns, fold, before, between, draft, sent, taken = CASES[name]
    db = tmp_path / "drafted.db"
    # Row stamps in 2024: "yesterday" of the stored prompt is not yesterday of today's draft.
    clock = TestClock(start=datetime(2024, 3, 5, 9, 0, tzinfo=UTC))
    engine = await open_engine(Config(db_path=db, api_key=None), db, clock=clock)
    try:
        cid = await chat(engine, preset, turns, fold)
        await before(engine, cid)
        requests = engine.parts.requests
        previewed = await requests.context(cid, draft)  # as the gauge's full count builds it
        await between(engine, cid)
        await store_prompt(engine, cid, sent)
        runs: list[object] = []
        build = assembly.build_request

        def counted(*args: Any) -> Any:
            runs.append(args)
            return build(*args)

        monkeypatch.setattr(assembly, "build_request", counted)
        conversation = await engine.service.conversations.get(cid)
        got = await requests.build(conversation)  # what the send sends
        assert len(runs) == (0 if taken else 1)
        fresh = await Requests(engine.parts.context).build(conversation)  # nothing kept
        assert canonical(got) == canonical(fresh)
        assert got == fresh  # the ids sent, recalled, dropped and pinned too
        if taken:
            assert got.request == previewed.request
        if fold and sent == draft:
            assert got.recalled_ids  # recall's passages are part of what is compared
    finally:
        await engine.service.close()


async def test_a_long_message_is_built_once_by_its_send(
    make_engine: Callable[..., Awaitable[Engine]],
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message long enough to be checked against the window before it is stored: the
    check's build is the request sent."""
    engine = await make_engine()
    service = engine.service
    conversation = await service.conversations.new("long")
    text = " ".join(f"word{n}" for n in range(3_000))
    assert engine.counter.count(text) > LARGE_MESSAGE_TOKENS
    fake_anthropic.push_reply("Read it.")
    with_text: list[BuiltRequest] = []
    build = assembly.build_request

    def counted(*args: Any) -> BuiltRequest:
        built = build(*args)
        last = built.request["messages"][-1] if built.request["messages"] else {}
        if any(block.get("text") == text for block in last.get("content", [])):
            with_text.append(built)
        return built

    monkeypatch.setattr(assembly, "build_request", counted)
    await service.send(conversation.id, text)
    assert len(with_text) == 1
    assert fake_anthropic.last.body["messages"] == with_text[0].request["messages"]
