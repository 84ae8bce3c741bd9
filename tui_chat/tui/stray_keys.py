"""Keys nothing takes are not lost: printable ones are typed into the screen's text field.

The rule (issue 12): a printable key pressed where no widget consumes it and no binding of the
focused part takes it goes to the screen's text field (the composer on the main screen, the
query on the search screen), which takes the focus. Keys typed while a screen is still opening
reach that screen before its field has the focus, and are kept the same way.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea


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
