"""The "new text below" marker: shown under the chat while a reply streams below a view the
user scrolled up (the chat stopped following it); a click, or ``end``, follows again."""

from __future__ import annotations

from textual import events
from textual.widgets import Static

from tui_chat.tui.widgets.chat_pane import ChatPane

MARKER = "↓ new text below · end (or a click) follows the reply"


class FollowMarker(Static):
    """Shows while :attr:`ChatPane.new_below` holds.

    Args:
        pane: The chat pane it speaks for.
        id: The widget id.
    """

    DEFAULT_CSS = """
    FollowMarker {
        height: 1;
        width: 100%;
        content-align: center middle;
        color: $text-accent;
        background: $accent 20%;
        display: none;
    }
    """

    def __init__(self, pane: ChatPane, *, id: str | None = None) -> None:
        super().__init__(MARKER, id=id, markup=False)
        self._pane = pane

    def on_mount(self) -> None:
        """Follow the pane's flag."""
        self.watch(self._pane, "new_below", self._show)

    def _show(self, new_below: bool) -> None:
        self.display = new_below

    def on_click(self, event: events.Click) -> None:
        """Follow the reply again."""
        event.stop()
        self._pane.follow()
