"""What the chat screen's parts may use of it: the small protocol each part takes.

The chat screen (:class:`~tui_chat.tui.screens.main.MainScreen`) is one class composed of part
objects (the draft, the branches, the messages the engine reports, the view's keys, the
commands on conversations and on summary versions). A part never imports the screen: it is
built with the screen as a :class:`ChatScreen`, the public names listed here, and reaches the
other parts only through what they make public (``screen.branches.send_edit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.geometry import Size
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer, TimerCallback
    from textual.widget import Widget
    from textual.worker import Worker, WorkType
    from textual.worker_manager import WorkerManager

    from tui_chat.core.attachments import Attachment
    from tui_chat.core.models import Conversation, Summary
    from tui_chat.core.request import Breakdown
    from tui_chat.tui.host import ChatHost
    from tui_chat.tui.layout import PanelRow
    from tui_chat.tui.widgets.chat_pane import ChatPane
    from tui_chat.tui.widgets.composer import Composer
    from tui_chat.tui.widgets.conversation_list import ConversationList
    from tui_chat.tui.widgets.draft_tray import DraftTray
    from tui_chat.tui.widgets.summary_timeline import SummaryTimeline, Versions
    from tui_chat.tui.widgets.token_gauge import TokenGauge

T = TypeVar("T")


class EditSender(Protocol):
    """Sending an edited prompt: its fork is made, opened, and the prompt sent to it."""

    def send_edit(self, message_id: int, text: str, files: list[Attachment]) -> Worker[None]: ...


class Queueing(Protocol):
    """The prompts that wait for the reply to end."""

    @property
    def busy(self) -> bool: ...
    def queue(self, composer: Composer, text: str) -> None: ...
    async def take_back(self) -> int: ...


class ChatScreen(Protocol):
    """The chat screen as its parts see it: its widgets, what it shows (reactives the widgets
    are bound to), how it (re)loads them, and Textual's calls the parts make on it."""

    @property
    def app(self) -> ChatHost: ...
    @property
    def workers(self) -> WorkerManager: ...
    @property
    def focused(self) -> Widget | None: ...
    @property
    def size(self) -> Size: ...
    @property
    def chat(self) -> ChatPane: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def gauge(self) -> TokenGauge: ...
    @property
    def timeline(self) -> SummaryTimeline: ...
    @property
    def conversations(self) -> ConversationList: ...
    @property
    def tray(self) -> DraftTray: ...
    @property
    def panels(self) -> PanelRow: ...
    @property
    def conversation_id(self) -> str | None: ...
    @property
    def branches(self) -> EditSender: ...
    @property
    def replies(self) -> Queueing: ...

    conversation: Conversation | None
    breakdown: Breakdown | None
    cost: float
    paused: bool
    versions: Versions
    streaming_id: int | None

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...
    def run_worker(
        self,
        work: WorkType[T],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[T]: ...
    def set_timer(
        self,
        delay: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        pause: bool = False,
    ) -> Timer: ...
    def set_interval(
        self,
        interval: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        repeat: int = 0,
        pause: bool = False,
    ) -> Timer: ...
    def set_focus(
        self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False
    ) -> None: ...
    def focus_previous(self, selector: str = "*") -> Widget | None: ...
    def post_message(self, message: Message) -> bool: ...
    def refresh_bindings(self) -> None: ...

    async def open_conversation(
        self,
        conversation_id: str,
        around: int | None = None,
        *,
        panels_after_paint: bool = False,
        draft_stays: bool = False,
    ) -> None: ...
    async def reload(self) -> None: ...
    async def after_reply(self) -> None: ...
    def refresh_panels_later(self) -> None: ...
    async def refresh_gauge(self, *, full: bool = False, figures: bool = True) -> None: ...
    async def refresh_timeline(self) -> None: ...
    async def refresh_summaries(self) -> None: ...
    async def refresh_conversations(self) -> None: ...
    def show_versions(self, summaries: Sequence[Summary], active_id: int | None) -> None: ...
