"""Text fields that never hold a control character: what is typed, pasted (the terminal's paste
or the clipboard through ``ctrl+v``), loaded from a draft or put back by ``e`` (edit) is made
inert on its way in, as model output is before it is drawn (:func:`~tui_chat.tui.text.inert`).

Textual draws a field's text as it is: an ``ESC ] 0 ; … BEL`` pasted into the composer set the
terminal's title, an ``ESC [ 2 J`` cleared the screen, at every start for a stored draft. The
stand-ins (``␛``, ``␇``…) are what the field holds, so what is sent is what was shown.
"""

from __future__ import annotations

from textual.widgets import Input, TextArea
from textual.widgets.text_area import Edit, EditResult

from tui_chat.tui.text import inert


class InertTextArea(TextArea):
    """A :class:`~textual.widgets.TextArea` whose document never holds a control character
    but newline and tab (every edit and every loaded text goes through :func:`inert`)."""

    def edit(self, edit: Edit) -> EditResult:
        """Perform ``edit`` with its text made inert."""
        edit.text = inert(edit.text)
        return super().edit(edit)

    def _set_document(self, text: str, language: str | None) -> None:
        super()._set_document(inert(text), language)


class InertInput(Input):
    """An :class:`~textual.widgets.Input` whose value never holds a control character."""

    def validate_value(self, value: str) -> str:
        """The value made inert (Textual calls this for every assignment)."""
        return inert(value)
