"""Every keystroke lands where it was meant.

Keys are queued at once on the app's driver, faster than the app drains them, as a fast typist
or a loaded machine delivers them: printable keys are text unless navigation mode (``f5``) is
on, and none is lost or reordered when the focus moves meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, notifications, ready, settle, until
from tui_chat.core.models import Conversation
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen

NAMED = {"enter": "\r", "tab": "\t", "escape": "\x1b", "space": " "}


def _is_named(key: str) -> bool:
    return (
        key in NAMED
        or "+" in key
        or re.fullmatch(r"f[0-9]+|up|down|home|end|pageup|backspace", key) is not None
    )


def burst(app: App[None], *keys: str) -> None:
    """Queue key presses at once: named keys (``enter``, ``f5``), or text typed a character
    at a time."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        for name in [key] if _is_named(key) else ["space" if c == " " else c for c in key]:
            event = events.Key(name, NAMED.get(name, name if len(name) == 1 else None))
            event.set_sender(app)
            driver.send_message(event)


async def _chat(service: ChatService, folder: Path, texts: list[str]) -> Conversation:
    messages = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]
    path = folder / "chat.json"
    path.write_text(json.dumps({"title": "Chat", "messages": messages}))
    return await service.transfer.import_file(path)


TEXTS = ["where to go?", "Lisbon.", "and when?", "In May."]


async def _drained(pilot: ChatPilot) -> None:
    """Let every queued key be handled (each one posts work of its own)."""
    await settle(pilot)
    await pilot.pause()
    await settle(pilot)


async def test_letters_typed_after_tab_to_the_messages_are_text_in_order(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    conversation = await _chat(keyed_service, tmp_path, TEXTS)
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is screen.chat)
        assert not screen.chat.navigating
        burst(app, "rTyped ahead title pie", "enter")
        await fake_anthropic.wait_for(1, timeout=60)
        await _drained(pilot)
        last = fake_anthropic.bodies[-1]["messages"][-1]["content"][-1]["text"]
        assert last == "rTyped ahead title pie"
        assert await keyed_service.messages.pinned_ids(conversation.id) == set()
        assert not any("Copied" in n for n in notifications(app))


async def test_f5_is_a_visible_navigation_mode_and_i_or_escape_leave_it_in_order(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await _chat(service, tmp_path, TEXTS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        pane = screen.chat
        # f5 and the letters after it in one burst: the letters are commands.
        burst(app, "f5", "k", "p")
        await _drained(pilot)
        assert pane.navigating and app.focused is pane
        assert pane.border_title is not None and "NAVIGATION" in str(pane.border_title)
        footer_keys = set(screen.active_bindings)
        assert {"p", "e", "c"} <= footer_keys
        assert await service.messages.pinned_ids(conversation.id) == {pane.selected}
        # i leaves: what follows is text, the first letters included.
        burst(app, "i", "please edit")
        await _drained(pilot)
        assert not pane.navigating and app.focused is screen.composer
        assert screen.composer.text == "please edit"
        assert not {"p", "e", "c"} & set(screen.active_bindings)
        # escape leaves too.
        screen.composer.clear()
        burst(app, "f5", "escape", "pie")
        await _drained(pilot)
        assert screen.composer.text == "pie" and not pane.navigating
        assert len(await service.messages.pinned_ids(conversation.id)) == 1


async def test_e_then_typing_at_once_adds_to_the_edited_prompt(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await _chat(service, tmp_path, TEXTS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        burst(app, "f5", "k", "e", " in spring, please")
        await _drained(pilot)
        assert isinstance(app.screen, MainScreen)
        assert screen.composer.text == "and when? in spring, please"
        assert screen.drafting.editing is not None and not screen.chat.navigating
        assert await service.messages.pinned_ids(conversation.id) == set()


async def test_enter_while_a_reply_finishes_queues_each_prompt_on_its_own(
    keyed_service: ChatService,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reply is shown complete while its worker still finishes (calibration held here):
    enter then queues the prompt, visibly, and the next one typed is not glued to it."""
    conversation = await keyed_service.conversations.new()
    release = asyncio.Event()
    store = engine_of(keyed_service).store
    set_calibration = store.set_calibration

    async def held(*args: Any) -> None:
        await release.wait()
        await set_calibration(*args)

    monkeypatch.setattr(store, "set_calibration", held)
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        burst(app, "alpha", "enter")
        await fake_anthropic.wait_for(1, timeout=60)
        replies = lambda: [v for v in screen.chat.views if v.message.role == "assistant"]  # noqa: E731
        await until(pilot, lambda: bool(replies()) and replies()[-1].message.status == "complete")
        assert app.replying  # the worker has not ended
        burst(app, "beta", "enter", "gamma", "enter")
        await until(pilot, lambda: len(screen.replies.queued) == 2)
        assert screen.composer.text == ""
        assert "2 prompts queued" in str(screen.composer.border_subtitle)
        assert not any("still streaming" in n for n in notifications(app))
        release.set()
        await fake_anthropic.wait_for(3, timeout=60)
        await until(pilot, lambda: not app.replying and not screen.replies.queued)
        await settle(pilot)
        sent = [b["messages"][-1]["content"][-1]["text"] for b in fake_anthropic.bodies]
        assert sent == ["alpha", "beta", "gamma"]
        assert screen.composer.border_subtitle is None


async def _long(service: ChatService, folder: Path, turns: int) -> Conversation:
    texts = [
        f"question {i}" if i % 2 == 0 else f"answer {i}\n\nmore\n\nlines" for i in range(turns)
    ]
    return await _chat(service, folder, texts)


async def test_home_and_g_reach_the_conversations_first_message(
    service: ChatService, tmp_path: Path, small_pages: None
) -> None:
    conversation = await _long(service, tmp_path, 160)
    history = await service.messages.history(conversation.id)
    first, last = history[0], history[-1]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        pane = screen.chat
        assert pane.has_older
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is pane)
        burst(app, "home")
        await until(pilot, lambda: pane.selected == first.id)
        assert not pane.has_older and pane.views[0].message_id == first.id
        burst(app, "end")
        await until(
            pilot,
            lambda: pane.selected == last.id,
            state=lambda: (
                pane.selected,
                (first.id, last.id),
                [v.message_id for v in pane.views][-3:],
                (pane.has_older, pane.has_newer),
                app.focused,
                [(w.name, w.state.name) for w in app.workers],
            ),
        )
        burst(app, "f5", "g")
        await until(pilot, lambda: pane.selected == first.id)
        assert pane.navigating


@pytest.mark.slow  # a soak: 200 page-ups, 3 pages of 20 (fast: test_paging.py)
async def test_held_page_up_keeps_loading_older_pages_to_the_first_message(
    service: ChatService, tmp_path: Path, small_pages: None
) -> None:
    conversation = await _long(service, tmp_path, 70)  # 20 + 2.5 x 20, as 150 were 20 + 2.6 x 50
    first = (await service.messages.history(conversation.id))[0]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        pane = screen.chat
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is pane)
        # Far more presses than pages: they arrive while pages load, as a held key's do.
        burst(app, *["pageup"] * 200)
        await until(pilot, lambda: not pane.has_older)
        await _drained(pilot)
        assert pane.views[0].message_id == first.id


async def test_a_search_jump_shows_the_hit_with_its_reply_and_no_false_left_out_note(
    service: ChatService, tmp_path: Path
) -> None:
    texts = [f"question {i}" if i % 2 == 0 else f"answer {i}" for i in range(80)]
    texts[40] = "a shell one-liner to count files?"
    conversation = await _chat(service, tmp_path, texts)
    other = await service.conversations.new("elsewhere")
    stored = await service.messages.history(conversation.id)
    hit, reply = stored[40], stored[41]
    app = make_app(service, other.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+f", *"one-liner", "enter")
        search = app.screen
        await until(pilot, lambda: bool(getattr(search, "hits", None)))
        await pilot.press("down", "enter")
        await until(pilot, lambda: screen.chat.selected == hit.id)
        await settle(pilot)
        pane = screen.chat
        shown = [v.message_id for v in pane.views]
        assert reply.id in shown and shown.index(reply.id) == shown.index(hit.id) + 1
        assert pane.has_newer
        assert not any(v.left_out for v in pane.views)


async def test_a_rename_typed_in_one_burst_keeps_every_character(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await service.conversations.new("Old")
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        burst(app, "f2", "backspace", "backspace", "backspace", "Trip to Lisbon", "enter")
        await until(pilot, lambda: screen.conversation is not None and screen.title != "Old")
        await _drained(pilot)
        assert (await service.conversations.resolve(conversation.id)).title == "Trip to Lisbon"
        assert screen.composer.text == ""


async def test_prompts_typed_while_an_edit_forks_go_to_the_fork_in_order(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    conversation = await _chat(keyed_service, tmp_path, TEXTS)
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        burst(app, "f5", "k", "e", " exactly", "enter", "second", "enter", "third")
        await fake_anthropic.wait_for(2, timeout=60)
        await until(pilot, lambda: not app.replying and not screen.replies.queued)
        await _drained(pilot)
        sent = [b["messages"][-1]["content"][-1]["text"] for b in fake_anthropic.bodies]
        assert sent == ["and when? exactly", "second"]
        assert screen.conversation_id != conversation.id
        assert screen.composer.text == "third"
        assert len(await keyed_service.messages.history(conversation.id)) == len(TEXTS)


async def test_letters_typed_in_the_conversation_list_are_text_unless_navigating(
    service: ChatService, tmp_path: Path
) -> None:
    conversation = await _chat(service, tmp_path, TEXTS)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        listing = screen.conversations
        await pilot.press("ctrl+b")
        await until(pilot, lambda: listing.has_focus_within)
        # n, r, d, a typed at speed: text in the composer, not commands on the list.
        burst(app, "rename and delete a draft")
        await _drained(pilot)
        assert screen.composer.text == "rename and delete a draft"
        assert app.screen is screen and not listing.navigating
        assert [i.conversation.title for i in await service.conversations.list()] == ["Chat"]
        # f5 in the list: a visible navigation mode where the letters are commands.
        screen.composer.clear()
        await pilot.press("ctrl+b", "ctrl+b")
        await until(pilot, lambda: listing.has_focus_within)
        burst(app, "f5", "n")
        await until(pilot, lambda: screen.conversation_id != conversation.id)
        assert len(await service.conversations.list()) == 2
        if screen.panels.is_shown("conversations"):  # the list stayed open: close it first
            await pilot.press("ctrl+b")
        await pilot.press("ctrl+b")
        await until(pilot, lambda: listing.has_focus_within)
        burst(app, "f5")
        await until(pilot, lambda: listing.navigating)
        assert "NAVIGATION" in str(listing.border_title)
        assert {"n", "r", "d", "a"} <= set(screen.active_bindings)
        # i leaves it, and what follows is text.
        burst(app, "i", "and more")
        await _drained(pilot)
        assert not listing.navigating and app.focused is screen.composer
        assert screen.composer.text == "and more"
