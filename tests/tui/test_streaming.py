"""Streaming a reply into its message view: coalesced appends, inert text, the finished look,
and full garbage collections held off while it streams."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Markdown

from tests.tui.helpers import until
from tui_chat.core.models import Message, MessageStatus
from tui_chat.tui import gc_pause
from tui_chat.tui.text import inert
from tui_chat.tui.widgets import reply_stream
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.reply_stream import ReplyStream

REPLY = """## Plan

Intro with **bold**, `code`, [red]markup[/red] and an escape \x1b[31mred\x1b[0m.

- one
- two
  - nested

> a quote

---

| a | b |
|---|---|
| 1 | 2 |

```python
def f(x):
    return x * 2
```

1. first
2. second

Last paragraph.
"""


def _message(text: str, status: MessageStatus = "complete", message_id: int = 2) -> Message:
    return Message(
        message_id, "c", "assistant", [], text, 1, 0, status, "2026-03-14T10:00:00+00:00"
    )


class _Pane(App[None]):
    """A chat-like scroll with one assistant message view."""

    def __init__(self, view: MessageView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.view


def _chunks(text: str) -> list[str]:
    """``text`` in chunks of up to three words, as the API streams it."""
    chunks = re.findall(r"(?:\s*\S+){1,3}\s*", text)
    assert "".join(chunks) == text
    return chunks


def _screen_lines(app: App[None]) -> list[str]:
    lines = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.fixture(autouse=True)
def no_gc_hold_left() -> Iterator[None]:
    """Every test leaves full collections as it found them."""
    threshold = gc.get_threshold()
    yield
    assert not gc_pause.held()
    assert gc.get_threshold() == threshold


async def test_deltas_written_between_appends_are_appended_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reply_stream, "SETTLE", 3600.0)  # no pause in the deltas ends it
    view = MessageView(_message("", "streaming"))
    async with _Pane(view).run_test(size=(80, 40)) as pilot:
        markdown = view.query_one(Markdown)
        stream = ReplyStream(markdown, interval=60)
        stream.write("First ")
        await pilot.pause()
        assert markdown.source == "First "  # the first delta goes out at once
        stream.write("second ")
        stream.write("third.")
        await pilot.pause()
        assert markdown.source == "First "  # the others wait for the interval...
        await stream.stop()
        assert markdown.source == "First second third."  # ...or for the stop
        assert stream.stopped
        with pytest.raises(RuntimeError):
            stream.write("late")


async def test_a_line_ending_split_between_deltas_stays_one_line_ending() -> None:
    view = MessageView(_message("", "streaming"))
    async with _Pane(view).run_test(size=(80, 40)) as pilot:
        markdown = view.query_one(Markdown)
        stream = ReplyStream(markdown, interval=0)
        stream.write("one\r")
        await pilot.pause()
        stream.write("\ntwo\r")
        await stream.stop()
        assert markdown.source == inert("one\r\ntwo\r") == "one\ntwo␍"


async def test_streamed_text_is_inert_and_finishes_as_stored_without_a_rerender() -> None:
    view = MessageView(_message("", "streaming"))
    async with _Pane(view).run_test(size=(80, 40)) as pilot:
        for chunk in _chunks(REPLY):
            await view.write(chunk)
        markdown = view.query_one(Markdown)
        await until(pilot, lambda: markdown.source == inert(REPLY))  # all appended
        blocks = list(markdown.children)
        assert len(blocks) > 5
        await view.finish(_message(REPLY))
        await pilot.pause()
        assert markdown.source == inert(REPLY)
        assert "\x1b" not in markdown.source and "␛[31m" in markdown.source
        assert list(markdown.children) == blocks  # kept, not rendered again
        assert "[red]markup[/red]" in "\n".join(_screen_lines(pilot.app))


async def test_a_streamed_reply_looks_like_the_stored_one() -> None:
    async def shown(stream: bool, expected: list[str] | None = None) -> list[str]:
        view = MessageView(_message("" if stream else REPLY, "streaming" if stream else "complete"))
        app = _Pane(view)
        async with app.run_test(size=(80, 120)) as pilot:
            if stream:
                for chunk in _chunks(REPLY):
                    await view.write(chunk)
                    await pilot.pause()
                await view.finish(_message(REPLY))
            await pilot.pause()
            await pilot.pause()
            # The finished reply's last render and reflow can take more frames on a loaded
            # machine (two pauses were one frame short there): wait for the lines, then compare.
            if expected is not None:
                with contextlib.suppress(AssertionError):  # the comparison below says how
                    await until(pilot, lambda: _screen_lines(app) == expected, rounds=5000)
            return _screen_lines(app)

    stored = await shown(stream=False)
    assert stored == await shown(stream=True, expected=stored)
    text = "\n".join(stored)
    # The rule keeps one blank line above it, the list its bullets, the code its lines.
    assert re.search(r"a quote\n▌\s*\n▌\s*\n▌ ─{20,}", text), text
    assert "• one" in text and "return x * 2" in text


@pytest.mark.parametrize("cut", ["def f(", "return x * 2\n`"], ids=["first-line", "closing-fence"])
async def test_a_code_fence_streamed_in_two_parts_is_drawn_as_stored(cut: str) -> None:
    """The second part replaces the fence the first part mounted: updated in place, it kept the
    first part's height now and then (one line short, or one too tall with a backtick of its
    closing line; found under load, 3 of 15 at Pilot's 4 ms slices)."""

    async def shown(parts: list[str], expected: list[str] | None = None) -> list[str]:
        stream = bool(parts)
        view = MessageView(_message("" if stream else REPLY, "streaming" if stream else "complete"))
        app = _Pane(view)
        async with app.run_test(size=(80, 120)) as pilot:
            for part in parts:
                await view.write(part)
                await pilot.pause()
            if stream:
                await view.finish(_message(REPLY))
            await pilot.pause()
            await pilot.pause()
            if expected is not None:  # its last reflow may take more frames under load
                with contextlib.suppress(AssertionError):  # the comparison below says how
                    await until(pilot, lambda: _screen_lines(app) == expected, rounds=500)
            return _screen_lines(app)

    at = REPLY.index(cut) + len(cut)
    stored = await shown([])
    assert await shown([REPLY[:at], REPLY[at:]], expected=stored) == stored


async def test_full_collections_wait_while_a_reply_streams() -> None:
    old = gc.get_threshold()[2]
    view = MessageView(_message("", "streaming"))
    async with _Pane(view).run_test(size=(80, 40)) as pilot:
        await view.write("Hello")
        assert gc_pause.held() and gc.get_threshold()[2] > 1_000_000
        await view.finish(_message("Hello"))
        await pilot.pause()
        assert gc_pause.held()  # released a moment after the finished reply is drawn
    assert not gc_pause.held() and gc.get_threshold()[2] == old  # at the latest on unmount


def test_gc_holds_are_counted() -> None:
    young, middle, old = gc.get_threshold()
    gc_pause.hold()
    gc_pause.hold()
    gc_pause.release(collect=False)
    assert gc_pause.held() and gc.get_threshold() == (young, middle, gc.get_threshold()[2])
    assert gc.get_threshold()[2] != old
    gc_pause.release()
    assert not gc_pause.held() and gc.get_threshold() == (young, middle, old)
    gc_pause.release()  # one too many: ignored
    assert gc.get_threshold() == (young, middle, old)


class _NoMessages:
    """A message source with nothing in it (the views are added directly)."""

    async def messages(
        self,
        conversation_id: str,
        *,
        before_id: int | None = None,
        after_id: int | None = None,
        limit: int = 50,
    ) -> list[Message]:
        return []

    async def pinned_ids(self, conversation_id: str) -> set[int]:
        return set()


class _Chat(App[None]):
    """The real chat pane, following a reply."""

    documents_built = 0
    """Markdown documents whose blocks are all mounted (Textual parses a document in a thread
    and mounts its blocks after: until then the pane's height is not the message's)."""

    def compose(self) -> ComposeResult:
        yield ChatPane(_NoMessages(), id="chat")

    def on_markdown_table_of_contents_updated(self) -> None:
        self.documents_built += 1


async def _at_end(pilot: Pilot[None], pane: ChatPane) -> None:
    """Scroll the pane to its end and wait until it is there.

    A scroll asked for before a layout has shown the scrollbar is not taken (Textual's
    ``allow_vertical_scroll`` is still false, so ``scroll_y`` stayed 0 on a loaded machine), and
    one asked for before the last blocks are laid out stops short: it is asked again each frame
    until the pane is at its end.
    """

    def there() -> bool:
        if pane.max_scroll_y > 0 and pane.scroll_y == pane.max_scroll_y:
            return True
        pane.scroll_end(animate=False, immediate=True)
        return False

    await until(pilot, there)
    await pilot.pause()


LONG = "\n\n".join(f"## Part {n}\n\nParagraph {n} " + "word " * 30 for n in range(40))


async def test_blocks_far_above_a_followed_stream_fold_without_moving_anything() -> None:
    stored_app = _Chat()
    async with stored_app.run_test(size=(60, 20)) as pilot:
        pane = stored_app.query_one(ChatPane)
        await pane.add_message(_message(LONG))
        # The reference is taken once the stored message is built and laid out (a loaded
        # machine can take many frames), at the pane's end.
        await until(pilot, lambda: stored_app.documents_built > 0)
        await _at_end(pilot, pane)
        stored_bottom, stored_height = _screen_lines(stored_app), pane.max_scroll_y
        pane.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        stored_top = _screen_lines(stored_app)

    app = _Chat()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(ChatPane)
        view = await pane.add_message(_message("", "streaming"))
        pane.anchor()
        chunks = _chunks(LONG)
        for start in range(0, len(chunks), 8):
            for chunk in chunks[start : start + 8]:
                await view.write(chunk)
            await pilot.pause()  # a frame between bursts of deltas
        markdown = view.query_one(Markdown)
        await until(pilot, lambda: markdown.source == inert(LONG))  # all appended
        await pilot.pause()
        hidden = [block for block in markdown.children if not block.display]
        assert len(hidden) >= 12  # folded while streaming...
        await view.finish(_message(LONG))
        await pilot.pause()
        await until(pilot, lambda: pane.max_scroll_y > 0 and pane.scroll_y == pane.max_scroll_y)
        await pilot.pause()
        assert _screen_lines(app) == stored_bottom  # ...with the same screen
        assert pane.max_scroll_y == stored_height  # ...and the same scroll height
        pane.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert all(block.display for block in markdown.children)  # scrolling up unfolds
        assert _screen_lines(app) == stored_top
