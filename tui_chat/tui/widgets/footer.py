"""The footer: the app's Help and Quit keys first, so they stay visible at 80 columns."""

from __future__ import annotations

from difflib import SequenceMatcher

from textual._context import active_message_pump
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

FIRST_ACTIONS = ("help", "quit")
"""Actions shown before the keys of the focused part (Textual lists those first)."""


class ChatFooter(Footer):
    """Textual's footer with :data:`FIRST_ACTIONS` moved to the front, rebuilt only when the
    keys it would show change, and then only the keys that came or went.

    Textual rebuilds every footer key whenever the screen says its bindings may have changed
    (each focus change, each screen resume, twice at start): about a sixth of an app start's
    time, mostly for the same keys. A reply's start and end add and take away one key
    ("Cancel reply"): remounting all of them (their styles, their data bindings) cost 20 ms of
    the event loop's CPU time at each end of every reply, while its first and last words
    were being drawn; mounting or removing that one key costs a fraction of it.
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
        """Update the keys, unless an update is queued or they are the ones already shown."""
        if (
            self._bindings_ready
            and screen is self.screen
            and (self._rebuild_due or self._keys(screen) == self._shown)
        ):
            return
        shown = self._bindings_ready and self.is_attached and bool(self.children)
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild_due = True
            self.call_after_refresh(self._update_keys if shown else self.recompose)

    async def _update_keys(self) -> None:
        """Mount the keys that came and remove those that went, in place; anything else (a
        key changed, a group of keys) composes the footer again."""
        old = [w for w in self.children if type(w) is FooterKey]
        token = active_message_pump.set(self)  # the new keys bind to this footer's `compact`
        try:
            composed = list(self.compose())
        finally:
            active_message_pump.reset(token)
        new = [w for w in composed if type(w) is FooterKey]
        if len(old) < len(self.children) or len(new) < len(composed):  # a group of keys
            await self.recompose()
            return
        matcher = SequenceMatcher(a=[_look(w) for w in old], b=[_look(w) for w in new])
        gone: list[Widget] = []
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            gone.extend(old[i1:i2])
            if j1 < j2:
                if i2 < len(old):
                    await self.mount_all(new[j1:j2], before=old[i2])
                else:
                    await self.mount_all(new[j1:j2])
        if gone:
            await self.remove_children(gone)

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


def _look(key: FooterKey) -> tuple[object, ...]:
    """Everything a footer key shows and does (``-compact`` follows the footer's own)."""
    return (
        key.key,
        key.key_display,
        key.description,
        key.action,
        key._disabled,
        key.tooltip,
        tuple(sorted(key.classes - {"-compact"})),
    )
