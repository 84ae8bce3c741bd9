"""Attachments through the Files API, through the real SDK against the local
server (``tests/fakes/fake_files.py``): uploaded once by content hash, named by ``file_id``; inline
base64 on an endpoint without the Files API; a lost id uploaded again; exports keep the bytes.
Out of beta: no beta header, except to a gateway that asks for it (asked once per endpoint)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tests.seam import engine_of
from tui_chat.engine.files import read_attachment
from tui_chat.engine.service import ChatService, NotFound

Make = Callable[..., Awaitable[ChatService]]


def media(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The image and document blocks of a request, in order."""
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") in ("image", "document")
    ]


def uploads(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.requests if r.path == "/v1/files"]


def picture(tmp_path: Path) -> Path:
    image = tmp_path / "plot.png"
    image.write_bytes(sample_files.png(80, 60))
    return image


@dataclass
class Chat:
    """A new conversation on a service talking to the fake server, and a picture to attach."""

    service: ChatService
    conv: str
    image: Path

    async def look(self, prompt: str = "look") -> None:
        """Send ``prompt`` with the picture attached."""
        outcome = await self.service.send(
            self.conv, prompt, attachments=[read_attachment(self.image)]
        )
        assert outcome.error is None, outcome.error


@pytest.fixture
async def chat(make_service: Make, tmp_path: Path) -> Chat:
    service = await make_service()
    conv = await service.conversations.new()
    return Chat(service, conv.id, picture(tmp_path))


async def test_a_file_is_uploaded_once_and_named_by_its_file_id(
    chat: Chat, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    image = chat.image
    (tmp_path / "report.pdf").write_bytes(sample_files.pdf(2))
    files = [read_attachment(image), read_attachment(tmp_path / "report.pdf")]
    outcome = await chat.service.send(chat.conv, "What do these show?", attachments=files)
    assert outcome.error is None, outcome.error
    sent = media(fake_anthropic.bodies[-1])
    assert [b["type"] for b in sent] == ["image", "document"]
    ids = [b["source"]["file_id"] for b in sent]
    assert all(
        b["source"] == {"type": "file", "file_id": i} for b, i in zip(sent, ids, strict=True)
    )
    assert sent[1]["title"] == "report.pdf"
    # The files endpoints are out of beta: neither the uploads nor the request carry it.
    assert all("anthropic-beta" not in r.headers for r in fake_anthropic.requests)
    stored = {i: fake_anthropic.files.files[i].data for i in ids}
    assert stored == {ids[0]: image.read_bytes(), ids[1]: sample_files.pdf(2)}
    assert len(uploads(fake_anthropic)) == 2

    # Sent again (the history) and attached again (the same bytes): no new upload.
    await chat.look("And this one?")
    assert [b["source"]["file_id"] for b in media(fake_anthropic.bodies[-1])] == [*ids, ids[0]]
    assert len(uploads(fake_anthropic)) == 2


async def test_a_gateway_still_in_beta_is_asked_again_with_the_header_once_per_endpoint(
    chat: Chat, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.files.beta_required = True  # a gateway that still needs the beta header
    await chat.look("first")
    first, again = uploads(fake_anthropic)
    assert first.status == 400 and "anthropic-beta" not in first.headers
    assert again.status == 200 and again.headers["anthropic-beta"] == "files-api-2025-04-14"
    refused, sent = fake_anthropic.message_requests
    assert refused.status == 400 and "anthropic-beta" not in refused.headers
    assert sent.status == 200 and sent.headers["anthropic-beta"] == "files-api-2025-04-14"
    assert media(sent.body)[0]["source"]["type"] == "file"

    # Remembered: the next request and upload carry it at once, nothing is refused again.
    (tmp := chat.image.with_name("other.png")).write_bytes(sample_files.png(40, 30))
    before = len(fake_anthropic.requests)
    outcome = await chat.service.send(chat.conv, "and", attachments=[read_attachment(tmp)])
    assert outcome.error is None, outcome.error
    later = fake_anthropic.requests[before:]
    assert [r.status for r in later] == [200, 200]
    assert all(r.headers["anthropic-beta"] == "files-api-2025-04-14" for r in later)

    # A delete is asked without it first (its own endpoint), then with it, remembered too.
    await chat.service.conversations.delete(chat.conv)
    await engine_of(chat.service).files.settle(None)
    refused_delete, *deleted = deletes(fake_anthropic)
    assert refused_delete.status == 400 and "anthropic-beta" not in refused_delete.headers
    assert [r.status for r in deleted] == [200, 200]
    assert all(r.headers["anthropic-beta"] == "files-api-2025-04-14" for r in deleted)
    assert fake_anthropic.files.files == {}


async def test_an_endpoint_without_files_gets_inline_data_and_is_asked_once(
    chat: Chat, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.files.supported = False
    for prompt in ("first", "second"):
        await chat.look(prompt)
        sent = media(fake_anthropic.bodies[-1])
        assert {b["source"]["type"] for b in sent} == {"base64"}
        assert base64.b64decode(sent[-1]["source"]["data"]) == chat.image.read_bytes()
        assert "anthropic-beta" not in fake_anthropic.last.headers
    assert len(uploads(fake_anthropic)) == 1  # the refused probe, remembered
    assert await engine_of(chat.service).store.file_ids.supported(fake_anthropic.base_url) is False


async def test_a_file_id_the_endpoint_lost_is_uploaded_again(
    chat: Chat, fake_anthropic: FakeAnthropic
) -> None:
    await chat.look()
    first = media(fake_anthropic.bodies[-1])[0]["source"]["file_id"]
    fake_anthropic.files.forget()  # expired or deleted on the server
    outcome = await chat.service.send(chat.conv, "still there?")
    assert outcome.error is None, outcome.error
    refused, resent = fake_anthropic.message_requests[-2:]
    assert refused.status == 404 and media(refused.body)[0]["source"]["file_id"] == first
    again = media(resent.body)[0]["source"]["file_id"]
    assert again != first and fake_anthropic.files.files[again].data == chat.image.read_bytes()
    assert len(uploads(fake_anthropic)) == 2


async def test_a_file_id_lost_twice_falls_back_to_inline(
    chat: Chat, fake_anthropic: FakeAnthropic
) -> None:
    await chat.look()
    fake_anthropic.files.forget()
    real_upload = fake_anthropic.files.upload

    def forgetful(headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        meta = real_upload(headers, raw)
        fake_anthropic.files.forget()  # the new id is lost at once too
        return meta

    fake_anthropic.files.upload = forgetful  # type: ignore[method-assign]
    outcome = await chat.service.send(chat.conv, "again?")
    assert outcome.error is None, outcome.error
    sent = media(fake_anthropic.bodies[-1])[0]["source"]
    assert sent["type"] == "base64" and base64.b64decode(sent["data"]) == chat.image.read_bytes()


async def test_the_same_conversation_sends_the_same_bytes_after_a_restart(
    chat: Chat, make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    await chat.look()
    fake_anthropic.push_error(500, times=1)  # the reply fails: a retry sends it again
    await chat.service.send(chat.conv, "and?")
    before = fake_anthropic.bodies[-1]
    await chat.service.close()
    again = await make_service()
    assert (await again.retry(chat.conv)).error is None
    assert json.dumps(fake_anthropic.bodies[-1], sort_keys=True) == json.dumps(
        before, sort_keys=True
    )
    assert len(uploads(fake_anthropic)) == 1


async def test_exports_and_imports_keep_the_file_itself(
    chat: Chat, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service, conv, image = chat.service, chat.conv, chat.image
    attachment = read_attachment(image)
    await chat.look()
    file_id = media(fake_anthropic.bodies[-1])[0]["source"]["file_id"]
    exported = tmp_path / "export.json"
    await service.transfer.export_to(conv, exported)
    text = exported.read_text()
    assert file_id not in text
    data = json.loads(text)
    assert [base64.b64decode(a["data"]) for a in data["attachments"]] == [image.read_bytes()]
    for kind in ("md", "html"):
        assert file_id not in await service.transfer.export(conv, kind)

    await service.conversations.delete(conv)
    await engine_of(service).files.settle(None)  # its upload deleted at the endpoint
    assert fake_anthropic.files.deleted == [file_id]
    imported = await service.transfer.import_file(exported)
    assert (await engine_of(service).store.attachments.data([attachment.sha256])) == {
        attachment.sha256: image.read_bytes()
    }
    await service.send(imported.id, "and now?")
    source = media(fake_anthropic.bodies[-1])[0]["source"]
    assert source["type"] == "file" and source["file_id"] != file_id  # uploaded again
    assert fake_anthropic.files.files[source["file_id"]].data == image.read_bytes()


async def test_without_a_key_nothing_is_uploaded(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service(api_key=None)
    conv = await service.conversations.new()
    outcome = await service.send(conv.id, "look", attachments=[read_attachment(picture(tmp_path))])
    assert outcome.error is not None and outcome.error.kind == "no_key"
    assert fake_anthropic.requests == []


@pytest.mark.slow  # real tui-chat processes
def test_cli_send_attach_uploads_once(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    image = picture(tmp_path)
    for args in (("--new", "--attach", str(image), "what is it?"), ("again",)):
        sent = run(isolated_env, "send", *args, fake=fake_anthropic)
        assert sent.returncode == 0, sent.stderr
        source = media(fake_anthropic.bodies[-1])[0]["source"]
        assert fake_anthropic.files.files[source["file_id"]].data == image.read_bytes()
    assert len(uploads(fake_anthropic)) == 1


async def test_a_continuation_summary_names_the_files_the_chat_request_named(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    # A standalone call at a dear card (Fable 5.1), so continuing the cached request is the
    # cheaper summary (the summarizer choice weighs both).
    service = await make_service(compaction={"summarizer_model": "claude-fable-5-1"})
    chat = Chat(service, (await service.conversations.new()).id, picture(tmp_path))
    await chat.service.conversations.set_setting(chat.conv, "summarizer", "claude")
    await chat.look()
    await chat.service.send(chat.conv, "and what else?")
    request = fake_anthropic.bodies[-1]
    await chat.service.summaries.compact(chat.conv)
    summary = fake_anthropic.bodies[-1]
    assert (
        summary is not request
        and summary["messages"][: len(request["messages"]) - 1] == (request["messages"][:-1])
    )
    assert media(summary) == media(request) and media(request)[0]["source"]["type"] == "file"
    assert len(uploads(fake_anthropic)) == 1


async def test_the_context_preview_names_uploaded_files_as_the_send_does(
    chat: Chat, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    await chat.look("What is this?")
    sent = media(fake_anthropic.bodies[-1])
    preview = await chat.service.requests.context(chat.conv, "And now?")
    assert media(preview.request) == sent  # the history's file by its file_id, as sent
    assert len(uploads(fake_anthropic)) == 1
    # A new file attached to the draft is not uploaded for a preview: inline until sent.
    other = tmp_path / "other.png"
    other.write_bytes(sample_files.png(90, 70))
    drafted = await chat.service.requests.context(chat.conv, "This too", [read_attachment(other)])
    assert [b["source"]["type"] for b in media(drafted.request)] == ["file", "base64"]
    assert len(uploads(fake_anthropic)) == 1


def deletes(fake: FakeAnthropic) -> list[Any]:
    return [r for r in fake.requests if r.method == "DELETE"]


async def test_deleting_a_conversation_deletes_the_uploads_no_other_one_uses(
    chat: Chat, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = chat.service
    await chat.look()
    other = await service.conversations.new()
    shared = tmp_path / "shared.pdf"
    shared.write_bytes(sample_files.pdf(1))
    for conv in (chat.conv, other.id):
        await service.send(conv, "read this", attachments=[read_attachment(shared)])
    own_id, shared_id = (
        s["file_id"] for s in (b["source"] for b in media(fake_anthropic.bodies[-2]))
    )
    assert {own_id, shared_id} == set(fake_anthropic.files.files)

    fake_anthropic.files.hold_deletes = threading.Event()  # the endpoint is slow to answer
    await service.conversations.delete(chat.conv)  # returns without waiting for the endpoint
    with pytest.raises(NotFound):
        await service.conversations.resolve(chat.conv)
    fake_anthropic.files.hold_deletes.set()
    await engine_of(service).files.settle(None)
    assert fake_anthropic.files.deleted == [own_id]
    (sent,) = deletes(fake_anthropic)
    assert sent.path == f"/v1/files/{own_id}"
    assert "anthropic-beta" not in sent.headers  # out of beta
    endpoint = fake_anthropic.base_url
    assert await engine_of(service).store.file_ids.unreferenced(endpoint) == []
    assert await engine_of(service).store.file_ids.known(endpoint, [read_attachment(shared).sha256])

    await service.conversations.delete(other.id)  # the last conversation using it
    await engine_of(service).files.settle(None)
    assert fake_anthropic.files.deleted == [own_id, shared_id]
    assert fake_anthropic.files.files == {}


async def test_uploads_are_not_deleted_offline_or_without_a_key_and_are_later(
    chat: Chat, make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    await chat.look()
    (file_id,) = fake_anthropic.files.files
    fake_anthropic.stop()  # offline: the delete fails and the id is kept for the next run
    await chat.service.conversations.delete(chat.conv)
    await engine_of(chat.service).files.settle(None)
    endpoint = fake_anthropic.base_url
    assert await engine_of(chat.service).store.file_ids.unreferenced(endpoint) == [file_id]
    fake_anthropic.start()
    keyless = await make_service(api_key=None)
    engine_of(keyless).files.prune_soon()
    await engine_of(keyless).files.settle(None)
    assert deletes(fake_anthropic) == [] and await engine_of(keyless).files.prune() == 0
    # Online again with the key: the next run deletes what was left.
    assert await engine_of(chat.service).files.prune() == 1
    assert fake_anthropic.files.deleted == [file_id]
    assert await engine_of(chat.service).store.file_ids.unreferenced(endpoint) == []


async def test_an_upload_gone_already_is_forgotten(
    chat: Chat, fake_anthropic: FakeAnthropic
) -> None:
    await chat.look()
    fake_anthropic.files.forget()  # expired at the endpoint
    await chat.service.conversations.delete(chat.conv)
    await engine_of(chat.service).files.settle(None)
    assert fake_anthropic.files.deleted == [] and len(deletes(fake_anthropic)) == 1
    assert await engine_of(chat.service).store.file_ids.unreferenced(fake_anthropic.base_url) == []
