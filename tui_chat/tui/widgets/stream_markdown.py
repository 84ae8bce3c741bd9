"""A reply's Markdown body whose new blocks can be mounted hidden and shown later, all at once.

While the user types into a streaming reply, every append that moves the chat costs a layout
and a repaint of the whole screen (20-60 ms at 120x36, longer than the 40 ms between two keys
at 25 keys/s), and mounting a few kilobytes of new blocks costs 100 ms more. So while the user
types (:mod:`~tui_chat.tui.widgets.reply_stream`), the text is appended in small pieces right
after a key's echo, its new blocks mounted ``display: none`` (no repaint, nothing moves), and
they are shown together about once a second and a half: one layout for all of them.

Only the document's last block is ever updated in place by an append, so pieces are appended
hidden only while that block is itself hidden (:attr:`StreamMarkdown.last_held`); a shown
block is never changed behind the user's back.

A hidden piece changes nothing on screen, so the document does not ask the screen for a
layout while it is appended (Textual lays a mount's parent out again, a full-screen reflow of
10-25 ms at 120x36 that held up the keys behind it): the layout comes when the blocks are shown.
"""

from __future__ import annotations

from functools import partial
from typing import Self

from markdown_it.token import Token
from textual.await_complete import AwaitComplete
from textual.geometry import Region
from textual.widget import AwaitMount, Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

from tui_chat.tui.widgets import flat_blocks

__all__ = ["StreamMarkdown", "rehearse"]

REHEARSED_LANGUAGES = ("python", "bash", "json", "javascript")
"""The code fences' languages whose highlighter is built in the warm-up (:func:`rehearse`)."""

_REHEARSAL = "# A\n\nSome *text*, `code` and www.example.com.\n\n- one\n- two\n\n> quoted\n"


class StreamFence(MarkdownFence):
    """A code fence that a streamed append replaces instead of updating in place.

    Textual updates a fence in place by replacing its label's text, and the fence now and then
    kept the height of its text before the append (the fence's own height and its label's
    placement were computed at different moments): a fence streamed in parts ended one line
    short or one too tall, unlike the stored reply drawn whole. A fence mounted afresh is laid
    out as the stored one is; one fence is a label, so mounting it again costs little."""

    def __init__(self, markdown: Markdown, token: Token, code: str) -> None:
        super().__init__(markdown, token, code)
        self._theme = _theme(self)
        """What the code was highlighted for (the terminal's own colours, a dark theme)."""

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        await MarkdownBlock._update_from_block(self, block)

    def notify_style_update(self) -> None:
        """Highlight the code again only when the theme changed. Textual highlights it again
        at every restyle, and a message restyles its blocks when the selection comes or goes:
        each press of a held arrow ran pygments over the code of the two messages it moved
        between."""
        if (theme := _theme(self)) != self._theme:
            self._theme = theme
            super().notify_style_update()
        else:
            MarkdownBlock.notify_style_update(self)


def _theme(block: MarkdownBlock) -> tuple[bool, bool]:
    app = block.app
    return app.native_ansi_color, app.current_theme.dark


def rehearse() -> None:
    """Parse a small reply and highlight a line of code in each of
    :data:`REHEARSED_LANGUAGES`, off the event loop (the app's warm-up thread, once drawn).

    The first parse of a process compiles the link finder's regular expressions and the first
    fence of a language compiles its lexer's: 40-50 ms of CPU each, which the first reply
    otherwise spent on the event loop while it streamed (the keys typed meanwhile waited)."""
    from markdown_it import MarkdownIt
    from textual.highlight import highlight

    MarkdownIt("gfm-like").parse(_REHEARSAL)
    for language in REHEARSED_LANGUAGES:
        highlight("value = [1, 'a']  # note\n", language=language)


def _held_refresh(
    block: Widget,
    *regions: Region,
    repaint: bool = True,
    layout: bool = False,
    recompose: bool = False,
) -> Widget:
    """A hidden block's refresh: without a layout of the screen. A block changed or composed
    while hidden (a list's items, a fence's label mounted) asked for one itself, and Textual
    lays out the whole screen for a hidden widget too (10-15 ms at 120x36, while keys were
    typed); it is laid out with the others when it is shown."""
    return type(block).refresh(
        block, *regions, repaint=repaint, layout=layout and block.display, recompose=recompose
    )


class StreamMarkdown(Markdown):
    """A ``Markdown`` document that can hold its new blocks hidden (see the module)."""

    # Not a ClassVar: Textual's Markdown declares it as an instance attribute.
    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012
        **Markdown.BLOCKS,
        **flat_blocks.BLOCKS,
        "fence": StreamFence,
        "code_block": StreamFence,
    }
    """Lists and quotes drawn by one widget each (:mod:`~tui_chat.tui.widgets.flat_blocks`);
    code fences replaced, not updated, by an append (:class:`StreamFence`)."""

    holding = False
    """Whether blocks mounted now are hidden until :meth:`reveal` (set per document)."""

    def __init__(self, markdown: str | None = None) -> None:
        super().__init__(markdown)
        self.holding = False
        self._held: list[Widget] = []

    @property
    def held(self) -> int:
        """How many blocks are mounted hidden."""
        return len(self._held)

    @property
    def last_held(self) -> bool:
        """Whether the document's last block is a hidden one (an append changes only it)."""
        children = self.children
        return bool(self._held) and bool(children) and children[-1] is self._held[-1]

    def mount(
        self,
        *widgets: Widget,
        before: int | str | Widget | None = None,
        after: int | str | Widget | None = None,
    ) -> AwaitMount:
        """Mount ``widgets`` (``mount_all`` and a block replaced by an append come here),
        hidden while :attr:`holding`."""
        if self.holding:
            for block in widgets:
                block.display = False
                block.refresh = partial(_held_refresh, block)  # type: ignore[method-assign]
            self._held.extend(widgets)
        return super().mount(*widgets, before=before, after=after)

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        """Refresh; while a hidden piece is appended (:attr:`holding`), without a layout: the
        blocks it mounts or changes are hidden, so nothing shown moves (they are laid out when
        :meth:`reveal` shows them)."""
        return super().refresh(
            *regions, repaint=repaint, layout=layout and not self.holding, recompose=recompose
        )

    def reveal(self, *, keep_last: bool = False) -> int:
        """Show the hidden blocks (all of them, or all but the last when others are hidden
        too: the last one may still grow, and a shown block is never changed by a hidden
        append). Returns how many were shown."""
        held = [block for block in self._held if block.parent is self]
        shown = held[:-1] if keep_last and len(held) > 1 else held
        for block in shown:
            block.__dict__.pop("refresh", None)  # its own again: it asks for layouts now
            block.display = True
        self._held = held[len(shown) :]
        return len(shown)

    def update(self, markdown: str) -> AwaitComplete:
        """Replace the document (what was hidden goes with it)."""
        self._held.clear()
        self.holding = False
        return super().update(markdown)
