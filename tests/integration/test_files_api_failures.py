"""Uploads that fail, through the real SDK against the local server (``tests/fakes/
fake_files.py``): an upload that hangs gives up after its timeout and is announced while it
runs (``FileUploading``), the file then sent inline, and ``escape`` (a cancelled send) ends it
at once; a gateway answering 400 to uploads is remembered per endpoint with the reason, asked
no more, listed by ``doctor`` and asked again after ``doctor --repair``; a 404 is remembered as
"no Files API at this endpoint", not the Messages API's "model not found".
"""

from __future__ import annotations

import asyncio
import base64
import threading
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration import test_files_api
from tests.integration.test_files_api import Chat, media, uploads
from tests.seam import engine_of
from tui_chat.engine.events import FileUploading
from tui_chat.engine.files import read_attachment
from tui_chat.llm import files

chat = test_files_api.chat  # the fixture: a conversation and a picture to attach


def _inline(fake: FakeAnthropic, sent: Chat) -> bool:
    source = media(fake.bodies[-1])[0]["source"]
    return source["type"] == "base64" and base64.b64decode(source["data"]) == (
        sent.image.read_bytes()
    )


async def test_a_hanging_upload_times_out_is_announced_and_goes_inline(
    chat: Chat,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(files, "UPLOAD_TIMEOUT", 1.0)
    fake_anthropic.files.hold_uploads = threading.Event()
    seen: list[Any] = []
    try:
        outcome = await asyncio.wait_for(
            chat.service.send(
                chat.conv, "look", attachments=[read_attachment(chat.image)], on_event=seen.append
            ),
            120,
        )
    finally:
        fake_anthropic.files.hold_uploads.set()
    assert outcome.error is None, outcome.error
    notes = [e for e in seen if isinstance(e, FileUploading)]
    assert notes[0].problem is None and notes[0].name == "plot.png"
    assert notes[-1].problem is not None and "sent inline" in notes[-1].problem
    assert _inline(fake_anthropic, chat)
    # A timeout is this time's trouble, not the endpoint's: the next send uploads again.
    assert await engine_of(chat.service).store.file_ids.supported(fake_anthropic.base_url) is None


async def test_a_hanging_upload_is_cancelled_with_the_send(
    chat: Chat,
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.files.hold_uploads = threading.Event()
    started = asyncio.Event()

    def on_event(event: Any) -> None:
        if isinstance(event, FileUploading) and event.problem is None:
            started.set()

    send = asyncio.ensure_future(
        chat.service.send(
            chat.conv, "look", attachments=[read_attachment(chat.image)], on_event=on_event
        )
    )
    try:
        await asyncio.wait_for(started.wait(), 60)
        send.cancel()  # what escape does to the reply worker
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(send, 30)
    finally:
        fake_anthropic.files.hold_uploads.set()
    history = await chat.service.messages.history(chat.conv)
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[-1].status in ("incomplete", "error")  # stored as cut, never streaming
    assert fake_anthropic.message_requests == []  # nothing was asked of the model


@pytest.mark.parametrize(
    ("status", "reason"),
    [(400, "refused an upload (HTTP 400"), (404, "no Files API at this endpoint (HTTP 404)")],
)
async def test_a_refusing_endpoint_is_remembered_with_the_reason_and_asked_again_on_repair(
    chat: Chat,
    fake_anthropic: FakeAnthropic,
    status: int,
    reason: str,
) -> None:
    fake_anthropic.files.refuse_uploads = status
    await chat.look()
    await chat.look("and again")
    assert len(uploads(fake_anthropic)) == 1  # asked once, not at every turn
    assert _inline(fake_anthropic, chat)
    doctor = await chat.service.maintenance.doctor()
    assert reason in str(doctor["files_api"]) and "model not found" not in str(doctor)
    assert fake_anthropic.base_url in str(doctor["files_api"])
    fake_anthropic.files.refuse_uploads = None  # the gateway was fixed
    await chat.service.maintenance.repair()
    assert "files_api" not in await chat.service.maintenance.doctor()
    await chat.look("once more")
    assert len(uploads(fake_anthropic)) == 2
    assert media(fake_anthropic.bodies[-1])[0]["source"]["type"] == "file"
