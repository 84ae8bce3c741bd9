"""The footer: the app's Help and Quit keys first, so they stay visible at 80 columns."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST_ACTIONS = ("help", "quit")
"""Actions shown before the keys of the focused part (Textual lists those first)."""


class ChatFooter(Footer):
    """Textual's footer with :data:`FIRST_ACTIONS` moved to the front, rebuilt only when the
    keys it would show change.

    Textual rebuilds every footer key whenever the screen says its bindings may have changed
    (each focus change, each screen resume, twice at start): about a sixth of an app start's
    time, mostly for the same keys.
    """

    def __init__(self) -> None:
        super().__init__()
        self._shown: object = None
        self._rebuild_due = False  # a rebuild is queued: it will read the keys of its time

    def _keys(self, screen: Screen[object]) -> object:
        """What the footer shows: every active binding, whether it is enabled, its tooltip and
        how its key is displayed."""
        return [
            (binding, enabled, tooltip, self.app.get_key_display(binding))
            for (_node, binding, enabled, tooltip) in screen.active_bindings.values()
        ]

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild the keys, unless a rebuild is queued or they are the ones already shown."""
        if (
            self._bindings_ready
            and screen is self.screen
            and (self._rebuild_due or self._keys(screen) == self._shown)
        ):
            return
        self._rebuild_due = screen.app.app_focus and self.is_attached and screen is self.screen
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        """The footer keys, Help and Quit first."""
        self._rebuild_due = False
        self._shown = self._keys(self.screen) if self._bindings_ready else None
        widgets = list(super().compose())

        def rank(widget: object) -> int:
            if isinstance(widget, FooterKey) and widget.action in FIRST_ACTIONS:
                return FIRST_ACTIONS.index(widget.action)
            return len(FIRST_ACTIONS)

        yield from sorted(widgets, key=rank)
