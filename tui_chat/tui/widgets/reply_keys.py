"""Navigation-mode keys for a reply's thinking, web pages and cited messages (``t``, ``u`` and
``r``, see :mod:`tui_chat.tui.actions`): a part of the chat pane, which holds the selection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.tui.widgets.cited_jump import CitedJump
from tui_chat.tui.widgets.thinking_block import ThinkingBlock
from tui_chat.tui.widgets.tool_rows import ToolRow
from tui_chat.tui.widgets.web_blocks import links

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_chat.tui.widgets.window import MessageWindow

__all__ = ["ReplyKeys"]


class ReplyKeys:
    """``action_toggle_thinking``, ``action_copy_links`` and ``action_jump_cited`` on the
    selected message.

    Args:
        host: The widget that says what happened (notifications) and copies (its app).
        window: The messages shown and the selection.
    """

    def __init__(self, host: Widget, window: MessageWindow) -> None:
        self._host = host
        self._window = window
        self.cited = CitedJump(host, window)
        """From a reply to the messages it cites (``r``)."""

    def action_toggle_thinking(self) -> None:
        """Open or fold the selected reply's thinking, or its tool calls' rows (results)."""
        view = self._window.selected_view
        found = view.query(ThinkingBlock) if view is not None else None
        if found:
            found.first().toggle()
            return
        rows = view.query(ToolRow) if view is not None else None
        if not rows:
            self._host.notify("The selected message has no thinking.", severity="warning")
            return
        opened = not rows.first().expanded
        for row in rows:
            row.expanded = opened

    def action_copy_links(self) -> None:
        """Copy the URLs the selected reply cites, searched or read, one a line."""
        view = self._window.selected_view
        urls = links(view.message.content) if view is not None else []
        if not urls:
            self._host.notify("The selected message has no web pages.", severity="warning")
            return
        self._host.app.copy_to_clipboard("\n".join(urls))
        self._host.notify(f"Copied {len(urls)} link{'s' if len(urls) != 1 else ''}.")

    async def action_jump_cited(self) -> None:
        """Select the next message the selected reply cites from recall."""
        await self.cited.action_jump_cited()
