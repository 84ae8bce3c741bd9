"""Keys typed while a reply streams wait behind as little layout as possible (the figures come
from ``benchmarks/tui_stream.py`` through a real terminal, not from here):
a streaming reply's appends wait for the frame after a key while the user types, and a new
gauge figure is repainted without laying the screen out again unless the gauge's height
changes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from textual import messages
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Markdown

from tests.tui.helpers import settle, until
from tests.tui.test_budget_gauge import _breakdown
from tui_chat.tui.widgets import reply_stream
from tui_chat.tui.widgets.reply_stream import ReplyStream
from tui_chat.tui.widgets.stream_markdown import StreamMarkdown
from tui_chat.tui.widgets.token_gauge import TokenGauge


async def _typing_until(pilot: Any, condition: Callable[[], bool]) -> None:
    """Type (a key a round) until ``condition()`` holds: a held stream moves only after keys."""
    for _ in range(5_000):
        if condition():
            return
        reply_stream.note_key()
        await pilot.pause()
    assert condition()


class _One(App[None]):
    def __init__(self, widget: Any) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def test_appends_wait_for_a_pause_in_the_typing(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pause never comes and the hold never ends within the test: no wall time is read.
    monkeypatch.setattr(reply_stream, "TYPING", 3600.0)
    monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
    monkeypatch.setattr(reply_stream, "SETTLE", 3600.0)
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        stream = ReplyStream(markdown, interval=0.001)
        stream.write("First ")
        await pilot.pause()
        assert markdown.source == "First "  # nothing typed yet: appended at once
        reply_stream.note_key()
        stream.write("second ")
        for _ in range(5):
            await pilot.pause()
        assert markdown.source == "First "  # the user is typing: held
        await stream.stop()
        assert markdown.source == "First second "  # the end of a reply is never held


async def test_when_the_deltas_stop_what_is_pending_is_shown_even_while_typing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reply_stream, "TYPING", 3600.0)
    monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
    monkeypatch.setattr(reply_stream, "SETTLE", 0.0)  # every pause in the deltas counts
    markdown = Markdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        stream = ReplyStream(markdown, interval=3600)  # nor does the interval end
        stream.write("First ")
        await pilot.pause()
        reply_stream.note_key()
        stream.write("last words.")
        for _ in range(50):
            if markdown.source == "First last words.":
                break
            await pilot.pause()
        assert markdown.source == "First last words."  # shown before the reply is stored
        await stream.stop()


async def test_while_typing_new_blocks_are_mounted_hidden_and_shown_together_after_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Neither the typing nor the deltas end within the test: only keys move the stream on.
    monkeypatch.setattr(reply_stream, "TYPING", 3600.0)
    monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
    monkeypatch.setattr(reply_stream, "SETTLE", 3600.0)
    monkeypatch.setattr(reply_stream, "_last_key", -math.inf)
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        stream = ReplyStream(markdown, interval=0.001)
        stream.write("First paragraph.\n\n")
        await until(pilot, lambda: markdown.source == "First paragraph.\n\n")
        shown = list(markdown.children)
        reply_stream.note_key()
        stream.write("Second paragraph.\n\nThird ")
        for _ in range(5):
            await pilot.pause()
        assert markdown.source == "First paragraph.\n\n"  # the shown last block is kept as is
        # The hold is over: after the next key, what is pending is appended and its new
        # blocks shown together, but the last one (it may still grow), kept hidden.
        monkeypatch.setattr(reply_stream, "HOLD", 0.0)
        await _typing_until(pilot, lambda: "Third" in markdown.source and markdown.held == 1)
        blocks = list(markdown.children)
        assert [b.display for b in blocks] == [True] * (len(blocks) - 1) + [False]
        assert blocks[: len(shown)] == shown
        # Held again: a piece changes only the hidden last block, after a key.
        monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
        stream.write("words.\n\nFourth.")
        await _typing_until(pilot, lambda: markdown.source.endswith("Fourth."))
        assert all(b.display for b in blocks[:-1])
        assert markdown.held >= 1 and not markdown.children[-1].display
        await stream.stop()  # the end shows everything
        assert markdown.held == 0 and all(b.display for b in markdown.children)
        assert markdown.source == "First paragraph.\n\nSecond paragraph.\n\nThird words.\n\nFourth."


async def test_when_the_typing_stops_what_was_held_is_shown_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
    monkeypatch.setattr(reply_stream, "SETTLE", 3600.0)
    monkeypatch.setattr(reply_stream, "TYPING", 3600.0)
    monkeypatch.setattr(reply_stream, "_last_key", -math.inf)
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        stream = ReplyStream(markdown, interval=0.001)
        stream.write("Shown.\n\n")
        await until(pilot, lambda: markdown.source == "Shown.\n\n")
        monkeypatch.setattr(reply_stream, "HOLD", 0.0)
        reply_stream.note_key()
        stream.write("Held one.\n\nHeld two.\n\nHeld ")
        await _typing_until(pilot, lambda: markdown.held >= 1)
        monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
        stream.write("three.")
        await _typing_until(pilot, lambda: markdown.source.endswith("three."))
        assert markdown.held >= 1
        monkeypatch.setattr(reply_stream, "TYPING", 0.0)  # a last key, then the typing stops
        reply_stream.note_key()
        stream.write(" More.")
        await until(pilot, lambda: markdown.source.endswith("More."))
        await until(pilot, lambda: markdown.held == 0)
        assert all(b.display for b in markdown.children)
        await stream.stop()


def test_while_typing_the_time_an_append_took_to_draw_is_no_pause_in_the_deltas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deltas that came while a long layout ran wait in the screen's queue: a gap measured
    # from the last one seen to the end of that frame is not the reply's end (before, every
    # append whose frame took over SETTLE looked like the end and took all that was pending).
    monkeypatch.setattr(reply_stream, "_last_key", 100.4)  # typing
    stream = object.__new__(ReplyStream)
    stream._pending = ["pending "]
    stream._written = 100.0
    stream._drawn = 100.5  # an append's frame ended half a second after the last delta
    assert not stream._settled(100.5 + reply_stream.SETTLE / 2)
    assert stream._settled(100.5 + reply_stream.SETTLE)
    monkeypatch.setattr(reply_stream, "_last_key", 90.0)  # not typing: the end shows sooner
    assert stream._settled(100.5 + reply_stream.SETTLE / 2)


async def test_a_key_before_the_first_append_does_not_hold_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reply_stream, "TYPING", 3600.0)
    monkeypatch.setattr(reply_stream, "HOLD", 3600.0)
    reply_stream.note_key()
    markdown = Markdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        stream = ReplyStream(markdown, interval=0.001)
        stream.write("The reply starts ")
        await pilot.pause()
        assert markdown.source == "The reply starts "  # its first words show at once
        await stream.stop()


async def test_a_new_gauge_figure_is_repainted_and_lays_out_only_for_a_new_height() -> None:
    gauge = TokenGauge()
    async with _One(gauge).run_test(size=(120, 10)) as pilot:
        gauge.breakdown = _breakdown(system=3)
        await pilot.pause()
        assert gauge.size.height == 2
        layouts: list[bool] = []
        refresh = gauge.refresh

        def spy(*regions: Any, **options: Any) -> Any:
            layouts.append(bool(options.get("layout")))
            return refresh(*regions, **options)

        gauge.refresh = spy  # type: ignore[method-assign]
        gauge.breakdown = _breakdown(system=3, new_message=12)  # the draft grew by a word
        await pilot.pause()
        assert layouts and not any(layouts)  # repainted in place
        assert "draft 12" in str(gauge.render())
        layouts.clear()
        gauge.breakdown = replace(_breakdown(system=3), warnings=("a pin is over budget",))
        await pilot.pause()
        assert any(layouts)  # a third line: the screen is laid out again
        assert gauge.size.height == 3


async def test_a_held_block_replaced_by_an_append_stays_hidden() -> None:
    # Textual replaces a block whose kind changed (a paragraph that turns out to be a
    # heading) with ``mount``, not ``mount_all``: before, the replacement was shown at once
    # and the hidden pieces stopped until the next showing.
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        await markdown.append("Shown.\n\n")
        markdown.holding = True
        await markdown.append("Title")
        await markdown.append("\n=====\n")
        markdown.holding = False
        await pilot.pause()
        last = markdown.children[-1]
        assert type(last).__name__ == "MarkdownH1"
        assert not last.display and markdown.last_held
        assert markdown.children[0].display
        assert markdown.reveal() == 1 and last.display and markdown.held == 0


async def test_a_hidden_piece_asks_no_layout_of_what_is_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hidden piece changes nothing on screen: before, the mount of its blocks laid the
    # document out again (a full-screen reflow, 10-25 ms at 120x36 in the pty bench, that
    # held up the keys behind it). Only the hidden blocks themselves still ask (Textual's).
    asked: list[Widget] = []
    on_layout = Screen._on_layout

    async def heard(screen: Screen[object], message: messages.Layout) -> None:
        assert isinstance(message.widget, Widget)
        asked.append(message.widget)
        await on_layout(screen, message)

    monkeypatch.setattr(Screen, "_on_layout", heard)
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        await markdown.append("Shown.\n\n")
        markdown.holding = True
        await markdown.append("Second ")  # the first piece: a new, hidden last block
        # The shown block is laid out and has taken its size (its new size asks one more
        # layout, heard within the next rounds): what it asked before the piece is not counted.
        await until(pilot, lambda: markdown.children[0].region.height > 0)
        await settle(pilot)
        asked.clear()
        await markdown.append("paragraph.\n\nThird paragraph.\n\nFourth")
        markdown.holding = False
        for _ in range(5):
            await pilot.pause()
        assert markdown.held == 3
        assert markdown not in asked
        assert all(not widget.display for widget in asked), [(w, w.display) for w in asked]
        assert markdown.reveal() == 3
        await until(pilot, lambda: markdown.children[-1].region.height > 0)
        assert [block.region.y for block in markdown.children] == [0, 2, 4, 6]


async def test_a_hidden_piece_asks_for_no_layout_until_it_is_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Blocks mounted hidden (a list, a code fence, each replaced by the next piece) never lay
    the screen out while hidden; shown, they are laid out."""
    laid: list[object] = []

    class Counted(messages.Layout):
        def __init__(self, widget: Widget) -> None:
            super().__init__(widget)
            laid.append(widget)

    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(80, 20)) as pilot:
        await markdown.append("Shown first.\n\n")
        await settle(pilot)
        monkeypatch.setattr(messages, "Layout", Counted)
        markdown.holding = True
        await markdown.append("- one\n")  # the shown paragraph is parsed again: laid out
        await settle(pilot)
        assert markdown.last_held
        laid.clear()
        await markdown.append("- two\n\n```python\nx = 1\n")  # the list changes, a fence
        await markdown.append("y = 2\n```\n\n- three\n")  # the fence replaced, a list
        markdown.holding = False
        await settle(pilot)
        assert markdown.last_held and laid == []
        markdown.reveal()
        await until(pilot, lambda: bool(laid))
        await settle(pilot)
        assert markdown.held == 0
        assert all(block.region.height > 0 for block in markdown.children)
