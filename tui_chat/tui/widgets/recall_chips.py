"""The messages a reply cites from recall, as chips under it (``[#12] [#40]``).

Recalled passages are sent as Claude's ``search_result`` blocks; a reply that uses them
carries citations naming the messages (:mod:`tui_chat.core.recall_cites`), and its text shows
``[#id]`` after each cited passage. ``r`` in navigation mode (or the palette's "Go to cited
message") jumps to the cited message, the next one at each press, then back to the reply
(:mod:`tui_chat.tui.widgets.cited_jump`).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

__all__ = ["RecallChips"]


class RecallChips(Static):
    """One line of chips, one per message the reply cites, with the key that jumps."""

    DEFAULT_CSS = """
    RecallChips { height: auto; color: $text-muted; margin: 0 0 1 0; }
    """

    def __init__(self, ids: Sequence[int]) -> None:
        super().__init__(classes="recall-chips")
        self.ids = list(ids)

    def on_mount(self) -> None:
        """Show the chips."""
        self.update(self.line())

    def line(self) -> Content:
        """``Cited from earlier`` and a chip per message."""
        chips: list[Content | tuple[str, str] | str] = [
            Content.styled("Cited from earlier ", "italic")
        ]
        for message_id in self.ids:
            chips += [(f" #{message_id} ", "bold reverse"), " "]
        chips.append(Content.styled("(r jumps)", "dim"))
        return Content.assemble(*chips)
