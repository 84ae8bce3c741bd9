"""``r`` in navigation mode: from a reply citing recalled passages to the messages it cites.

The first press on a reply with ``[#id]`` citations selects the first cited message (the chat
pane pages it in around it when it is not shown, as a search hit is); each press after that,
while that message is still selected, goes on to the next cited message, and after the last
one back to the reply. Mixed into the chat pane (:class:`~.chat_pane.ChatPane`) through
:class:`~.reply_keys.ReplyKeys`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_chat.core.recall_cites import recalled_ids

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui_chat.tui.widgets.message_view import MessageView

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
    """``action_jump_cited`` on the chat pane's selection."""

    _trail: Trail | None = None

    if TYPE_CHECKING:
        conversation_id: str | None
        selected: int | None

        @property
        def selected_view(self) -> MessageView | None:
            """The selected message widget (the chat pane's)."""

        def view_for(self, message_id: int) -> MessageView | None:
            """The mounted widget of a message (the chat pane's)."""

        async def show(self, conversation_id: str, around: int | None = None) -> None:
            """Show the page around a message and select it (the chat pane's)."""

    async def action_jump_cited(self) -> None:
        """Select the next message the selected reply cites from recall (see the module)."""
        pane: Widget = self  # type: ignore[assignment]
        view = self.selected_view
        if view is None or self.conversation_id is None:
            return
        here = recalled_ids(view.message.content) if view.message.role == "assistant" else []
        trail = next_stop(self._trail, view.message_id, here)
        if trail is None:
            pane.notify("The selected message cites no earlier message.", severity="warning")
            return
        self._trail = trail
        target = trail.reply if trail.at < 0 else trail.cited[trail.at]
        if self.view_for(target) is None:
            await self.show(self.conversation_id, target)
        if self.view_for(target) is None:
            self._trail = None
            pane.notify(f"Message #{target} is not in this conversation.", severity="warning")
            return
        self.selected = target
        if trail.at >= 0 and len(trail.cited) > 1:
            pane.notify(f"Cited message {trail.at + 1} of {len(trail.cited)}: r for the next.")
