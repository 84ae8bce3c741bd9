"""Navigation-mode keys for a reply's thinking, web pages and cited messages (``t``, ``u`` and
``r``, see
:mod:`tui_chat.tui.actions`), mixed into the chat pane that holds the selection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.tui.widgets.cited_jump import CitedJump
from tui_chat.tui.widgets.thinking_block import ThinkingBlock
from tui_chat.tui.widgets.web_blocks import links

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_chat.tui.widgets.message_view import MessageView

__all__ = ["ReplyKeys"]


class ReplyKeys(CitedJump):
    """``action_toggle_thinking``, ``action_copy_links`` and ``action_jump_cited`` (from
    :class:`~.cited_jump.CitedJump`) on the selected message."""

    if TYPE_CHECKING:

        @property
        def selected_view(self) -> MessageView | None:
            """The selected message widget (the chat pane's)."""

    def action_toggle_thinking(self) -> None:
        """Open or fold the selected reply's thinking."""
        pane: Widget = self  # type: ignore[assignment]
        view = self.selected_view
        found = view.query(ThinkingBlock) if view is not None else None
        if not found:
            pane.notify("The selected message has no thinking.", severity="warning")
            return
        found.first().toggle()

    def action_copy_links(self) -> None:
        """Copy the URLs the selected reply cites, searched or read, one a line."""
        pane: Widget = self  # type: ignore[assignment]
        view = self.selected_view
        urls = links(view.message.content) if view is not None else []
        if not urls:
            pane.notify("The selected message has no web pages.", severity="warning")
            return
        pane.app.copy_to_clipboard("\n".join(urls))
        pane.notify(f"Copied {len(urls)} link{'s' if len(urls) != 1 else ''}.")
