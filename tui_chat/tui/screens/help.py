"""The help screen: the first steps ("Getting started"), then every key of every part of the
app, read from the table of actions."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_chat.tui.actions import bindings
from tui_chat.tui.help_table import help_sections
from tui_chat.tui.widgets.welcome import getting_started


def render_section(title: str, entries: list[tuple[str, str]]) -> Content:
    """One section: a bold title, then ``keys  description`` lines."""
    width = max((len(keys) for keys, _ in entries), default=0)
    lines = [Content.styled(title, "bold $text-accent")]
    lines += [
        Content.assemble((f"{keys:<{width}}", "bold $text-warning"), "  ", description)
        for keys, description in entries
    ]
    return Content("\n").join(lines)


def _lines(entries: list[tuple[str, str]]) -> list[str]:
    """The lines of a section as :func:`render_section` lays them out."""
    width = max((len(keys) for keys, _ in entries), default=0)
    return [f"{keys:<{width}}  {description}" for keys, description in entries]


class HelpScreen(ModalScreen[None]):
    """Every binding, grouped by where it applies; ``escape`` closes."""

    CSS_PATH = "help.tcss"

    BINDINGS: ClassVar[list[BindingType]] = bindings("help")

    def compose(self) -> ComposeResult:
        """Title and a grid of sections."""
        with Vertical(id="help"):
            yield Static(
                "tui-chat keys — everything is also in the command palette (ctrl+p). "
                "escape closes.",
                id="help-title",
                markup=False,
            )
            with VerticalScroll():
                yield Static(getting_started(), id="getting-started")
                with Grid():
                    for title, entries in help_sections():
                        yield Static(render_section(title, entries))

    def on_resize(self) -> None:
        """As many columns as the widest section fits side by side (its lines, title included,
        never wrap)."""
        widest = max(
            max(len(title), *(len(line) for line in _lines(entries)))
            for title, entries in help_sections()
        )
        grid = self.query_one(Grid)
        room = grid.size.width or self.size.width - 8
        grid.styles.grid_size_columns = max(1, min(3, (room + 2) // (widest + 2)))

    def action_close(self) -> None:
        """Back to where the user was."""
        self.dismiss(None)
