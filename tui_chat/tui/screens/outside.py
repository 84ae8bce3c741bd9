"""What another process writes shows up here: the conversation list (new conversations, counts)
and the open conversation (new messages, a reply another process finished).

An interval timer asks the engine whether the database changed under another connection
(``PRAGMA data_version``, one cheap read); only then is anything reloaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_chat.tui.screens.chat_screen import ChatScreen

WATCH_SECONDS = 1.0
"""How often the database is asked whether another process wrote to it."""


class OutsideWatch:
    """Polls for writes of other processes and refreshes a chat screen after one.

    Args:
        screen: The chat screen to refresh.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen
        self._busy = False

    def start(self) -> None:
        """Start polling (the timer stops with the screen)."""
        self._screen.set_interval(WATCH_SECONDS, self._tick, name="outside-writes")

    def _tick(self) -> None:
        if not self._busy:
            self._busy = True
            self._screen.run_worker(self._check(), group="outside", exit_on_error=False)

    async def _check(self) -> None:
        try:
            if await self._screen.app.service.outside.changed():
                await self.refresh()
        finally:
            self._busy = False

    async def refresh(self) -> None:
        """Reload the panels, and the open conversation when its newest message changed (a
        reply streaming here is left alone: it is this process's own)."""
        from tui_chat.engine.service import NotFound

        screen = self._screen
        service = screen.app.service
        conversation_id = screen.conversation_id
        if conversation_id is not None:
            try:
                await service.conversations.get(conversation_id)
            except NotFound:
                screen.notify("Another tui-chat deleted this conversation.", severity="warning")
                infos = await service.conversations.list()
                other = infos[0].conversation if infos else await service.conversations.new()
                await screen.open_conversation(other.id)
                return
        screen.refresh_panels_later()  # the list, its counts, the gauge, the timeline
        if conversation_id is None or screen.app.replying:
            return
        chat = screen.chat
        if chat.has_newer:
            return  # reading older pages: the newer ones load when paged to
        newest = await service.messages.page(conversation_id, limit=1)
        if not newest or conversation_id != screen.conversation_id or screen.app.replying:
            return
        # The pane compares under its page lock: a window read here while another show or a
        # key replaced it could be taken for out of date and replaced again.
        await chat.show(conversation_id, chat.selected, newest=newest[-1])
