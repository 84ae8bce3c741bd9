"""A reply's turn on the chat screen: its one end, and the prompts queued while it runs.

:class:`ReplyFlow` is held by the chat screen (composition, not a base class). A reply ends by
one route, the engine's ``ReplyFinished`` event: it carries the reply as stored, its error and
whether the user cancelled it, so the screen finishes the reply's widget, says how it ended and
drops "Cancel reply" from it alone (no flag remembers a cancel). The reply worker's end is not a
second end of the reply but the end of the *send*: the app posts :class:`ReplyEnded` to the
screen, and only then may the next queued prompt go out (the send lease and the calibration
are done), the figures be read again, and a prompt the engine refused before storing it come
back to the composer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from textual.message import Message as TextualMessage
from textual.worker import Worker

from tui_chat.core.attachments import AttachmentError, check_request
from tui_chat.tui import messages
from tui_chat.tui.queued import Queued

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.worker_manager import WorkerManager

    from tui_chat.core.models import Conversation
    from tui_chat.core.request import Breakdown
    from tui_chat.engine.events import ReplyFinished
    from tui_chat.engine.send import SendOutcome
    from tui_chat.tui.host import ChatHost
    from tui_chat.tui.screens.chat_screen import EditSender
    from tui_chat.tui.widgets.chat_pane import ChatPane
    from tui_chat.tui.widgets.composer import Composer
    from tui_chat.tui.widgets.draft_tray import DraftTray


class ReplyScreen(Protocol):
    """What a reply's turn needs of the chat screen (the screen itself satisfies it): the
    conversation shown, the parts it writes to, and the screen's public calls."""

    @property
    def app(self) -> ChatHost: ...
    @property
    def workers(self) -> WorkerManager: ...
    @property
    def conversation(self) -> Conversation | None: ...
    @property
    def conversation_id(self) -> str | None: ...
    @property
    def tray(self) -> DraftTray: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def chat(self) -> ChatPane: ...
    @property
    def branches(self) -> EditSender: ...

    streaming_id: int | None
    breakdown: Breakdown | None
    cost: float

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...
    def refresh_bindings(self) -> None: ...
    async def after_reply(self) -> None: ...


class ReplyEnded(TextualMessage):
    """The reply worker ended: the send is over (posted by the app to the chat screen).

    Args:
        worker: The ended worker: its error when the send was refused or broke.
    """

    def __init__(self, worker: Worker[SendOutcome]) -> None:
        super().__init__()
        self.worker = worker


class ReplyFlow:
    """What waits for a reply to end, and what its end does on the screen.

    Args:
        screen: The chat screen: it shows the reply, holds the draft tray and the composer,
            and sends (a fork for an edited prompt).
    """

    def __init__(self, screen: ReplyScreen) -> None:
        self._screen = screen
        self.queued: list[Queued] = []
        """Prompts sent when the reply ends, oldest first."""

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The reply's end (the engine's event) and the send's (the reply worker's)."""
        return {
            messages.ReplyFinished: lambda finished: self.finished(finished.event),
            ReplyEnded: lambda ended: self.ended(ended.worker),
        }

    @property
    def busy(self) -> bool:
        """Whether a new prompt must wait: a reply runs, prompts wait already, or an edited
        prompt's fork is being made."""
        return self._screen.app.replying or bool(self.queued) or self.forking

    @property
    def forking(self) -> bool:
        """Whether an edited prompt's fork is being made (no reply yet)."""
        return any(w.name == "send_edit" and not w.is_finished for w in self._screen.workers)

    def queue(self, composer: Composer, text: str) -> None:
        """Keep the draft (and its files) to send when the reply ends; the composer is free
        for the next prompt (never glued to the next one typed)."""
        screen = self._screen
        if screen.conversation is None:
            return
        try:
            check_request([a.ref() for a in screen.tray.pending])
        except AttachmentError as exc:
            composer.restore(text)
            screen.notify(f"{exc}; nothing was queued", severity="error", markup=False)
            return
        composer.remember(text)
        # Typed while an edit's fork is made: it goes to the fork (the conversation shown then).
        target = None if self.forking else screen.conversation.id
        files, editing = screen.tray.take()
        self.queued.append(Queued(target, text, files, editing))
        screen.notify(
            "Queued: it is sent when the reply ends (escape cancels the reply and brings it "
            "back here)."
        )
        self.show()

    async def take_back(self) -> int:
        """The reply is being cancelled: the prompts queued for the conversation shown come
        back to the composer, unsent, before what is typed there (their files to the tray, an
        edit's prompt being edited again). Returns how many came back."""
        screen = self._screen
        shown = screen.conversation_id
        mine = [q for q in self.queued if (q.conversation_id or shown) == shown]
        if not mine:
            return 0
        self.queued = [q for q in self.queued if q not in mine]
        editing = next((q.editing for q in mine if q.editing is not None), None)
        if editing is not None:
            screen.tray.start_edit(editing)
        await screen.tray.give_back([a for q in mine for a in q.files])
        screen.composer.restore("\n\n".join(q.text for q in mine))
        self.show()
        return len(mine)

    def send_next(self) -> None:
        """Send the oldest queued prompt (as a fork when it was an edit)."""
        screen = self._screen
        queued = self.queued.pop(0)
        if queued.editing is not None:
            screen.branches.send_edit(queued.editing, queued.text, queued.files)
        elif target := queued.conversation_id or screen.conversation_id:
            screen.app.send_reply(target, queued.text, queued.files)
        self.show()

    def keep(self) -> None:
        """Before quitting: prompts still queued become their conversation's draft."""
        screen = self._screen
        drafts: dict[str, list[str]] = {}
        for queued in self.queued:
            if target := queued.conversation_id or screen.conversation_id:
                drafts.setdefault(target, []).append(queued.text)
        for conversation_id, texts in drafts.items():
            if conversation_id == screen.conversation_id and screen.composer.text.strip():
                texts.append(screen.composer.text)
            screen.app.drafts.note(conversation_id, "\n\n".join(texts))
        self.queued.clear()

    def show(self) -> None:
        """Say on the composer how many prompts wait for the reply to end."""
        count = len(self.queued)
        self._screen.composer.border_subtitle = (
            f"⏳ {count} prompt{'s' if count > 1 else ''} queued: sent when the reply ends"
            if count
            else None
        )

    async def finished(self, event: ReplyFinished) -> None:
        """The reply ended (stored complete, cut off, cancelled or failed): show it as stored,
        say how it ended."""
        screen = self._screen
        reply, error = event.message, event.error
        # One frame for the reply's end: its last words, its header, the gauge and the cost
        # (each drawn in a frame of its own, a layout and a repaint each, when the append's
        # mount let a frame in before the rest).
        with screen.app.batch_update():
            view = screen.chat.view_for(reply.id)
            if view is not None:
                await view.finish(reply, error.display if error else None)
            if screen.streaming_id == reply.id:
                screen.streaming_id = None  # "Cancel reply" leaves the footer
            if reply.conversation_id == screen.conversation_id:
                if event.breakdown is not None:  # pushed by the engine, never read back
                    screen.breakdown = event.breakdown
                if event.cost is not None:
                    screen.cost = event.cost
        if event.cancelled:
            screen.notify("Reply cancelled: what arrived is kept; ctrl+r asks again.")
        elif error is not None and reply.conversation_id == screen.conversation_id:
            screen.notify(error.display, title="Reply failed", severity="error", markup=False)
        if event.notice:
            screen.notify(event.notice, title="Usage", severity="warning", markup=False)

    async def ended(self, worker: Worker[SendOutcome]) -> None:
        """The send is over: one view call shows what it changed (the next request's gauge,
        the list, a new conversation's title), then the next queued prompt is sent and a
        prompt refused before it was stored comes back."""
        screen = self._screen
        screen.refresh_bindings()
        outcome = worker.result if worker.error is None else None
        if outcome is not None and (notice := outcome.notice):
            screen.notify(notice, title="Summary sent as text", severity="warning", markup=False)
        await screen.after_reply()
        if self.queued and not screen.app.replying:
            self.send_next()
        # Then the draft's part gives back a prompt refused unsent (its route runs next).
