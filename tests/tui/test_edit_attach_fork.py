"""Pilot tests of editing a prompt (e), attaching a file (ctrl+a), compacting up to a message
(s), copying code blocks (b) and forking (f) — through the real engine and the local server."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, on_screen, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList


def _import(folder: Path, texts: list[str]) -> Path:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        for i, text in enumerate(texts)
    ]
    path = folder / "chat.json"
    path.write_text(json.dumps({"title": "Chat", "messages": messages}))
    return path


async def test_e_edits_a_prompt_and_sending_it_makes_a_fork(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    service = keyed_service
    parent = await service.transfer.import_file(
        _import(tmp_path, ["where to go?", "Lisbon.", "and when?", "In May."])
    )
    stored = await service.messages.history(parent.id)
    app = make_app(service, parent.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f5", "up")  # the prompt "and when?"
        assert app.query_one(ChatPane).selected == stored[2].id
        await pilot.press("e")
        await until(pilot, lambda: screen.composer.text == "and when?")
        assert app.focused is screen.composer
        chips = str(app.query_one("#pending-files", Static).visual)
        assert f"editing #{stored[2].id}" in chips
        screen.composer.load_text("and in which season?")
        await pilot.press("enter")
        await until(pilot, lambda: screen.conversation_id != parent.id)
        await settle(pilot)
        body = fake_anthropic.bodies[-1]
        last = body["messages"][-1]["content"]
        assert last[-1]["text"] == "and in which season?"
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        fork_id = screen.conversation_id
        assert fork_id is not None
        origin = await service.branches.parent(fork_id)
        assert origin is not None and origin.parent_id == parent.id
        assert [m.text for m in await service.messages.history(parent.id)] == [
            m.text for m in stored
        ]
        # The list shows both as one entry, opening the edited branch.
        listed = app.query_one(ConversationList).conversations
        assert [i.conversation.id for i in listed] == [fork_id]


async def test_ctrl_a_attaches_a_png_that_reaches_the_request_as_an_image(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    image = tmp_path / "shot.png"
    image.write_bytes(sample_files.png(320, 200))
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.composer.load_text("what is this?")
        await pilot.press("ctrl+a")
        await until(pilot, lambda: bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = str(image)
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        chips = str(app.query_one("#pending-files", Static).visual)
        assert "shot.png" in chips and " B" in chips
        assert screen.composer.text == "what is this?"

        # The gauge counts the image by Claude's formula: 320 x 200 / 750 -> 86 tokens.
        def draft() -> int:
            breakdown = screen.gauge.breakdown
            return 0 if breakdown is None else int(breakdown.sections.get("new_message", 0))

        await until(
            pilot, lambda: draft() >= 86 + engine_of(keyed_service).counter.count("what is this?")
        )
        # The preview shows the draft's file as it will be sent.
        await pilot.press("ctrl+o")
        await until(pilot, lambda: app.screen is not screen)
        preview = app.screen.built.request["messages"][-1]["content"]  # type: ignore[attr-defined]
        assert preview[0]["type"] == "image" and preview[-1]["text"] == "what is this?"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("enter")
        await settle(pilot)
        content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
        assert content[0]["type"] == "image"  # uploaded once (Files API), named by its id
        assert fake_anthropic.files.files[content[0]["source"]["file_id"]].data == (
            image.read_bytes()
        )
        assert screen.tray.pending == []
        # The stored message shows the chip, not the file.
        view = app.query_one(ChatPane).views[0]
        assert "shot.png" in str(view.query_one(".chips", Static).visual)


async def test_a_file_with_no_typed_text_is_sent_and_a_blank_draft_alone_is_not(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    image = tmp_path / "only.png"
    image.write_bytes(sample_files.png(64, 48))
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("enter")  # blank, nothing attached: nothing is sent
        await settle(pilot)
        assert fake_anthropic.bodies == []
        await pilot.press("ctrl+a")
        await until(pilot, lambda: bool(app.screen.query(Input)))
        app.screen.query_one(Input).value = str(image)
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        assert screen.composer.text == ""
        await pilot.press("enter")
        await until(pilot, lambda: len(fake_anthropic.bodies) == 1)
        await settle(pilot)
        content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
        assert [block["type"] for block in content] == ["image"]
        assert screen.tray.pending == [] and not screen.composer.has_files
        stored = await keyed_service.messages.history(conversation.id)
        assert stored[0].role == "user" and "only.png" in stored[0].text


async def test_ctrl_a_refuses_a_missing_or_oversized_file_and_keeps_the_draft(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(sample_files.png(8, 8, filler=5 * 1024 * 1024 + 10))
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.composer.load_text("keep me")
        for path, refusal in ((big, "big.png is 5.0 MB"), (tmp_path / "missing.pdf", "not exist")):
            await pilot.press("ctrl+a")
            await until(pilot, lambda: bool(app.screen.query(Input)))
            app.screen.query_one(Input).value = str(path)
            await pilot.press("enter")
            await until(pilot, lambda: app.screen is screen)
            # The file is read in a worker (off the event loop): wait for its refusal (checked
            # here, each in turn: a toast may time out while the next file is tried).
            await until(pilot, lambda: any(refusal in n for n in notifications(app)))  # noqa: B023
        assert screen.tray.pending == [] and screen.composer.text == "keep me"
        assert fake_anthropic.bodies == []


async def test_s_compacts_up_to_the_selected_message(service: ChatService, tmp_path: Path) -> None:
    conversation = await service.transfer.import_file(
        _import(tmp_path, ["one", "first answer", "two", "second answer", "three", "third"])
    )
    await service.conversations.set_setting(conversation.id, "summarizer", "extractive")
    stored = await service.messages.history(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f5", "up", "up")  # "second answer"
        assert app.query_one(ChatPane).selected == stored[3].id
        await pilot.press("s")
        await settle(pilot)
        versions = await service.summaries.versions(conversation.id)
        assert [v.covers_to_message_id for v in versions] == [stored[3].id]
        await until(pilot, lambda: bool(screen.timeline.summaries))
        assert screen.timeline.summaries[0].covers_to_message_id == stored[3].id


async def test_b_copies_the_code_blocks_of_a_message_in_turn(
    service: ChatService, tmp_path: Path
) -> None:
    reply = "Run:\n```sh\nmake test\n```\nthen:\n```python\nprint('ok')\n```\n"
    conversation = await service.transfer.import_file(_import(tmp_path, ["how?", reply]))
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f5", "b")
        assert app.clipboard == "make test"
        await pilot.press("b")
        assert app.clipboard == "print('ok')"
        await pilot.press("b")
        assert app.clipboard == "make test"
        await pilot.press("up", "b")
        await until(pilot, lambda: any("no code block" in n for n in notifications(app)))


async def test_f_forks_at_the_selected_message(service: ChatService, tmp_path: Path) -> None:
    conversation = await service.transfer.import_file(_import(tmp_path, ["a", "b", "c", "d"]))
    stored = await service.messages.history(conversation.id)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f5", "up", "up", "f")
        await until(pilot, lambda: screen.conversation_id != conversation.id)
        assert screen.conversation_id is not None
        forked = await service.messages.history(screen.conversation_id)
        assert [m.text for m in forked] == [m.text for m in stored[:2]]
        assert isinstance(app.focused, ChatPane | Composer)


def test_the_preview_shows_an_attached_file_cut_short_and_copies_it_whole() -> None:
    from tui_chat.tui.screens.context_preview import shown

    data = base64.b64encode(sample_files.png(100, 100, filler=400)).decode()
    request = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": data},
                    }
                ],
            }
        ]
    }
    cut = shown(request)["messages"][0]["content"][0]["source"]["data"]
    assert cut.startswith(data[:64]) and f"{len(data):,} base64 characters" in cut
    assert request["messages"][0]["content"][0]["source"]["data"] == data


async def test_e_brings_back_the_files_of_a_prompt_and_escape_drops_the_edit(
    service: ChatService, tmp_path: Path
) -> None:
    from tui_chat.engine.files import read_attachment

    conversation = await service.conversations.new()
    image = tmp_path / "scan.png"
    image.write_bytes(sample_files.png(30, 20))
    attachment = read_attachment(image)
    await engine_of(service).store.attachments.put(
        attachment.media_type, attachment.data, attachment.sha256
    )
    await engine_of(service).store.messages.add(
        conversation.id,
        role="user",
        content=[attachment.ref(), {"type": "text", "text": "read this"}],
        text="read this\n\n[image attached: scan.png, 30×20]",
        token_count=20,
    )
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f5", "e")
        await until(pilot, lambda: screen.composer.text == "read this")
        assert [a.sha256 for a in screen.tray.pending] == [attachment.sha256]
        assert "scan.png" in str(app.query_one("#pending-files", Static).visual)
        await pilot.press("escape")
        assert screen.drafting.editing is None and screen.tray.pending == []
        assert screen.composer.text == ""
        assert app.focused is screen.composer


def test_a_dropped_or_quoted_path_is_understood() -> None:
    from tui_chat.tui.screens.drafting import pasted_path

    assert pasted_path("  '/tmp/my shot.png' ") == "/tmp/my shot.png"
    assert pasted_path("file:///tmp/my%20shot.png") == "/tmp/my shot.png"
    assert pasted_path('"~/a.pdf"') == "~/a.pdf"


async def test_ctrl_a_picks_a_file_from_the_folder_tree(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.widgets import DirectoryTree

    from tui_chat.tui.screens.file_picker import FilePicker

    (tmp_path / "notes.md").write_text("# deploy\nport 8443\n")
    monkeypatch.chdir(tmp_path)
    conversation = await service.conversations.new()
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+a")
        await on_screen(pilot, FilePicker)
        tree = app.screen.query_one(DirectoryTree)
        await until(pilot, lambda: bool(tree.root.children))
        node = next(n for n in tree.root.children if str(n.label) == "notes.md")
        tree.focus()
        tree.move_cursor(node)
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.tray.pending) == 1)
        assert screen.tray.pending[0].kind == "text" and screen.tray.pending[0].name == "notes.md"
        await pilot.press("ctrl+a")
        await on_screen(pilot, FilePicker)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert len(screen.tray.pending) == 1
