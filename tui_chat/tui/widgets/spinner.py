"""A one-character spinner for work in progress (compaction)."""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.widget import Widget


class Spinner(Widget):
    """A braille spinner that animates while it is mounted."""

    DEFAULT_CSS = """
    Spinner { width: 2; height: 1; color: $text-accent; }
    """

    FRAMES: ClassVar[str] = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._frame = 0

    def on_mount(self) -> None:
        """Start turning."""
        self.set_interval(0.1, self._advance)

    def _advance(self) -> None:
        self._frame = (self._frame + 1) % len(self.FRAMES)
        self.refresh()

    def render(self) -> Content:
        """The current frame."""
        return Content(self.FRAMES[self._frame])
