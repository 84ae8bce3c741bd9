"""A line of the chat that opens and folds: ``t`` in navigation mode (``f5``) or a click.

Claude's thinking (:mod:`.thinking_block`) and the rows of tool calls and their results
(:mod:`.tool_rows`) fold the same way: one reactive, one toggle, one click handler. A subclass
says what it shows in :meth:`Folding.show_fold` (folded or opened, by :attr:`Folding.expanded`).
"""

from __future__ import annotations

from textual import events
from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["Folding"]


class Folding(Static):
    """A static that shows one thing folded and more when opened."""

    expanded: reactive[bool] = reactive(False, init=False)
    """Whether it is opened."""

    def on_mount(self) -> None:
        """Show what it shows folded."""
        self.show_fold()

    def toggle(self) -> None:
        """Open or fold it."""
        self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        """Show the opened or the folded form (the ``-expanded`` class marks it)."""
        self.set_class(expanded, "-expanded")
        self.show_fold()

    def on_click(self, event: events.Click) -> None:
        """A click opens or folds it."""
        event.stop()
        self.toggle()

    def show_fold(self) -> None:
        """Update the content for :attr:`expanded` (each subclass says what it shows)."""
        raise NotImplementedError
