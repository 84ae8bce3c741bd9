"""Pilot tests of the smaller TUI: toasts, centred prompts, the footer after a
reply, compacting with nothing to compact, the palette's Screenshot, unarchiving, drafts.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._footer import FooterKey

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.notified import raised
from tests.tui.conftest import make_app
from tests.tui.helpers import from_palette, notifications, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.core.models import Summary
from tui_chat.engine.service import ChatService


def _main(app: App[None]) -> Widget:
    return app.screen_stack[0]


def _by_id(app: App[None], widget_id: str) -> Widget:
    return _main(app).query_one(f"#{widget_id}")


def _composer_text(app: App[None]) -> str:
    return str(_by_id(app, "composer").text)


async def _send(pilot: object, text: str) -> None:
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    _by_id(pilot.app, "composer").focus()
    await pilot.pause()
    await pilot.press(*text)
    await pilot.press("enter")


async def test_regenerating_the_active_version_says_it_is_active(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await seed_demo(service, tmp_path)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        before = (await service.conversations.resolve(conversation.id)).active_summary_id
        await from_palette(pilot, "Regenerate summary")
        await until(
            pilot,
            lambda: isinstance(app.screen, ModalScreen) and bool(app.screen.query("#prompt-input")),
        )
        await pilot.press("enter")
        await settle(pilot)
        after = (await service.conversations.resolve(conversation.id)).active_summary_id
        assert after != before  # the regenerated version replaced the active one
        texts = notifications(app)
        assert not any("kept aside" in t for t in texts), texts
        assert any("active" in t for t in texts), texts


@pytest.mark.parametrize("key", ["f2", "ctrl+s", "ctrl+p:Regenerate summary"])
async def test_prompts_are_centred(service: ChatService, tmp_path: Path, key: str) -> None:
    conversation = await seed_demo(service, tmp_path)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        if key.startswith("ctrl+p:"):
            await from_palette(pilot, key.split(":", 1)[1])
        else:
            await pilot.press(key)
        await until(pilot, lambda: bool(app.screen.query(".dialog")))
        await pilot.pause()
        dialog = app.screen.query_one(".dialog")
        region = dialog.region
        assert abs((region.x + region.right) / 2 - 60) <= 2, region
        assert abs((region.y + region.bottom) / 2 - 18) <= 2, region


async def test_delete_confirmation_is_centred(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await from_palette(pilot, "Delete conversation")
        await until(pilot, lambda: bool(app.screen.query(".dialog")))
        await pilot.pause()
        region = app.screen.query_one(".dialog").region
        assert abs((region.x + region.right) / 2 - 60) <= 2, region


def _footer_actions(app: App[None]) -> list[str]:
    return [str(key.description) for key in app.screen.query(FooterKey)]


async def test_cancel_reply_leaves_the_footer_when_the_reply_ends(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        # The reply stops after its first words until the test has seen it streaming (a
        # 2-second reply could end, on a loaded machine, before the first look).
        gate = threading.Event()
        fake_anthropic.push_hang(600, after_chunks=1, text="one two three four five six", gate=gate)
        await _send(pilot, "count")
        await until(pilot, lambda: app.main_screen.streaming_id is not None)
        await until(pilot, lambda: "Cancel reply" in _footer_actions(app))
        gate.set()
        views = _by_id(app, "chat").query("MessageView")
        await until(pilot, lambda: "complete" in str(views.last().message.status))
        await settle(pilot)
        assert "Cancel reply" not in _footer_actions(app)


async def test_cancelling_a_reply_is_not_shown_as_a_failure(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        # Hangs until the client goes away (the cancel), however long the machine takes to get
        # there: a 10 s hang ended by itself under load, and the reply completed uncancelled.
        fake_anthropic.push_hang(600, after_chunks=1)
        await _send(pilot, "tell me a long story")
        await until(pilot, lambda: "Cancel reply" in _footer_actions(app))
        # Cancelled mid-reply: once its first words are on screen (then the server hangs).
        reply = _by_id(app, "chat").query("MessageView").last()
        await until(pilot, lambda: bool(reply.query_one(Markdown).source))
        await pilot.press("escape")
        # The reply ends when the engine has stored what arrived (after the worker stops).
        await until(pilot, lambda: app.main_screen.streaming_id is None)
        await settle(pilot)
        errors = [n for n in raised(app) if n.severity == "error"]
        assert errors == []
        assert not any(n.title == "Reply failed" for n in raised(app))
        assert any("cancel" in n.message.lower() for n in raised(app)), notifications(app)


async def test_compact_with_nothing_to_compact_is_not_an_error(service: ChatService) -> None:
    app = make_app(service)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert not any(n.title == "Error" for n in raised(app))
        assert not any(n.severity == "error" for n in raised(app))
        assert any("nothing to compact" in n.message.lower() for n in raised(app))


async def test_palette_screenshot_works_in_a_fresh_home(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "fresh-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    export_dir = tmp_path / "exports"
    export_dir.mkdir()
    app = make_app(service, export_dir=export_dir)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        await from_palette(pilot, "Screenshot")
        await until(pilot, lambda: any("Screenshot" in n.title for n in raised(app)))
        await settle(pilot)
        saved = list(export_dir.glob("*.svg"))
        assert len(saved) == 1
        assert saved[0].read_text().startswith("<svg")
        assert saved[0].stat().st_mode & 0o777 == 0o600  # private, like exports
        assert any(str(saved[0]) in n.message for n in raised(app))


async def test_archived_conversations_can_be_shown_and_unarchived(
    service: ChatService,
) -> None:
    kept = await service.conversations.new("kept")
    shelved = await service.conversations.new("shelved")
    await service.conversations.archive(shelved.id)
    app = make_app(service, kept.id)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+b")
        listing = _by_id(app, "conversations")
        assert [c.conversation.id for c in listing.conversations] == [kept.id]
        await pilot.press("f6")  # show archived conversations too
        await until(pilot, lambda: len(listing.conversations) == 2)
        ids = [c.conversation.id for c in listing.conversations]
        options = listing.query_one("OptionList")
        options.highlighted = ids.index(shelved.id)
        # A refresh meanwhile (the start-up panels, another process's write) keeps the row
        # the user moved to: the next key acts on it, not on the conversation that is open.
        await app.main_screen.refresh_conversations()
        assert listing.highlighted_id == shelved.id
        await pilot.press("f5", "a")  # archive toggles: unarchive (a command in navigation)
        await settle(pilot)
        assert (await service.conversations.resolve(shelved.id)).archived_at is None
        assert any("Unarchived" in n for n in notifications(app))


async def test_drafts_are_kept_per_conversation_across_quit_and_reopen(
    service: ChatService,
) -> None:
    first = await service.conversations.new("first")
    second = await service.conversations.new("second")
    app = make_app(service, first.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"half a thought")
        await until(pilot, lambda: _composer_text(app) == "half a thought")
        await _main(app).open_conversation(second.id)
        await until(pilot, lambda: _composer_text(app) == "")
        await pilot.press(*"other draft")
        await until(pilot, lambda: _composer_text(app) == "other draft")
    app = make_app(service, second.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert _composer_text(app) == "other draft"
        await _main(app).open_conversation(first.id)
        await until(pilot, lambda: _composer_text(app) == "half a thought")


async def test_sending_clears_the_stored_draft(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        await _send(pilot, "sent now")
        await settle(pilot)
        conv_id = screen.conversation_id
    assert await keyed_service.drafts.get(conv_id) == ""


async def test_typing_while_a_conversation_opens_is_not_replaced_by_its_draft(
    service: ChatService, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await service.conversations.new("first")
    slow = await service.conversations.new("slow draft")
    await service.drafts.set(slow.id, "an old draft")
    entered, release = asyncio.Event(), asyncio.Event()
    read = service.drafts.get

    async def slow_get(conversation_id: str) -> str:
        if conversation_id == slow.id:
            entered.set()
            await release.wait()  # the draft arrives after the user started typing
        return await read(conversation_id)

    app = make_app(service, first.id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        monkeypatch.setattr(service.drafts, "get", slow_get)
        screen = app.main_screen
        opening = asyncio.create_task(screen.open_conversation(slow.id))
        await until(pilot, entered.is_set)
        await pilot.press(*"typed first")
        release.set()
        await opening
        await settle(pilot)
        assert _composer_text(app) == "typed first"


async def test_a_timeline_refresh_that_read_earlier_does_not_show_over_a_later_one(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two refreshes overlap (a compaction's event and the regenerate worker's end): the one
    that read the database first must not set the versions last (it showed the old version
    in force, and said "kept aside" for a regenerated version that was active)."""
    conversation = await seed_demo(service, tmp_path)
    app = make_app(service, conversation.id)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        summaries = await service.summaries.versions(conversation.id)
        active = (await service.conversations.resolve(conversation.id)).active_summary_id
        other = next(s for s in summaries if s.id != active)
        read = asyncio.Event()
        go_on = asyncio.Event()
        versions = service.summaries.versions

        async def first_read_waits(conversation_id: str) -> list[Summary]:
            found = await versions(conversation_id)
            if not read.is_set():
                read.set()
                await go_on.wait()
            return found

        monkeypatch.setattr(service.summaries, "versions", first_read_waits)
        earlier = asyncio.create_task(screen.refresh_timeline())
        await read.wait()  # it read the old version in force
        await service.summaries.activate(conversation.id, other.version)
        await screen.refresh_timeline()
        assert screen.timeline.active_id == other.id
        go_on.set()
        await earlier
        assert screen.timeline.active_id == other.id
