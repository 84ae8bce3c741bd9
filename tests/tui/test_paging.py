"""Paging the chat pane's window keeps the place on screen.

A page mounted above the view is laid out after it is mounted (Textual builds each Markdown
document's blocks after the widget is in, and lays them out on a later frame): what was at the
top of the view must stay there whenever the layout comes, and held keys keep paging.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Markdown

from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, ready, settle, until
from tui_chat.core.models import Conversation
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.page_loads import PageLoads
from tui_chat.tui.widgets.pages import Pages


async def _conversation(service: ChatService, folder: Path, count: int) -> Conversation:
    messages = [
        {
            "role": ("user", "assistant")[i % 2],
            "content": f"question {i}" if i % 2 == 0 else f"answer {i}\n\nmore\n\nlines",
        }
        for i in range(count)
    ]
    path = folder / "long.json"
    path.write_text(json.dumps({"title": "Long", "messages": messages}))
    return await service.transfer.import_file(path)


def _row(pane: ChatPane, view: MessageView) -> int:
    """The view's first line, counted from the top of the pane's content (negative: above)."""
    return view.virtual_region.y - round(pane.scroll_y)


class LateDocuments:
    """Markdown documents mounted from now on stay empty until :meth:`build` (their blocks
    come late, as on a loaded machine, where the parse runs in a thread)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.waiting: list[tuple[Markdown, str]] = []
        self.building: list[Markdown] = []
        late = self

        async def deferred(document: Markdown, _: events.Mount) -> None:
            late.waiting.append((document, document._initial_markdown or ""))

        monkeypatch.setattr(Markdown, "_on_mount", deferred)

    def build(self) -> None:
        """Build every waiting document's blocks (each in its own message loop)."""
        for document, text in self.waiting:
            document.call_later(document.update, text)
            self.building.append(document)
        self.waiting.clear()

    def built(self) -> bool:
        """Every document built so far has its blocks (or was pruned from the window)."""
        return all(len(d.children) > 0 or not d.is_attached for d in self.building)


async def test_the_place_is_kept_when_the_older_page_is_laid_out_late(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = await _conversation(service, tmp_path, 200)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        late = LateDocuments(monkeypatch)
        first_shown = pane.views[0]
        pane.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: len(pane.views) == Pages.FIRST_PAGE + Pages.PAGE)
        await settle(pilot)
        assert late.waiting  # the older page's replies have no blocks yet
        assert _row(pane, first_shown) == 0
        late.build()
        await until(pilot, late.built)
        await settle(pilot)
        # Each reply grew by its blocks above the view: what was at the top still is.
        assert _row(pane, first_shown) == 0
        assert pane.scroll_y > 0


async def test_the_place_is_kept_when_a_newer_page_prunes_the_top(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ChatPane, "MAX_MOUNTED", Pages.PAGE + 20)
    conversation = await _conversation(service, tmp_path, 200)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await pane.action_select_first()  # the first page, newer ones not mounted
        await settle(pilot)
        assert pane.has_newer
        late = LateDocuments(monkeypatch)
        pane.scroll_end(animate=False, immediate=True)
        await until(pilot, lambda: len(pane.views) == ChatPane.MAX_MOUNTED)
        await settle(pilot)
        top = next(v for v in pane.views if v.virtual_region.bottom > pane.scroll_y)
        row = _row(pane, top)
        late.build()
        await until(pilot, late.built)
        await settle(pilot)
        # Messages above were pruned and the new page grew below: the view did not move.
        assert pane.views[0].message_id > 1
        assert _row(pane, top) == row


def _key(app: Any, name: str) -> None:
    driver = app._driver
    assert driver is not None
    event = events.Key(name, None)
    event.set_sender(app)
    driver.send_message(event)


@pytest.mark.parametrize("key", ["up", "pageup"])
async def test_held_keys_page_to_the_first_message_while_pages_are_laid_out_late(
    service: ChatService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    small_pages: None,
) -> None:
    """Keys held (queued faster than pages load) while every older page is laid out late:
    paging never stalls on a view left at the top of an unbuilt page (four pages to cross:
    20 + 3.5 x 20, as 180 messages were 20 + 3.2 x 50)."""
    conversation = await _conversation(service, tmp_path, 90)
    first = (await service.messages.history(conversation.id))[0]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        late = LateDocuments(monkeypatch)
        await pilot.press("f5")
        await until(pilot, lambda: app.focused is pane and pane.navigating)
        for _ in range(4):
            # A burst of presses, then the documents of the pages they loaded are built.
            for _ in range(60):
                _key(app, key)
            await settle(pilot)
            late.build()
            await until(pilot, late.built)
            await settle(pilot)
            if not pane.has_older:
                break
        assert not pane.has_older
        assert pane.views[0].message_id == first.id


@pytest.mark.slow  # a soak: 400 to 600 keys queued through 400 messages
@pytest.mark.parametrize("key", ["up", "pageup"])
async def test_one_burst_of_held_keys_pages_to_the_first_message(
    service: ChatService, tmp_path: Path, key: str
) -> None:
    """Keys queued at once, far faster than pages load: each page taken up as soon as it is
    laid out, the keys past it page on (they stalled at the top of the fifth page: #9781 of
    10,000, until a slower key came). At the product's page size: with pages of 20
    (``small_pages``) one 'up' of 169 was lost in 2 runs of 5, the race that
    ``test_up_at_the_top_while_a_scroll_loads_the_last_older_page_moves_on`` now holds."""
    conversation = await _conversation(service, tmp_path, 400)
    ids = [m.id for m in await service.messages.history(conversation.id)]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        await pilot.press("f5")
        await until(pilot, lambda: app.focused is pane and pane.selected == ids[-1])
        for _ in range(len(ids) - 1 if key == "up" else 600):
            _key(app, key)
        await until(pilot, lambda: not pane.has_older)
        await settle(pilot)
        await settle(pilot)
        assert pane.views[0].message_id == ids[0]
        if key == "up":  # one message a press, none lost
            assert pane.selected == ids[0]


@pytest.mark.slow  # a soak: 600 keys queued through 400 messages
async def test_one_burst_of_page_downs_pages_newer_messages_to_the_last(
    service: ChatService, tmp_path: Path
) -> None:
    """From the first message (g), pagedowns queued at once load the newer pages of the pruned
    window one after another (they were dropped while a page loaded: one page a burst)."""
    conversation = await _conversation(service, tmp_path, 400)
    ids = [m.id for m in await service.messages.history(conversation.id)]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await pilot.press("f5", "g")
        await until(pilot, lambda: pane.selected == ids[0] and pane.has_newer)
        await settle(pilot)
        for _ in range(600):
            _key(app, "pagedown")
        await until(pilot, lambda: not pane.has_newer)
        await settle(pilot)
        await settle(pilot)
        assert pane.views[-1].message_id == ids[-1]
        assert pane.scroll_y == pane.max_scroll_y


async def test_a_message_added_while_the_window_is_shown_is_kept_once(
    service: ChatService, tmp_path: Path
) -> None:
    """A message saved while the pane reads its page (a prompt typed ahead at start-up, a reply
    starting) is neither removed by the page replacing the window nor shown twice (a reply's
    view removed so lost its stream: test_a_stream_stopped_before_it_ran… under load)."""
    conversation = await _conversation(service, tmp_path, 6)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        showing = asyncio.create_task(pane.show(conversation.id))
        await asyncio.sleep(0)  # the show has begun reading its page
        message = await engine_of(service).store.messages.add(
            conversation.id,
            role="user",
            content=[{"type": "text", "text": "typed ahead"}],  # (empty: the gauge's count fails)
            text="typed ahead",
            token_count=2,
        )
        view = await pane.add_message(message)
        await showing
        await settle(pilot)
        assert view.is_attached and view in pane.views
        ids = [v.message_id for v in pane.views]
        assert ids.count(message.id) == 1 and ids[-1] == message.id


async def test_up_at_the_top_while_a_scroll_loads_the_last_older_page_moves_on(
    service: ChatService, tmp_path: Path
) -> None:
    """'up' on the first mounted message while a page is already loading (a scroll at the
    top started it): that load brings the older messages, and the key selects the one above.
    It was lost: its own load found nothing more and the key did nothing (one 'up' of 169
    in a burst, on pages of 20)."""
    count = Pages.FIRST_PAGE + 10  # one older page left, of 10
    conversation = await _conversation(service, tmp_path, count)
    ids = [m.id for m in await service.messages.history(conversation.id)]
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        assert pane.has_older and pane.views[0].message_id == ids[10]
        pane.selected = ids[10]
        async with pane._page_lock:  # the scroll's load holds the lock...
            key = asyncio.create_task(pane.action_select_previous())
            await until(
                pilot,
                lambda: pane._page_lock._waiters is not None and bool(pane._page_lock._waiters),
            )
            assert await pane._load_older()  # ...and brings the last older page
        await key
        assert not pane.has_older
        assert pane.selected == ids[9]


async def test_a_scroll_towards_the_top_loads_the_older_page_ahead_of_it(
    service: ChatService, tmp_path: Path
) -> None:
    """A page up that stops short of the top, within two screens of it, has the older page
    mounted above (a slice a frame), the view where the key left it: held keys find the
    messages in, not an edge to wait at."""
    conversation = await _conversation(service, tmp_path, 200)
    app = make_app(service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        pane = chat(app)
        await settle(pilot)
        ahead = PageLoads.AHEAD * pane.scrollable_content_region.height
        pane.scroll_to(y=ahead + 1, animate=False, immediate=True)
        await settle(pilot)
        assert len(pane.views) == Pages.FIRST_PAGE  # not yet near: nothing loaded
        pane.action_page_up()
        assert 0 < pane.scroll_y <= ahead
        top = next(v for v in pane.views if v.virtual_region.bottom > pane.scroll_y)
        row = _row(pane, top)
        await until(pilot, lambda: len(pane.views) >= Pages.FIRST_PAGE + Pages.PAGE)
        await settle(pilot)
        assert _row(pane, top) == row  # the view did not move
        assert pane.scroll_y > ahead  # the page above is in: the top is far again
