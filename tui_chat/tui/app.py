"""The Textual application: opens the engine, shows the main screen, runs long work.

Long-lived work (a streaming reply, a manual compaction or regeneration) runs in workers
attached to the App, so pruning or replacing a widget never cancels it; one
``Worker.StateChanged`` handler turns every failure into a visible notification.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from tui_chat.config import Config
from tui_chat.tui.messages import EngineBridge

if TYPE_CHECKING:
    from tui_chat.core.models import Summary
    from tui_chat.engine.service import ChatService
    from tui_chat.engine.session import SendOutcome
    from tui_chat.tui.screens.main import MainScreen


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ChatApp(App[None]):
    """tui-chat: a keyboard-driven chat client for Claude with open context management.

    Args:
        config: The loaded configuration.
        db_path: Database file (defaults to the config's).
        conversation_ref: Conversation to open: an id, a unique prefix or ``last``; ``None``
            opens the last conversation, or a new one when there is none.
        service: An already open engine (tests); the app then does not close it.
        clock: Current time for ages ("5m ago"); fixed in snapshot tests.
        cursor_blink: Blink the composer's cursor (off in snapshot tests).
        export_dir: Default folder of exports.
    """

    CSS_PATH = "app.tcss"
    TITLE = "tui-chat"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        config: Config,
        db_path: Path | None = None,
        conversation_ref: str | None = None,
        *,
        service: ChatService | None = None,
        clock: Callable[[], datetime] = _utc_now,
        cursor_blink: bool = True,
        export_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.db_path = db_path
        self.conversation_ref = conversation_ref
        self.clock = clock
        self.cursor_blink = cursor_blink
        self.export_dir = export_dir or Path.cwd()
        self._service = service
        self._owns_service = service is None
        self._unsubscribe: Callable[[], None] | None = None
        self.bridge: EngineBridge | None = None
        self._startup_error: str | None = None
        self._initial_conversation_id: str | None = None

    @property
    def service(self) -> ChatService:
        """The engine (open once the app is mounted)."""
        if self._service is None:
            raise RuntimeError("the engine is not open yet")
        return self._service

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (always at the bottom of the stack)."""
        from tui_chat.tui.screens.main import MainScreen

        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    async def on_load(self) -> None:
        """Open the engine and find the conversation before the first screen is composed."""
        from tui_chat.engine.service import ChatService, NotFound

        try:
            if self._service is None:
                self._service = await ChatService.open(self.config, self.db_path)
            if self.conversation_ref is not None:
                conversation = await self._service.resolve(self.conversation_ref)
            else:
                infos = await self._service.list_conversations()
                conversation = (
                    infos[0].conversation if infos else await self._service.new_conversation()
                )
        except NotFound as exc:
            self._startup_error = f"tui-chat: {exc}"
        except Exception as exc:  # a newer or unreadable database: say why and leave
            self._startup_error = f"tui-chat: cannot open the database: {exc}"
        else:
            self._initial_conversation_id = conversation.id
            return
        self.exit(return_code=1, message=self._startup_error)

    def get_default_screen(self) -> Screen[None]:
        """The main screen (a blank one when start-up failed and the app is leaving)."""
        if self._startup_error is not None:
            return Screen()
        from tui_chat.tui.screens.main import MainScreen

        return MainScreen()

    async def on_mount(self) -> None:
        """Connect engine events to the main screen and show the conversation."""
        if self._initial_conversation_id is None:
            return
        main = self.main_screen
        self.bridge = EngineBridge(main)
        self._unsubscribe = self.service.subscribe(self.bridge)
        await main.open_conversation(self._initial_conversation_id)

    async def on_unmount(self) -> None:
        """Stop listening and close the engine if this app opened it."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._owns_service and self._service is not None:
            await self._service.close()

    # -- long-lived work -----------------------------------------------------------------------

    @property
    def replying(self) -> bool:
        """True while a reply is being streamed."""
        return any(
            w.group == "reply" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for w in self.workers
        )

    @work(name="reply", group="reply", exclusive=True, exit_on_error=False)
    async def send_reply(self, conversation_id: str, text: str | None) -> SendOutcome:
        """Send ``text`` (or retry the last reply when ``None``), streaming into the screen."""
        if text is None:
            return await self.service.retry(conversation_id, self.bridge)
        return await self.service.send(conversation_id, text, self.bridge)

    def cancel_reply(self) -> None:
        """Cancel the streaming reply; the engine keeps what arrived, marked incomplete."""
        self.workers.cancel_group(self, "reply")

    @work(name="compact", group="compaction", exit_on_error=False)
    async def compact(self, conversation_id: str, instructions: str | None = None) -> Summary:
        """Compact a conversation now (progress arrives as engine events)."""
        return await self.service.compact(conversation_id, instructions)

    @work(name="regenerate", group="compaction", exit_on_error=False)
    async def regenerate(
        self, conversation_id: str, version: int, instructions: str | None = None
    ) -> Summary:
        """Regenerate a summary version with optional instructions."""
        return await self.service.regenerate(conversation_id, version, instructions)

    def report_worker_failure(self, worker: Worker[object]) -> None:
        """Show a failed worker's error (screens forward their workers' failures here)."""
        if worker.state == WorkerState.ERROR:
            self.notify(
                f"{worker.name or 'task'} failed: {worker.error}",
                title="Error",
                severity="error",
                markup=False,
            )

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures become visible; refresh after replies and compaction."""
        worker = event.worker
        self.report_worker_failure(worker)
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group == "reply":
            await self.main_screen.reply_done()
        elif worker.group == "compaction":
            await self.main_screen.refresh_timeline()
            await self.main_screen.refresh_gauge()

    # -- global actions ------------------------------------------------------------------------

    async def action_help(self) -> None:
        """Show every key binding."""
        from tui_chat.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            await self.push_screen(HelpScreen())

    def action_focus_composer(self) -> None:
        """Focus the composer on the main screen."""
        self.main_screen.action_focus_composer()

    def action_retry_reply(self) -> None:
        """Retry the last reply (the Retry button)."""
        self.main_screen.action_retry()
