"""A reply's end, as the engine reports it: one event that says how it ended (the TUI's one
end-of-reply route, tui/screens/reply_flow.py), and a send whose bookkeeping a late cancel
never cuts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tui_chat.engine.events import EngineEvent, ReplyDelta, ReplyFinished
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


async def test_the_finished_event_says_whether_the_reply_was_cancelled(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    finished: list[ReplyFinished] = []
    arrived, ended = asyncio.Event(), asyncio.Event()

    def on_event(event: EngineEvent) -> None:
        if isinstance(event, ReplyFinished):
            finished.append(event)
            ended.set()
        elif isinstance(event, ReplyDelta):
            arrived.set()

    await service.send(conv.id, "a short one", on_event)
    assert [(f.message.status, f.cancelled) for f in finished] == [("complete", False)]
    arrived.clear()
    ended.clear()

    fake_anthropic.push_hang(600, after_chunks=1)  # until the client goes away
    send = asyncio.create_task(service.send(conv.id, "a long one", on_event))
    await asyncio.wait_for(arrived.wait(), 60)
    send.cancel()
    with pytest.raises(asyncio.CancelledError):
        await send
    await asyncio.wait_for(ended.wait(), 60)  # what arrived is stored after the cancel
    last = finished[-1]
    assert last.cancelled and last.message.status == "incomplete"
    assert last.error is not None and "cancelled" in last.error.message


async def test_a_cancel_once_the_reply_is_stored_leaves_its_bookkeeping_whole(
    make_service: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sender saw the reply end; a cancel that comes while the send still calibrates (a
    busy database) is too late to cut it: the calibration is written and nothing is marked
    cancelled."""
    service = await make_service()
    conv = await service.conversations.new()
    store = engine_of(service).store
    set_calibration = store.set_calibration
    release, calibrating, over = asyncio.Event(), asyncio.Event(), asyncio.Event()
    written: list[bool] = []

    async def held(*args: Any) -> None:
        calibrating.set()
        try:
            await release.wait()
            await set_calibration(*args)
            written.append(True)
        finally:
            over.set()

    monkeypatch.setattr(store, "set_calibration", held)
    finished: list[ReplyFinished] = []
    on_event: Callable[[EngineEvent], None] = lambda e: (  # noqa: E731
        finished.append(e) if isinstance(e, ReplyFinished) else None
    )
    send = asyncio.create_task(service.send(conv.id, "hello", on_event))
    await asyncio.wait_for(calibrating.wait(), 60)
    assert [f.message.status for f in finished] == ["complete"]
    send.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await send
    await asyncio.wait_for(over.wait(), 60)  # the shielded bookkeeping goes on alone
    assert written == [True]
    assert not finished[-1].cancelled
    reply = (await service.messages.page(conv.id))[-1]
    assert reply.status == "complete"
