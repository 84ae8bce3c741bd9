"""Markdown lists and quotes drawn by one widget each, looking exactly like Textual's.

Textual's ``Markdown`` builds every list item of five widgets (a ``Horizontal`` holding the
bullet and a ``Vertical`` of the item's paragraphs) and a quote as a container of paragraph
widgets. A screen's layout arranges every displayed widget and its repaint renders each one
visible, so a reply made of short lists costs four times the widgets its text needs (a
10,000-token reply: 693 widgets, 528 of them list items' parts). While the user types into a
streaming reply, each showing of the held blocks is one such layout.

Here a list whose items hold only paragraphs and such lists is one widget: its
:class:`ListVisual` wraps each item's text at the width beside its bullet, as the paragraph
widgets would, and draws the bullets in the bullet's colour; a quote of paragraphs is one
widget showing them one under the other. Anything else in an item (code, a heading, a table,
a quote) keeps Textual's widgets. Used by every reply's document, stored or streamed
(:class:`~tui_chat.tui.widgets.stream_markdown.StreamMarkdown`), so both look the same.

An append that grows the document's last list updates that one widget in place (Textual
removes the list and mounts a new one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeGuard

from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBlockQuote,
    MarkdownBulletList,
    MarkdownList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)

__all__ = ["BLOCKS", "FlatBulletList", "FlatList", "FlatOrderedList", "FlatQuote", "ListVisual"]

BULLET = "flat-list--bullet"
"""The component class of a flat list's bullets (the colour of Textual's ``MarkdownBullet``)."""

Item = tuple[str, Sequence["Content | ListVisual"]]
"""A list item: its bullet and what it holds (paragraphs' text, nested lists)."""


class ListVisual(Visual):
    """A list's items drawn as Textual draws them: each item's paragraphs and nested lists
    wrapped at the width beside its bullet, the bullet on the item's first line."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = list(items)
        self._lines: tuple[int, list[Content]] = (-1, [])

    def lines(self, width: int) -> list[Content]:
        """The list's lines at ``width`` cells (each fits it)."""
        if self._lines[0] != width:
            self._lines = (width, self._wrap(width))
        return self._lines[1]

    def _wrap(self, width: int) -> list[Content]:
        lines: list[Content] = []
        for symbol, parts in self.items:
            bullet = Content.styled(symbol, f".{BULLET}")
            # Below its first line the bullet's column is blank in the bullet's colour.
            indent = Content.styled(" " * bullet.cell_length, f".{BULLET}")
            inner = max(width - bullet.cell_length, 1)
            body = [line for part in parts for line in _part_lines(part, inner)]
            # An empty item takes no line (Textual's item is as high as its paragraphs).
            lines.extend((bullet if n == 0 else indent) + line for n, line in enumerate(body))
        return lines

    def text(self, width: int) -> Content:
        """The list at ``width`` as one text, a line per line shown."""
        return Content("\n").join(self.lines(width))

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        """Render the list's lines (part of the Visual protocol)."""
        if not width:
            return []
        return self.text(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        """The widest line when nothing wraps."""
        return max((line.cell_length for line in self.lines(10_000)), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        """The lines at ``width``."""
        return len(self.lines(width)) if width else 0


def _part_lines(part: Content | ListVisual, width: int) -> list[Content]:
    if isinstance(part, ListVisual):
        return part.lines(width)
    return part.wrap(width)


if TYPE_CHECKING:
    _ListBase = MarkdownList
else:
    _ListBase = object  # the first DOM base must be Textual's list: its CSS is inherited


class FlatList(_ListBase):
    """A list drawn by one widget when its items hold only paragraphs and such lists (a
    mixin: the first base of each flat list, before Textual's list, whose CSS it keeps)."""

    flat: ListVisual | None = None
    """The list's visual when it is drawn flat."""

    def compose(self) -> ComposeResult:
        """Nothing when the list is drawn flat; else Textual's list widgets."""
        visual = as_visual(self)
        if visual is None:
            yield from super().compose()
            return
        self._blocks.clear()
        self.flat = visual
        self.update(visual)

    def symbols(self, items: list[MarkdownListItem]) -> list[str]:
        """Each item's bullet, as Textual's list widget draws it."""
        return [item.bullet for item in items]

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        """An append grew the list: take the new one's items in place, when both are flat."""
        if self.flat is not None and type(block) is type(self):
            assert isinstance(block, FlatList)
            visual = as_visual(block)
            if visual is not None:
                self._copy_context(block)
                self.flat = visual
                self.update(visual)
                return
        await super()._update_from_block(block)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text, as the lines are shown."""
        if self.flat is None:
            return super().get_selection(selection)
        return selection.extract(self.flat.text(self.content_region.width).plain), "\n"


class FlatBulletList(FlatList, MarkdownBulletList):
    """A bullet list (see the module)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {BULLET}
    DEFAULT_CSS = """
    FlatBulletList > .flat-list--bullet { color: $text-primary; }
    FlatBulletList:light > .flat-list--bullet { color: $text-secondary; }
    """


class FlatOrderedList(FlatList, MarkdownOrderedList):
    """A numbered list (see the module)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {BULLET}
    DEFAULT_CSS = """
    FlatOrderedList > .flat-list--bullet { color: $text-primary; }
    FlatOrderedList:light > .flat-list--bullet { color: $text-secondary; }
    """

    def symbols(self, items: list[MarkdownListItem]) -> list[str]:
        """The items' numbers, as ``MarkdownOrderedList.compose`` writes them."""
        start = 1
        if items and isinstance(items[0], MarkdownOrderedListItem):
            with contextlib.suppress(ValueError):
                start = int(items[0].bullet)
        numbered = [f"{number}. " for number in range(start, start + len(items))]
        size = max((len(symbol) for symbol in numbered), default=0)
        return [symbol.rjust(size + 1) for symbol in numbered]


def as_visual(block: FlatList) -> ListVisual | None:
    """``block``'s items as one visual, or ``None`` when one holds more than paragraphs and
    such lists."""
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    if len(items) != len(block._blocks):
        return None
    drawn: list[Item] = []
    for symbol, item in zip(block.symbols(items), items, strict=True):
        parts: list[Content | ListVisual] = []
        for part in item._blocks:
            if _paragraph(part):
                parts.append(part._content)
            elif isinstance(part, FlatList) and (nested := as_visual(part)) is not None:
                parts.append(nested)
            else:
                return None
        drawn.append((symbol, parts))
    return ListVisual(drawn)


def _paragraph(block: object) -> TypeGuard[MarkdownParagraph]:
    return type(block) is MarkdownParagraph


class FlatQuote(MarkdownBlockQuote):
    """A quote of paragraphs drawn by one widget (Textual's stacks paragraph widgets)."""

    def compose(self) -> ComposeResult:
        """Nothing when every part is a paragraph (shown one under the other)."""
        if not self._blocks or not all(_paragraph(part) for part in self._blocks):
            yield from super().compose()
            return
        contents = _contents(self._blocks)
        self._blocks.clear()
        self.set_content(Content("\n").join(contents))


def _contents(blocks: Iterable[MarkdownBlock]) -> list[Content]:
    return [block._content for block in blocks]


BLOCKS: dict[str, type[MarkdownBlock]] = {
    "bullet_list_open": FlatBulletList,
    "ordered_list_open": FlatOrderedList,
    "blockquote_open": FlatQuote,
}
"""The block classes a reply's document uses instead of Textual's."""
