"""Text fields that never hold a control character: what is typed, pasted (the terminal's paste
or the clipboard through ``ctrl+v``), loaded from a draft or put back by ``e`` (edit) is made
inert on its way in, as model output is before it is drawn (:func:`~tui_chat.tui.text.inert`).

Textual draws a field's text as it is: an ``ESC ] 0 ; … BEL`` pasted into the composer set the
terminal's title, an ``ESC [ 2 J`` cleared the screen, at every start for a stored draft. The
stand-ins (``␛``, ``␇``…) are what the field holds, so what is sent is what was shown.
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Input, TextArea
from textual.widgets.text_area import Edit, EditResult

from tui_chat.tui.text import inert


class InertTextArea(TextArea):
    """A :class:`~textual.widgets.TextArea` whose document never holds a control character
    but newline and tab (every edit and every loaded text goes through :func:`inert`).

    Its theme takes the field's styles once per change of them, not at every frame: Textual's
    ``TextArea.render_lines`` applies the theme's CSS (a dozen component styles looked up and
    composed) each time it draws, and the composer is drawn in every frame that echoes a key.
    Styles change through :meth:`notify_style_update` (a focus change, a class, the app's
    theme: the stylesheet calls it, and the field's own line cache is cleared by it alike);
    a new theme of the field is a new object.
    """

    _styled_theme: object = None
    """The theme object the field's styles were last applied to (``None``: apply again)."""

    @property
    def styled_theme(self) -> object:
        """The theme object the styles were last applied to (``None`` until the next frame)."""
        return self._styled_theme

    @property
    def theme_base_style(self) -> Style:
        """The base style the theme took from the field's styles (the text and background)."""
        return self._theme.base_style or Style()

    def notify_style_update(self) -> None:
        """The styles changed: the theme takes them again at the next frame."""
        self._styled_theme = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the field, its theme styled only when its styles or its theme changed."""
        theme = self._theme
        if theme and theme is not self._styled_theme:
            theme.apply_css(self)
            self._styled_theme = theme
        return super(TextArea, self).render_lines(crop)  # past TextArea's, done above

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
