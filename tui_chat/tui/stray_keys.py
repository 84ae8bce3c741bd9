"""Keys nothing takes are not lost: printable ones are typed into the screen's text field.

The rule: a printable key pressed where no widget consumes it and no binding of the
focused part takes it goes to the screen's text field (the composer on the main screen, the
query on the search screen), which takes the focus. Keys typed while a screen is still opening
reach that screen before its field has the focus, and are kept the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

from tui_chat.tui.inert_fields import InertInput

if TYPE_CHECKING:
    _Field = Widget
else:
    _Field = object  # a plain mixin: a Widget base would cut the field's CSS inheritance


def is_stray(screen: Screen[Any], event: events.Key) -> bool:
    """Tell whether a key is printable and no binding of the focused part of ``screen`` takes it.

    Args:
        screen: The screen the key reached (it bubbled up unhandled).
        event: The key.
    """
    return bool(event.is_printable and event.character) and event.key not in screen.active_bindings


def type_into(field: Widget, event: events.Key) -> bool:
    """Type a stray key into ``field`` and focus it.

    Args:
        field: A :class:`~textual.widgets.TextArea` or an :class:`~textual.widgets.Input`.
        event: The key; it is stopped when typed.

    Returns:
        True when the key was typed.
    """
    # A key typed into the field itself never gets here (the field stops it); one that does
    # reached the screen while the field was not focused yet, and is typed all the same.
    if not is_stray(field.screen, event) or event.character is None:
        return False
    if isinstance(field, TextArea):
        field.insert(event.character)
    elif isinstance(field, Input):
        field.insert_text_at_cursor(event.character)
    else:
        return False
    field.focus()
    event.stop()
    event.prevent_default()
    return True


class InOrder(_Field):
    """Runs the text field's own key bindings (``backspace``, ``delete``, ``ctrl+u``, …) when
    the key reaches it, in the order typed.

    Textual runs a widget's bindings only after the key has bubbled up to the App, while the
    field inserts printable keys at once: in a burst, ``Old⌫⌫⌫Trip to Lisbon⏎`` deleted the
    end of the new text instead of the old one. Mix in before the field's class.
    """

    def passes_up(self, event: events.Key) -> bool:
        """Whether the field leaves this key to the widgets above it (none by default)."""
        return False

    async def _on_key(self, event: events.Key) -> None:
        if self.passes_up(event):
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)


class OrderedInput(InOrder, InertInput):
    """An :class:`~textual.widgets.Input` whose keys all act in the order typed."""
