"""The branch bar: which branch of its conversation the chat shows, and
``‹ n/m ›`` on each message where the branches part; ``[`` / ``]`` (navigation mode, or the
palette) show the previous / next version there in place.

Switching opens the other branch through the screen's one way of opening a conversation
(:class:`~tui_chat.tui.messages.OpenConversation`, ``in_place``): the chat shows that branch's
path scrolled to the same message, the focus and the composer's text stay.
"""

from __future__ import annotations

from textual import events, getters, work
from textual.geometry import Size
from textual.widgets import Static

from tui_chat.core.models import Conversation
from tui_chat.engine.conversations import BranchError, BranchPath
from tui_chat.tui.host import ChatHost
from tui_chat.tui.messages import OpenConversation
from tui_chat.tui.widgets.chat_pane import ChatPane

__all__ = ["SiblingSwitch", "bar_text"]

KEYS_HINT = "f5 then [ / ] switch"


def bar_text(path: BranchPath) -> str:
    """What the bar says: the branch's place in its family and its divergences."""
    count = len(path.family.branches)
    marks = " · ".join(f"{p.divergence.label} #{p.message_id}" for p in path.points)
    text = f"⑂ branch {path.number} of {count}"
    if marks:
        return f"{text} · {marks} · {KEYS_HINT}"
    return f"{text} · nothing of its own yet"


class SiblingSwitch(Static):
    """Shown while the conversation on screen has other branches.

    Args:
        pane: The chat pane whose messages it marks.
        id: The widget id.
    """

    DEFAULT_CSS = """
    SiblingSwitch {
        height: 1;
        width: 100%;
        padding: 0 1;
        color: $text-accent;
        background: $boost;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    """

    app = getters.app(ChatHost)

    def __init__(self, pane: ChatPane, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self._pane = pane
        self.path: BranchPath | None = None
        """The branch on screen and its divergences (``None`` until read)."""

    def on_mount(self) -> None:
        """Follow the conversation on screen and the messages the pane mounts."""
        self.watch(self.screen, "conversation", self._conversation_changed, init=False)
        self.watch(self._pane, "virtual_size", self._pane_changed, init=False)
        self.watch(self.screen, "streaming_id", self._reply_changed, init=False)

    def _conversation_changed(self, conversation: Conversation | None) -> None:
        if conversation is not None:
            self.reload(conversation.id)

    def _reply_changed(self, streaming_id: int | None) -> None:
        """A reply ended: where the branches part may have moved (an edited prompt's fork is
        opened before its prompt is stored). A lone conversation's path cannot change so."""
        path, conversation_id = self.path, self._pane.conversation_id
        if streaming_id is not None or conversation_id is None:
            return
        if path is None or path.branch.id != conversation_id or len(path.family.branches) > 1:
            self.reload(conversation_id)

    def _pane_changed(self, old: Size, new: Size) -> None:
        self.mark_views()

    @work(group="branch-path", exclusive=True, exit_on_error=False)
    async def reload(self, conversation_id: str) -> None:
        """Read where the conversation's branches part, and show it."""
        path = await self.app.service.branches.path(conversation_id)
        if conversation_id != getattr(self.screen, "conversation_id", None):
            return  # another one was opened meanwhile: its own read follows
        self.path = path
        shown = len(path.family.branches) > 1
        if shown or self.display:  # a lone conversation (most) changes no layout
            self.update(bar_text(path))
            self.display = shown
        self.mark_views()

    def mark_views(self) -> None:
        """Put ``‹ n/m ›`` on the messages where the branches part (the ones the pane mounts
        later take theirs from it)."""
        path = self.path
        marks = {} if path is None else {p.message_id: p.divergence.label for p in path.points}
        self._pane.branch_marks = marks
        for view in self._pane.views:
            mark = marks.get(view.message_id, "")
            if view.branch_mark != mark:
                view.set_branch_mark(mark)

    async def step(self, delta: int) -> None:
        """Show the version ``delta`` away at the divergence at or above the selected message
        (the last one when none is selected)."""
        path = self.path
        if path is None or path.branch.id != self._pane.conversation_id:
            return
        try:
            target, message_id, there = await self.app.service.branches.sibling(
                path.branch.id, delta, self._pane.selected
            )
        except BranchError:
            self.notify("No other version of any message here.", severity="warning")
            return
        self.post_message(OpenConversation(target, message_id, in_place=True))
        self.notify(f"Version {there.index} of {there.count} (#{message_id}).", timeout=2)

    async def on_click(self, event: events.Click) -> None:
        """A click on the bar shows the next version at the last divergence."""
        event.stop()
        await self.step(1)
