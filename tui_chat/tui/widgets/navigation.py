"""Navigation mode: in a widget entered with ``f5``, letters run its commands;
otherwise they are typed into the composer, whatever has the focus. The chat pane and the
conversation list both have it; each says how it is left and what its bar reads.

A widget's letters may name the action of one of its *parts* (plain objects it holds, by
namespace: ``command('range.mark')`` runs ``parts["range"].action_mark()``): the widget keeps
what each part does out of its own class, and Textual, which resolves an action only on a DOM
node, still finds it by its key."""

from __future__ import annotations

from collections.abc import Mapping
from inspect import isawaitable
from types import MappingProxyType
from typing import ClassVar

from textual.actions import parse
from textual.reactive import reactive
from textual.widget import Widget

__all__ = ["NavigationMode", "run_part"]


class NavigationMode(Widget):
    """The ``navigating`` switch, its bar (``-navigating`` class, :attr:`NAVIGATION_TITLE` as the
    border title) and the ``command`` action that runs a letter's action only while it is on.

    List it after the widget's container class (``class ChatPane(VerticalScroll,
    NavigationMode)``): Textual reads default CSS and type names along the first widget base
    only, and first it would hide the container's (a ``VerticalScroll`` that no longer
    scrolls)."""

    NAVIGATION_TITLE: ClassVar[str] = "NAVIGATION"
    """The border title while letters are commands."""

    parts: Mapping[str, object] = MappingProxyType({})
    """The widget's parts by action namespace (set in its ``__init__``; none here)."""

    navigating: reactive[bool] = reactive(False, init=False)
    """Whether letters are commands: otherwise they are typed into the composer."""

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
        await run_part(self, action)

    async def action_part(self, action: str) -> None:
        """Run a part's action in either mode (a key that types nothing: ``delete``)."""
        await run_part(self, action)


async def run_part(widget: NavigationMode, action: str) -> None:
    """Run an action of one of the widget's parts (``range.mark``), or else a Textual
    action with the widget as its default namespace (``select_next``, ``app.help``)."""
    namespace, name, params = parse(action)
    part = widget.parts.get(namespace)
    if part is None:
        await widget.run_action(action)
    elif isawaitable(done := getattr(part, f"action_{name}")(*params)):
        await done
