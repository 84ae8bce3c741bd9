"""A reply's lists and quotes are one widget each, drawn exactly as Textual's widgets draw them
(fewer widgets for the screen's layout while a reply streams), and a list
that grows while it streams is updated in place."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Markdown

from tests.tui.helpers import until
from tui_chat.core.models import Message
from tui_chat.tui.widgets.flat_blocks import FlatBulletList, FlatList, FlatQuote
from tui_chat.tui.widgets.message_view import MessageView
from tui_chat.tui.widgets.stream_markdown import StreamMarkdown

DOC = """## Lists of every kind

Intro with **bold**, `code`, *em* and a [link](https://example.com).

- one short item
- a long item that goes on with **bold words**, `inline code` and more words so that it
  wraps over several lines at any of the widths tried here
- three
  - nested one with a long text that wraps around at the narrow widths, again and again
  - nested two
    - deeper
- four

1. first
2. second, a longer one that wraps at a narrow width for sure, it has many words in it
3. c
4. d
5. e
6. f
7. g
8. h
9. i
10. ten

A list starting at three:

3. starts at three
4. four

A loose list:

- loose item one

- loose item two

  with a second paragraph that is long enough to wrap over the line at narrow widths too

An empty item:

-
- after an empty item

Code in an item:

- item with code:

  ```python
  print("x")
  ```

- next

> a quote with one paragraph that is long enough to wrap at the narrower widths here
>
> and a second paragraph

> quote with a list
> - a
> - b

> outer
> > inner quote

Tail paragraph.
"""


class _Pane(App[None]):
    def __init__(self, view: MessageView, theme: str) -> None:
        super().__init__()
        self.view = view
        self.wanted_theme = theme

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.view

    def on_mount(self) -> None:
        self.theme = self.wanted_theme


class _One(App[None]):
    def __init__(self, markdown: StreamMarkdown) -> None:
        super().__init__()
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        yield self.markdown


Cell = tuple[str, str, object]


def _cells(strip: Strip) -> list[Cell]:
    """Each cell's character, style (without the selection offsets) and link action."""
    cells: list[Cell] = []
    for segment in strip:
        style = segment.style
        link = style.meta.get("@click") if style is not None else None
        plain = str(style.clear_meta_and_links()) if style is not None else ""
        cells.extend((char, plain, link) for char in segment.text)
    return cells


async def _drawn(width: int, theme: str) -> tuple[list[list[Cell]], int]:
    message = Message(2, "c", "assistant", [], DOC, 1, 0, "complete", "2026-03-14T10:00:00+00:00")
    view = MessageView(message)
    app = _Pane(view, theme)
    async with app.run_test(size=(width, 120)) as pilot:
        markdown = view.query_one(Markdown)
        await until(pilot, lambda: len(markdown.children) > 10)
        await pilot.pause()
        await pilot.pause()
        lines = [_cells(strip) for strip in app.screen._compositor.render_strips()]
        return lines, len(list(markdown.walk_children()))


@pytest.mark.parametrize(("width", "theme"), [(80, "textual-dark"), (37, "textual-light")])
async def test_lists_and_quotes_are_drawn_as_textual_draws_them_with_fewer_widgets(
    monkeypatch: pytest.MonkeyPatch, width: int, theme: str
) -> None:
    flat, flat_widgets = await _drawn(width, theme)
    monkeypatch.setattr(StreamMarkdown, "BLOCKS", Markdown.BLOCKS)  # Textual's own widgets
    textual, textual_widgets = await _drawn(width, theme)
    assert flat == textual  # every cell: character, colours, styles, links
    assert flat_widgets * 3 < textual_widgets  # 41 against 138


async def test_only_lists_of_paragraphs_and_quotes_of_paragraphs_are_flat() -> None:
    markdown = StreamMarkdown(DOC)
    async with _One(markdown).run_test(size=(80, 40)) as pilot:
        await until(pilot, lambda: len(markdown.children) > 10)
        lists = [block for block in markdown.children if isinstance(block, FlatList)]
        # The lists of paragraphs (and nested lists) have no widgets inside; the one with
        # code in an item keeps Textual's.
        assert [len(block.children) for block in lists] == [0, 0, 0, 0, 0, 2]
        quotes = list(markdown.query_children(FlatQuote))
        assert [len(block.children) for block in quotes] == [0, 2, 2]


async def test_a_list_growing_while_it_streams_is_updated_in_place() -> None:
    markdown = StreamMarkdown()
    async with _One(markdown).run_test(size=(40, 20)) as pilot:
        await markdown.append("- alpha\n- beta")
        await pilot.pause()
        (listed,) = markdown.children
        assert isinstance(listed, FlatBulletList)
        await markdown.append("\n- gamma, which is long enough to wrap at forty cells")
        await until(pilot, lambda: listed.region.height == 4)
        assert list(markdown.children) == [listed]  # the same widget, taller
        whole = Selection(Offset(0, 0), None)
        assert listed.get_selection(whole) == (
            "• alpha\n• beta\n• gamma, which is long enough to\n  wrap at forty cells",
            "\n",
        )
