"""The chat screen is told what to show; it does not read it back after each reply.

A send builds the request it sends once and the next request once (the gauge's, shared with
the compaction check); the composer clearing as the prompt goes out builds no third, and a
prompt sent after the gauge counted it in full (a pause in typing) is sent as the gauge built
it, not built again. The reply's end carries
the conversation's cost and the breakdown of the request it answered, so the screen reads
neither back; the after-reply refresh is one view call, with neither the timeline nor the
pause read again (compaction changes those, with its own events).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.core.request import BuiltRequest
from tui_chat.engine import events
from tui_chat.engine.build import assemble as assembly
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.composer import Composer


def counting(target: Any, name: str, calls: list[str]) -> None:
    """Wrap ``target.name`` (an async method) so each call is recorded in ``calls``."""
    method: Callable[..., Awaitable[Any]] = getattr(target, name)

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return await method(*args, **kwargs)

    setattr(target, name, counted)


def counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[BuiltRequest]:
    """Record every run of the request builder (what a request build costs: recall's
    passages chosen, every part counted), in order."""
    runs: list[BuiltRequest] = []
    build = assembly.build_request

    def counted(*args: Any) -> BuiltRequest:
        runs.append(build(*args))
        return runs[-1]

    monkeypatch.setattr(assembly, "build_request", counted)
    return runs


def with_prompt(built: BuiltRequest, prompt: str) -> bool:
    """Whether ``built`` ends with ``prompt`` as its new message (a send's or a draft's)."""
    last = built.request["messages"][-1]
    return last["role"] == "user" and any(b.get("text") == prompt for b in last["content"])


async def outside_looked(pilot: Any) -> None:
    """Take the outside watch's first look, which says "changed" by design (what was read
    before it may be out of date) and so refreshes everything once; then wait until no
    refresh of it is running, so what is counted after is the send's or the compaction's own."""
    await pilot.app.service.outside.changed()
    await until(
        pilot,
        lambda: not any(w.group == "outside" and not w.is_finished for w in pilot.app.workers),
    )


async def test_a_send_builds_its_request_once_and_the_next_once(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_anthropic.push_reply("Hello there.")
    conversation = await keyed_service.conversations.new("counted")
    requests = engine_of(keyed_service).parts.requests
    async with make_app(keyed_service, conversation.id).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        await outside_looked(pilot)
        builds: list[str] = []
        counting(requests, "build_with", builds)
        runs = counting_builds(monkeypatch)
        service = pilot.app.service
        pulls: list[str] = []
        counting(service.costs, "of", pulls)
        counting(service.summaries, "versions", pulls)
        counting(service.summaries, "paused", pulls)
        composer = screen.query_one(Composer)
        composer.load_text("hi")
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.chat.views) == 2 and not pilot.app.replying)
        await until(pilot, lambda: screen.cost > 0)  # carried by the reply's end
        await settle(pilot)
        await pilot.pause()
        await settle(pilot)
        assert builds == ["build_with", "build_with"]  # the send's, then the next request's
        assert [with_prompt(run, "hi") for run in runs] == [True, False]
        assert pulls == []  # cost, timeline and pause: pushed, never read back
        assert screen.breakdown is not None
        assert screen.breakdown.sections.get("recent", 0) > 0  # the reply is counted in it
        # What the gauge shows is the next request as built for the store as it is now.
        assert screen.breakdown == await service.requests.gauge(conversation.id)


async def test_a_prompt_the_gauge_counted_in_full_is_sent_as_built(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_anthropic.push_reply("Hello there.")
    conversation = await keyed_service.conversations.new("counted")
    async with make_app(keyed_service, conversation.id).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        await outside_looked(pilot)
        runs = counting_builds(monkeypatch)
        screen.query_one(Composer).load_text("hi")
        # After a pause in typing the gauge counts the whole request, recall and all.
        await until(pilot, lambda: len(runs) == 1)
        await settle(pilot)
        assert with_prompt(runs[0], "hi")
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.chat.views) == 2 and not pilot.app.replying)
        await settle(pilot)
        await pilot.pause()
        await settle(pilot)
        # The draft's request was sent as the gauge built it; then the next one was built.
        assert [with_prompt(run, "hi") for run in runs] == [True, False]
        sent = fake_anthropic.last.body
        assert sent["messages"] == runs[0].request["messages"]
        assert sent.get("system") == runs[0].request.get("system")
        assert screen.breakdown == await keyed_service.requests.gauge(conversation.id)


async def test_a_finished_compaction_carries_the_versions_the_timeline_shows(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path, summaries=False)
    finished: list[events.CompactionFinished] = []
    reads: list[str] = []

    def seen(event: object) -> None:
        if isinstance(event, events.CompactionStarted):
            reads.clear()  # the compact's preview read before it: counted from its start on
        elif isinstance(event, events.CompactionFinished):
            finished.append(event)

    service.subscribe(seen)
    async with make_app(service, conversation.id).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        await outside_looked(pilot)
        counting(service.conversations, "resolve", reads)
        counting(service.summaries, "versions", reads)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: bool(finished))
        await settle(pilot)
        event = finished[0]
        assert event.versions is not None and [s.version for s in event.versions] == [1]
        assert event.active_summary_id == event.summary.id
        assert screen.versions.summaries == event.versions  # shown as the event carried them
        assert screen.versions.active_id == event.summary.id
        assert reads == ["versions"]  # the engine's, for the event: the screen read none back
