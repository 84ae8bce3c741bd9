"""A vertical scrollbar whose thumb is drawn where the view is, after every layout.

A scrolling container anchored to its end (the chat follows its newest message) is moved by
Textual's compositor while it lays the screen out: it writes the new offset to the container
and to its scrollbar's position directly, without the reactive's refresh. The thumb is then
drawn where the view was before that layout until something else repaints the bar. At start-up
the chat is laid out once before the composer and the gauge take their height and once after,
so the end of the chat moved by two rows and the thumb stayed two rows up, or not, depending on
whether a later frame (a gauge drawn after it, say) happened to repaint the bar: the same screen
drew two thumbs from one run to the next.

:class:`SteadyScroll` is a ``VerticalScroll`` with a :class:`SteadyScrollBar`, which repaints
itself whenever its position changes, however it is written.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar

__all__ = ["SteadyScroll", "SteadyScrollBar"]


class SteadyScrollBar(ScrollBar):
    """A scrollbar that repaints when its position changes, even when it is written past the
    reactive (as the compositor moves an anchored container)."""

    @property
    def _reactive_position(self) -> float:
        """The reactive ``position``'s stored value (Textual's own name for it)."""
        return float(self.__dict__.get("_steady_position", 0.0))

    @_reactive_position.setter
    def _reactive_position(self, value: float) -> None:
        changed = value != self.__dict__.get("_steady_position")
        self.__dict__["_steady_position"] = value
        if changed and self.is_attached:
            self.refresh()


class SteadyScroll(VerticalScroll):
    """A ``VerticalScroll`` whose vertical scrollbar is a :class:`SteadyScrollBar`."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The vertical scrollbar (made on first use, as Textual makes its own)."""
        if self._vertical_scrollbar is None:
            thickness = self.scrollbar_size_vertical
            bar = SteadyScrollBar(vertical=True, name="vertical", thickness=thickness)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar
