"""The records of the table of actions (:mod:`tui_chat.tui.actions`): what an action is
called, a help-screen note, a help-screen section."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Action", "Note", "Section", "on_screen", "part", "scroll_action", "version_action"]


def part(action: str) -> str:
    """The Textual action that runs an action of one of the chat screen's parts, by namespace:
    ``part("drafting.attach_file")`` runs ``screen.drafting.action_attach_file()``."""
    return f"part({action!r})"


def on_screen(action: str) -> str:
    """A part's action run from a widget's keys (the composer's, the chat pane's): on the
    screen, ``screen.part("view.focus_composer")``."""
    return "screen." + part(action)


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the user can do, and every text that names it.

    Attributes:
        action: The Textual action run (a method ``action_<name>``, maybe with arguments or a
            namespace such as ``screen.``).
        description: The short label shown in the footer.
        tooltip: The longer text of the help screen (the label when empty).
        show: Whether the footer shows the binding.
        priority: Whether the binding runs before the focused widget sees the key.
        palette: The command palette's name for it (not in the palette when empty).
        palette_help: What the palette says under the name (before the key).
    """

    action: str
    description: str
    tooltip: str = ""
    show: bool = True
    priority: bool = False
    palette: str = ""
    palette_help: str = ""

    @property
    def help_text(self) -> str:
        """What the help screen says about it."""
        return self.tooltip or self.description


@dataclass(frozen=True, slots=True)
class Note:
    """Keys a widget handles itself (no binding), listed on the help screen."""

    keys: str
    text: str


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the help screen.

    Attributes:
        title: The heading; ``{}`` is replaced by the main-screen keys of ``opened_by``.
        scope: The part of the app whose :data:`KEYMAP` entries are listed.
        opened_by: The id of the main-screen action that opens this part, if any.
    """

    title: str
    scope: str
    opened_by: str = ""


def version_action(step: int) -> Action:
    """``[`` / ``]``: the previous / next version where the branches part (``‹ n/m ›``)."""
    name = "Previous version" if step < 0 else "Next version"
    text = f"{name} where the branches part (‹ n/m ›)"
    return Action(f"app.switch_version({step})", name, text, False, False, name, text)


def scroll_action(where: str, description: str, tooltip: str) -> Action:
    """The composer's keys that scroll the chat (``up``, ``down``, ``top``, ``end``)."""
    return Action(on_screen(f"view.scroll_chat({where!r})"), description, tooltip, False)
