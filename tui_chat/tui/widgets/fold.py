"""Folding the head of a long document: its leading blocks hidden while far above the view.

Textual lays out every displayed widget of the screen on each layout, so while a long reply
streams each frame costs time in proportion to all of its block widgets (a 10,000-token reply
has about 700), though only the last screenful is visible. While the chat follows the reply,
the blocks far above the view are hidden (``display: none``) and the document's top padding
takes exactly their place: every block below keeps its position and the scroll height stays
the same, so nothing moves on screen. Unfolding shows them again; nothing is parsed or mounted.
"""

from __future__ import annotations

from textual.errors import NoWidget
from textual.geometry import Spacing
from textual.widget import Widget


class HeadFold:
    """The folded head of one container.

    Args:
        container: The widget whose leading children are folded: it must place its first
            shown child at its top padding plus that child's top margin (a ``Markdown``
            document with the ``stream`` or ``vertical`` layout and no border).
    """

    def __init__(self, container: Widget) -> None:
        self._container = container
        self._hidden: list[Widget] = []
        self._width = 0

    @property
    def folded(self) -> int:
        """How many children are hidden."""
        return len(self._hidden)

    @property
    def blocks(self) -> int:
        """How many children the container has, hidden or not."""
        return len(self._container.children)

    def fold_above(self, row: int, least: int = 1) -> int:
        """Hide the leading children whose bottom edge is above screen row ``row``.

        The last child is never hidden (it is the one still growing).

        Args:
            row: A screen row (negative: above the screen).
            least: Hide nothing unless at least this many children can go (each fold costs
                a layout of its own).

        Returns:
            How many children were hidden.
        """
        container = self._container
        self.check_width()
        screen = container.screen
        shown = [child for child in container.children if child.display]
        regions = []
        for child in shown[:-1]:
            try:
                region = screen.find_widget(child).region
            except NoWidget:
                break
            if region.bottom > row:
                break
            regions.append(region)
        count = len(regions)
        if count < max(1, least):
            return 0
        try:
            first = screen.find_widget(shown[count]).region
            top = screen.find_widget(container).region.y
        except NoWidget:
            return 0
        padding = container.styles.padding
        above = first.y - top - shown[count].styles.margin.top
        for child in shown[:count]:
            child.display = False
        self._hidden.extend(shown[:count])
        self._width = container.size.width
        container.styles.padding = Spacing(above, padding.right, padding.bottom, padding.left)
        return count

    def check_width(self) -> None:
        """Unfold if the container's width changed: the hidden heights are of another width."""
        if self._hidden and self._container.size.width != self._width:
            self.unfold()

    def unfold(self) -> None:
        """Show every hidden child again, and the container's own padding."""
        if not self._hidden:
            return
        for child in self._hidden:
            child.display = True
        self._hidden.clear()
        self._container.styles.clear_rule("padding")
        self._container.refresh(layout=True)
