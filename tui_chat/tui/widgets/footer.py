"""The footer: the app's Help and Quit keys first, so they stay visible at 80 columns."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST_ACTIONS = ("help", "quit")
"""Actions shown before the keys of the focused part (Textual lists those first)."""


class ChatFooter(Footer):
    """Textual's footer with :data:`FIRST_ACTIONS` moved to the front."""

    def compose(self) -> ComposeResult:
        """The footer keys, Help and Quit first."""
        widgets = list(super().compose())

        def rank(widget: object) -> int:
            if isinstance(widget, FooterKey) and widget.action in FIRST_ACTIONS:
                return FIRST_ACTIONS.index(widget.action)
            return len(FIRST_ACTIONS)

        yield from sorted(widgets, key=rank)
