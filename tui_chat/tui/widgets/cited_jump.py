"""``r`` in navigation mode: from a reply citing recalled passages to the messages it cites.

The first press on a reply with ``[#id]`` citations selects the first cited message (the chat
pane pages it in around it when it is not shown, as a search hit is); each press after that,
while that message is still selected, goes on to the next cited message, and after the last
one back to the reply. A part of the chat pane's :class:`~.reply_keys.ReplyKeys`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_chat.core.recall_cites import recalled_ids

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_chat.tui.widgets.window import MessageWindow

__all__ = ["CitedJump", "Trail", "next_stop"]


@dataclass(frozen=True, slots=True)
class Trail:
    """Where the last jump went: the reply, its cited messages and the one selected."""

    reply: int
    cited: tuple[int, ...]
    at: int


def next_stop(trail: Trail | None, selected: int, cited_here: list[int]) -> Trail | None:
    """The next jump from the selected message (``None``: nothing to jump to).

    Args:
        trail: The last jump, if any.
        selected: The message selected now.
        cited_here: The messages the selected one cites.
    """
    if trail is not None and selected == trail.cited[trail.at] and trail.at >= 0:
        at = trail.at + 1
        return Trail(trail.reply, trail.cited, at if at < len(trail.cited) else -1)
    if cited_here:
        return Trail(selected, tuple(cited_here), 0)
    return None


class CitedJump:
    """``action_jump_cited`` on the chat pane's selection.

    Args:
        host: The widget that says what happened (notifications).
        window: The messages shown and the selection.
    """

    def __init__(self, host: Widget, window: MessageWindow) -> None:
        self._host = host
        self._window = window
        self._trail: Trail | None = None

    async def action_jump_cited(self) -> None:
        """Select the next message the selected reply cites from recall (see the module)."""
        window = self._window
        view = window.selected_view
        if view is None or window.conversation_id is None:
            return
        here = recalled_ids(view.message.content) if view.message.role == "assistant" else []
        trail = next_stop(self._trail, view.message_id, here)
        if trail is None:
            self._host.notify("The selected message cites no earlier message.", severity="warning")
            return
        self._trail = trail
        target = trail.reply if trail.at < 0 else trail.cited[trail.at]
        if window.view_for(target) is None:
            await window.show(window.conversation_id, target)
        if window.view_for(target) is None:
            self._trail = None
            self._host.notify(f"Message #{target} is not in this conversation.", severity="warning")
            return
        window.selected = target
        if trail.at >= 0 and len(trail.cited) > 1:
            self._host.notify(
                f"Cited message {trail.at + 1} of {len(trail.cited)}: r for the next."
            )
