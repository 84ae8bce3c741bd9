"""Deleting a message: it leaves the next request, the gauge, exports and search at once; a
tool call and its result go together; a pinned message unpins; the summary versions that
covered it are marked stale until regenerated; a reply being streamed cannot be deleted; a
branch that shared it parts just before it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tui_chat.engine.conversations.message_deletion import CannotDelete
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]

SECRET = "zebrafish-7731"
"""A word only the deleted prompt holds."""


async def _imported(service: ChatService, tmp_path: Path, messages: list[dict[str, Any]]) -> str:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"title": "deleting", "messages": messages}))
    return (await service.transfer.import_file(path)).id


def _turns(count: int, secret_at: int | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(count):
        words = f"question {i} about the harbour tide tables " + ("and more words " * 20)
        if i == secret_at:
            words += SECRET
        messages.append({"role": "user", "content": words})
        messages.append({"role": "assistant", "content": f"answer {i}: the tide is high " * 10})
    return messages


def _sent_text(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"])


async def test_a_deleted_message_leaves_the_request_gauge_export_and_search_at_once(
    make_service: Make, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await _imported(service, tmp_path, _turns(4, secret_at=1))
    history = await service.messages.history(conv)
    target = history[2]  # the prompt holding the secret
    assert SECRET in target.text
    before = await service.requests.gauge(conv)
    assert SECRET in _sent_text((await service.requests.context(conv)).request)
    assert await service.messages.search(SECRET, conversation_id=conv)
    await service.messages.pin(target.id)

    deleted = await service.messages.delete(target.id)

    assert deleted.ids == [target.id] and deleted.unpinned == [target.id]
    assert target.id not in await service.messages.pinned_ids(conv)
    after = await service.requests.gauge(conv)  # the kept build is not reused
    assert after.input_tokens < before.input_tokens
    assert SECRET not in _sent_text((await service.requests.context(conv)).request)
    assert not await service.messages.search(SECRET, conversation_id=conv)
    for fmt in ("md", "json", "html"):
        assert SECRET not in await service.transfer.export(conv, fmt), fmt
    assert [m.id for m in await service.messages.history(conv)] == [
        m.id for m in history if m.id != target.id
    ]


async def test_a_tool_call_and_its_result_go_together(make_service: Make, tmp_path: Path) -> None:
    service = await make_service()
    messages = [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading them."},
                {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}],
        },
        {"role": "assistant", "content": "There is a.txt."},
    ]
    conv = await _imported(service, tmp_path, messages)
    history = await service.messages.history(conv)
    use, result = history[1], history[2]
    for asked in (result.id, use.id):  # either half takes the other along
        assert [m.id for m in await service.messages.deletion(asked)] == [use.id, result.id]
    deleted = await service.messages.delete(result.id)
    assert deleted.ids == [use.id, result.id]
    request = (await service.requests.context(conv, "and now?")).request
    sent = _sent_text(request)
    assert "tool_use" not in sent and "tool_result" not in sent


async def test_summaries_covering_a_deleted_message_are_stale_until_regenerated(
    make_service: Make, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await _imported(service, tmp_path, _turns(8, secret_at=0))
    await service.conversations.set_setting(conv, "summarizer", "extractive")
    summary = await service.summaries.compact(conv)
    assert summary.stale is None
    first = (await service.messages.history(conv))[0]
    assert first.id <= summary.covers_to_message_id

    deleted = await service.messages.delete(first.id)

    assert deleted.stale_versions == [summary.version]
    (stale,) = [v for v in await service.summaries.versions(conv) if v.version == summary.version]
    assert stale.stale is not None and f"#{first.id}" in stale.stale
    fresh = await service.summaries.regenerate(conv, summary.version)
    assert fresh.stale is None and fresh.version > summary.version


async def test_a_reply_being_streamed_cannot_be_deleted(
    make_service: Make, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await _imported(service, tmp_path, _turns(1))
    fake_anthropic.push_reply(" ".join(f"w{i}" for i in range(400)), chunk_delay=0.05)
    sending = asyncio.create_task(service.send(conv, "go on"))
    try:
        while True:  # until part of the reply is stored
            history = await service.messages.history(conv)
            if history[-1].status == "streaming" and history[-1].text:
                break
            await asyncio.sleep(0.01)
        prompt, reply = history[-2], history[-1]
        for message_id in (reply.id, prompt.id):
            with pytest.raises(CannotDelete, match="being streamed"):
                await service.messages.delete(message_id)
        await service.messages.delete(history[0].id)  # an earlier turn still can be
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sending
    assert [m.id for m in await service.messages.history(conv)] == [m.id for m in history[1:]]


async def test_a_branch_sharing_the_message_parts_before_it(
    make_service: Make, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await _imported(service, tmp_path, _turns(3))
    history = await service.messages.history(conv)
    fork = await service.branches.fork(conv, history[3].id)  # shares four messages
    await service.messages.delete(history[2].id)
    family = await service.branches.family(fork.id)
    branch = family.get(fork.id)
    assert branch is not None and branch.shared == 2
    assert branch.parent_message_id == history[1].id
    assert len(await service.messages.history(fork.id)) == 4  # its own copies stay


async def test_an_unknown_message_is_said_as_such(make_service: Make) -> None:
    from tui_chat.store.errors import NotFound

    service = await make_service()
    with pytest.raises(NotFound):
        await service.messages.delete(987654)


async def test_a_failed_prompt_goes_with_its_empty_failed_reply(
    make_service: Make, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await _imported(service, tmp_path, _turns(1))
    fake_anthropic.push_error(529)
    await service.send(conv, "the failing prompt")
    fake_anthropic.push_reply("fine")
    await service.send(conv, "another question")
    history = await service.messages.history(conv)
    prompt, failed = history[2], history[3]
    assert failed.status == "error" and not failed.text
    deleted = await service.messages.delete(prompt.id)
    assert deleted.ids == [prompt.id, failed.id]
    assert [m.text for m in await service.messages.history(conv)][-2:] == [
        "another question",
        "fine",
    ]
