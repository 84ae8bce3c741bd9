"""Forks, edited prompts, attached files and "compact up to here" through the real engine and
the local Anthropic-compatible server."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tui_chat.core.attachments import AttachmentError
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.files import read_attachment
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


def texts(body: dict[str, Any]) -> list[str]:
    """The text of each message of a request, in order."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.append(" ".join(str(b.get("text", b.get("type"))) for b in content))
    return out


async def manual_only(service: ChatService, cid: str) -> None:
    """Offline summaries, and no automatic compaction: a test decides every version."""
    await service.conversations.set_setting(cid, "summarizer", "extractive")
    await service.conversations.set_setting(cid, "trigger", "tokens")
    await service.conversations.set_setting(cid, "threshold_tokens", "10000000")


async def chat(service: ChatService, cid: str, prompts: list[str]) -> None:
    for prompt in prompts:
        outcome = await service.send(cid, prompt)
        assert outcome.error is None, outcome.error


@pytest.mark.slow  # a real process
async def test_fork_keeps_the_parent_untouched_and_sends_only_its_own_history(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    parent = await service.conversations.new("Plans")
    await chat(service, parent.id, ["first question", "second question"])
    before = [(m.id, m.text) for m in await service.messages.history(parent.id)]
    first_reply = before[1][0]

    await service.messages.pin(before[0][0])
    await service.messages.pin(before[2][0])  # after the fork point: stays the parent's alone
    fork = await service.branches.fork(parent.id, first_reply)
    assert fork.title == "Plans (fork)"
    fork_first = (await service.messages.history(fork.id))[0].id
    assert await service.messages.pinned_ids(fork.id) == {fork_first}
    assert await service.messages.pinned_ids(parent.id) == {before[0][0], before[2][0]}
    assert [m.text for m in await service.messages.history(fork.id)] == [t for _, t in before[:2]]
    origin = await service.branches.parent(fork.id)
    assert origin is not None
    assert (origin.parent_id, origin.parent_message_id) == (parent.id, first_reply)

    await chat(service, fork.id, ["a different second question"])
    sent = texts(fake_anthropic.bodies[-1])
    assert sent[0] == "first question" and sent[-1] == "a different second question"
    assert not any(t == "second question" for t in sent)
    assert [(m.id, m.text) for m in await service.messages.history(parent.id)] == before

    # Search and export treat the fork like any conversation.
    hits = await service.messages.search("different", conversation_id=fork.id)
    assert hits and {h.conversation_id for h in hits} == {fork.id}
    exported = json.loads(await service.transfer.export(fork.id, "json"))
    assert [m["text"] for m in exported["messages"]][-2] == "a different second question"


@pytest.mark.slow  # a real process
async def test_fork_brings_the_summary_versions_inside_its_fork_point(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await manual_only(service, conv.id)
    await chat(service, conv.id, [f"question {n} about port 84{n}" for n in range(1, 6)])
    history = await service.messages.history(conv.id)
    v1 = await service.branches.compact_upto(conv.id, history[1].id)
    v2 = await service.branches.compact_upto(conv.id, history[5].id)
    assert (v1.version, v2.version, v2.parent_id) == (1, 2, v1.id)

    fork = await service.branches.fork(conv.id, history[3].id)
    versions = await service.summaries.versions(fork.id)
    assert [v.version for v in versions] == [1]  # v2 covers beyond the fork point
    copied = versions[0]
    assert copied.text == v1.text
    assert copied.covers_to_message_id == (await service.messages.history(fork.id))[1].id
    assert (await service.conversations.get(fork.id)).active_summary_id == copied.id
    # The identifier ledger points at the fork's own messages.
    fork_ids = {m.id for m in await service.messages.history(fork.id)}
    ledger_ids = {i for entry in copied.ledger for i in entry.get("ids", [])}
    assert ledger_ids and ledger_ids <= fork_ids

    later = await service.branches.fork(conv.id, history[7].id)
    both = sorted(await service.summaries.versions(later.id), key=lambda v: v.version)
    assert [v.version for v in both] == [1, 2] and both[1].parent_id == both[0].id
    assert (await service.conversations.get(later.id)).active_summary_id == both[1].id
    # The parent's versions are still its own.
    assert [v.id for v in await service.summaries.versions(conv.id)] == [v2.id, v1.id]


@pytest.mark.slow  # a real process
async def test_an_edited_prompt_makes_a_fork_whose_request_ends_with_the_edit(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    conv = await service.conversations.new("Trip")
    await chat(service, conv.id, ["where to go?", "and when?"])
    history = await service.messages.history(conv.id)
    fork, original = await service.branches.fork_for_edit(history[2].id)
    assert original.text == "and when?" and fork.title == "Trip (edited)"
    assert [m.id for m in await service.messages.history(fork.id)] != [m.id for m in history[:2]]
    assert len(await service.messages.history(fork.id)) == 2
    await chat(service, fork.id, ["and in which season?"])
    assert texts(fake_anthropic.bodies[-1])[-1] == "and in which season?"
    assert len(await service.messages.history(conv.id)) == 4  # the original is untouched
    with pytest.raises(ValueError, match="only those can be edited"):
        await service.branches.fork_for_edit(history[1].id)
    first, _ = await service.branches.fork_for_edit(history[0].id)
    assert await service.messages.history(first.id) == []


async def test_an_attached_png_is_sent_as_an_image_block_and_survives_export_and_import(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.files.supported = False  # inline data (the Files API: test_files_api)
    service = await make_service()
    conv = await service.conversations.new()
    image = tmp_path / "plot.png"
    image.write_bytes(sample_files.png(800, 600))
    attachment = read_attachment(image)
    outcome = await service.send(conv.id, "What does it show?", attachments=[attachment])
    assert outcome.error is None
    user = fake_anthropic.bodies[-1]["messages"][-1]["content"]
    assert user[0]["type"] == "image"
    assert user[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(user[0]["source"]["data"]) == image.read_bytes()
    assert user[-1]["text"] == "What does it show?"
    stored = (await service.messages.history(conv.id))[0]
    assert stored.content[0]["type"] == "attachment" and "data" not in stored.content[0]
    assert stored.token_count >= stored.content[0]["tokens"] == 640  # 800*600/750

    # The preview (`context`) shows the exact request: the image as sent, not a reference.
    preview = (await service.requests.context(conv.id, "next")).request["messages"]
    shown = [b for m in preview for b in m["content"] if isinstance(b, dict)]
    assert [b["type"] for b in shown].count("image") == 1
    assert not any(b["type"] == "attachment" for b in shown)

    # The same file attached again is stored once.
    await service.send(conv.id, "Again", attachments=[read_attachment(image)])
    assert await engine_of(service).store.attachments.count() == 1

    exported = tmp_path / "export.json"
    await service.transfer.export_to(conv.id, exported)
    data = json.loads(exported.read_text())
    assert [a["sha256"] for a in data["attachments"]] == [attachment.sha256]
    markdown = await service.transfer.export(conv.id, "md")
    assert "plot.png" in markdown and "base64" not in markdown

    await service.conversations.delete(conv.id)
    assert await engine_of(service).store.attachments.count() == 0
    imported = await service.transfer.import_file(exported)
    await chat(service, imported.id, ["and now?"])
    blocks = [b for m in fake_anthropic.bodies[-1]["messages"] for b in m["content"]]
    images = [b for b in blocks if isinstance(b, dict) and b.get("type") == "image"]
    assert [base64.b64decode(b["source"]["data"]) for b in images] == [image.read_bytes()] * 2


async def test_a_pdf_is_a_document_block_and_a_text_file_is_text_with_its_name(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.files.supported = False  # inline data (the Files API: test_files_api)
    service = await make_service()
    conv = await service.conversations.new()
    (tmp_path / "report.pdf").write_bytes(sample_files.pdf(3))
    (tmp_path / "deploy.txt").write_text("deploy to region eu-west-3 on friday\n")
    files = [read_attachment(tmp_path / "report.pdf"), read_attachment(tmp_path / "deploy.txt")]
    await service.send(conv.id, "Summarise both", attachments=files)
    content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
    assert content[0]["type"] == "document" and content[0]["title"] == "report.pdf"
    assert content[0]["source"]["media_type"] == "application/pdf"
    assert content[1] == {
        "type": "text",
        "text": '<file name="deploy.txt">\ndeploy to region eu-west-3 on friday\n\n</file>',
    }
    # A text attachment is searched like the message it came with.
    hits = await service.messages.search("friday")
    assert hits and {h.conversation_id for h in hits} == {conv.id}


async def test_an_oversized_or_missing_file_is_refused_before_anything_is_stored(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    big = tmp_path / "huge.png"
    big.write_bytes(sample_files.png(10, 10, filler=6 * 1024 * 1024))
    with pytest.raises(AttachmentError, match=r"huge\.png is 6\.0 MB, 8\.0 MB once encoded"):
        read_attachment(big)
    with pytest.raises(AttachmentError, match="does not exist"):
        read_attachment(tmp_path / "nope.png")
    assert await service.messages.history(conv.id) == []
    assert fake_anthropic.bodies == []


async def test_compact_up_to_a_message_covers_exactly_its_turn(make_service: Make) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await manual_only(service, conv.id)
    await chat(service, conv.id, ["one", "two", "three", "four"])
    history = await service.messages.history(conv.id)
    version = await service.branches.compact_upto(conv.id, history[2].id)  # turn 2's prompt
    assert version.covers_to_message_id == history[3].id
    assert version.covered_messages == 4
    with pytest.raises(CompactionError, match="already summarized"):
        await service.branches.compact_upto(conv.id, history[1].id)
    request = (await service.requests.context(conv.id)).request
    assert texts(request)[0] == "three"


async def test_summaries_note_an_image_and_recall_reads_a_text_file(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await manual_only(service, conv.id)
    (tmp_path / "runbook.txt").write_text("the failover password rotates every zephyrday\n")
    (tmp_path / "wiring.png").write_bytes(sample_files.png(40, 30))
    files = [read_attachment(tmp_path / "runbook.txt"), read_attachment(tmp_path / "wiring.png")]
    await service.send(conv.id, "Keep these for later", attachments=files)
    await chat(service, conv.id, ["unrelated one", "unrelated two"])
    history = await service.messages.history(conv.id)
    version = await service.branches.compact_upto(conv.id, history[1].id)
    assert "wiring.png" in version.text
    built = await service.requests.context(conv.id, "when does it rotate, the zephyrday thing?")
    system = " ".join(b["text"] for b in built.request["system"])
    assert "zephyrday" in system.split("# Recalled", 1)[-1]


async def test_the_preview_of_files_alone_is_the_request_their_send_makes(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.files.supported = False  # inline data (the Files API: test_files_api)
    service = await make_service()
    conv = await service.conversations.new()
    image = tmp_path / "alone.png"
    image.write_bytes(sample_files.png(30, 20))
    files = [read_attachment(image)]
    for draft in (None, "", "  \n"):
        preview = (await service.requests.context(conv.id, draft, files)).request["messages"][-1]
        # The file as sent, and no empty text block (the API refuses one).
        assert [b["type"] for b in preview["content"]] == ["image"], draft
    # With no files and no draft the preview has no new message at all.
    assert (await service.requests.context(conv.id)).request["messages"] == []
    outcome = await service.send(conv.id, "", attachments=files)
    assert outcome.error is None
    sent = fake_anthropic.bodies[-1]["messages"][-1]["content"]
    assert sent == preview["content"]
