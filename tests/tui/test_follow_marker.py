"""Free scrolling while a reply streams: scrolled up, the chat stays where the
user reads while text arrives below; a marker says there is new text below; ``end`` (in the
messages, or in the composer at the end of its line) or a click on the marker follows again.

The reply hangs mid-stream on the fake server (it stays "streaming"); the text that arrives
afterwards is posted as the same ``ReplyDelta`` message the engine's bridge posts."""

from __future__ import annotations

import re

from textual.widgets import Markdown
from textual.worker import WorkerState

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, ready, until
from tui_chat.engine import events
from tui_chat.engine.service import ChatService
from tui_chat.tui import messages
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.follow_marker import FollowMarker
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.stream_markdown import StreamMarkdown

LONG = "\n\n".join(f"Paragraph {n}: " + "word " * 25 for n in range(60))
SENT = "".join(re.findall(r"\s*\S+\s*", LONG)[: 100 * 12]).strip()
"""What the server sends before it hangs: 100 deltas of 12 words."""


async def _streaming_and_scrolled_up(
    pilot: ChatPilot, screen: MainScreen, fake_anthropic: FakeAnthropic
) -> int:
    """Send, wait until the hanging reply fills more than the screen, scroll a page up."""
    fake_anthropic.push_hang(600, after_chunks=100, text=LONG, words_per_chunk=12)
    screen.composer.load_text("tell me a long story")
    await pilot.press("enter")
    chat = screen.chat
    await until(pilot, lambda: screen.streaming_id is not None)
    # Every delta before the hang is shown: none arrives after the scroll up below.
    await until(pilot, lambda: any(md.source.strip() == SENT for md in chat.query(Markdown)))
    # ...and shown: no block held back (a block shown after the scroll up grows the chat).
    await until(
        pilot,
        lambda: not any(isinstance(md, StreamMarkdown) and md.held for md in chat.query(Markdown)),
    )
    await until(pilot, lambda: chat.max_scroll_y > chat.size.height)
    await until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)  # following
    assert screen.streaming_id is not None
    await pilot.press("f5", "pageup")
    await until(pilot, lambda: chat.scroll_y < chat.max_scroll_y)
    return screen.streaming_id


def _held(screen: MainScreen) -> bool:
    """Whether a block of the streaming reply is held back (shown on a later frame)."""
    return any(isinstance(md, StreamMarkdown) and md.held for md in screen.chat.query(Markdown))


def _gauge_settled(screen: MainScreen) -> bool:
    """Whether the gauge's counts of the draft are made (their timers fired, no count runs)
    and it has the height of what it shows."""
    if screen.drafting.recount_due:
        return False
    counting = (WorkerState.PENDING, WorkerState.RUNNING)
    if any(w.group == "gauge" and w.state in counting for w in screen.app.workers):
        return False
    gauge = screen.gauge
    width = gauge.content_size.width
    return bool(width) and len(gauge.render().wrap(width)) == gauge.content_size.height


def _unfolded_and_laid_out(view: MessageView) -> bool:
    """Whether every block of the reply is shown and has its place in the layout."""
    document = view.query_one(Markdown)
    return all(block.display and block.virtual_region.height for block in document.children)


def _more_text(screen: MainScreen, reply_id: int) -> None:
    chunk = "\n\nMore text " + "arrives " * 40
    screen.post_message(messages.ReplyDelta(events.ReplyDelta(reply_id, chunk)))


async def test_scrolled_up_the_chat_stays_and_a_marker_shows_new_text_below(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chat, marker = screen.chat, screen.query_one(FollowMarker)
        reply_id = await _streaming_and_scrolled_up(pilot, screen, fake_anthropic)
        # Scrolling up unfolded the reply's head (folded while it was followed): once that is
        # laid out, no marker, for no new text came (the chat growing by a relayout showed
        # it, in 2 of 5 runs at load).
        reply = screen.chat.view_for(reply_id)
        assert reply is not None
        await until(pilot, lambda: _unfolded_and_laid_out(reply))
        assert not marker.display
        place, height = chat.scroll_y, chat.max_scroll_y
        _more_text(screen, reply_id)
        await until(pilot, lambda: chat.max_scroll_y > height)
        await until(pilot, lambda: marker.display)
        assert chat.scroll_y == place  # not snapped back to the bottom
        assert "new text below" in str(marker.visual)
        # end (the messages have the focus) follows again: at the end, and it keeps up.
        await pilot.press("end")
        await until(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not marker.display)
        height = chat.max_scroll_y
        _more_text(screen, reply_id)
        await until(pilot, lambda: chat.max_scroll_y > height)
        await until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)
        assert not marker.display


async def test_end_in_the_composer_and_a_click_on_the_marker_follow_again(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chat, marker = screen.chat, screen.query_one(FollowMarker)
        reply_id = await _streaming_and_scrolled_up(pilot, screen, fake_anthropic)
        screen.composer.focus()
        await pilot.press("o", "k")
        _more_text(screen, reply_id)
        await until(pilot, lambda: marker.display)
        await pilot.press("end")  # the cursor is at the end of its line: follow
        await until(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not marker.display)
        assert screen.composer.text == "ok"
        # Scrolled up again, a click on the marker follows too.
        await pilot.press("f5", "pageup")
        await until(pilot, lambda: chat.scroll_y < chat.max_scroll_y)
        _more_text(screen, reply_id)
        # Shown and laid out, with what moves it laid out too: the gauge below it done with
        # its counts of the draft "ok" (timed after the typing; a new line of its legend moved
        # the marker up two rows between the press and the click) and drawn at its height, no
        # block of the text held back.
        await until(
            pilot,
            lambda: (
                marker.display
                and marker.region.height == 1
                and not _held(screen)
                and _gauge_settled(screen)
            ),
        )
        place = marker.region.offset
        landed = await pilot.click(FollowMarker)
        assert landed, ("the click landed elsewhere", place, marker.region, screen.gauge.region)
        await until(
            pilot,
            lambda: chat.scroll_y == chat.max_scroll_y and not marker.display,
            state=lambda: (
                chat.scroll_y,
                chat.max_scroll_y,
                marker.display,
                chat.is_anchored,
                chat._anchor_released,
                screen.focused,
            ),
        )
