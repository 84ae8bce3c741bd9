"""Navigation mode (issue 22): in a widget entered with ``f5``, letters run its commands;
otherwise they are typed into the composer, whatever has the focus. The chat pane and the
conversation list both have it; each says how it is left and what its bar reads."""

from __future__ import annotations

from typing import ClassVar

from textual.reactive import reactive
from textual.widget import Widget

__all__ = ["NavigationMode"]


class NavigationMode(Widget):
    """The ``navigating`` switch, its bar (``-navigating`` class, :attr:`NAVIGATION_TITLE` as the
    border title) and the ``command`` action that runs a letter's action only while it is on.

    List it after the widget's container class (``class ChatPane(VerticalScroll,
    NavigationMode)``): Textual reads default CSS and type names along the first widget base
    only, and first it would hide the container's (a ``VerticalScroll`` that no longer
    scrolls)."""

    NAVIGATION_TITLE: ClassVar[str] = "NAVIGATION"
    """The border title while letters are commands."""

    navigating: reactive[bool] = reactive(False, init=False)
    """Whether letters are commands: otherwise they are typed into the composer (issue 22)."""

    def watch_navigating(self, navigating: bool) -> None:
        """Show the mode: a bar over the widget, and the letters in the footer."""
        self.set_class(navigating, "-navigating")
        self.border_title = self.NAVIGATION_TITLE if navigating else None
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letters run their commands only in navigation mode."""
        if action == "command":
            return self.navigating
        return True

    async def action_command(self, action: str) -> None:
        """Run a letter's action (only reached in navigation mode)."""
        await self.run_action(action)
