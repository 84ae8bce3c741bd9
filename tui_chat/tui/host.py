"""The application as its screens see it: the engine, the settings and the long-lived work.

:class:`ChatHost` is the one typed way into the app (``app = getters.app(ChatHost)``). It knows
no screen, so screens and widgets can use it without importing ``app.py``, which builds on it
and adds the screens and start-up (the import graph of ``tui/`` stays acyclic).

Long-lived work (a streaming reply, a manual compaction or regeneration) runs in workers
attached to the App, so pruning or replacing a widget never cancels it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.worker import WorkerState

from tui_chat.config import Config
from tui_chat.core.inert import inert
from tui_chat.tui.drafts import DraftKeeper

if TYPE_CHECKING:
    from textual.screen import Screen

    from tui_chat.core.attachments import Attachment
    from tui_chat.core.models import Summary
    from tui_chat.engine.send import SendOutcome
    from tui_chat.engine.service import ChatService
    from tui_chat.engine.tools import Decision, ToolCall
    from tui_chat.tui.messages import EngineBridge


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ChatHost(App[None]):
    """The engine, the user's settings and the workers that outlive any widget.

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
        self.bridge: EngineBridge | None = None
        self.tool_prompt: Callable[[ToolCall], Screen[Decision]] | None = None
        """Makes the approval prompt of a tool call (the app sets it; without one, a call is
        denied): the host sits below the screens and never imports one."""
        """Where engine events of the work started here go (set once the app is mounted)."""
        self._drafts: DraftKeeper | None = None

    @property
    def service(self) -> ChatService:
        """The engine (open once the app is loaded)."""
        if self._service is None:
            raise RuntimeError("the engine is not open yet")
        return self._service

    @property
    def drafts(self) -> DraftKeeper:
        """The composer's drafts, kept per conversation in the database."""
        if self._drafts is None:
            self._drafts = DraftKeeper(self.service.drafts)
        return self._drafts

    def copy_to_clipboard(self, text: str) -> None:
        """Copy ``text`` with its control characters made visible (``core.inert``): the escape
        sequences of a hostile reply never reach the clipboard, nor a terminal it is pasted in.
        The copy goes by OSC 52 and, in a thread, through the system's clipboard tool when there
        is one (GNOME Terminal and other VTE terminals ignore OSC 52)."""
        from tui_chat.tui.clipboard import write_clipboard

        safe = inert(text)
        super().copy_to_clipboard(safe)
        self.run_worker(
            partial(write_clipboard, safe), thread=True, group="clipboard", exit_on_error=False
        )

    async def save_drafts(self) -> None:
        """Write the drafts noted so far (before the engine closes)."""
        if self._drafts is not None and self._service is not None:
            await self._drafts.flush()

    @property
    def replying(self) -> bool:
        """True while a reply is being streamed."""
        return any(
            w.group == "reply" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for w in self.workers
        )

    @work(name="reply", group="reply", exclusive=True, exit_on_error=False)
    async def send_reply(
        self, conversation_id: str, text: str | None, attachments: Sequence[Attachment] = ()
    ) -> SendOutcome:
        """Send ``text`` with ``attachments`` (or retry the last reply when ``text`` is
        ``None``), streaming into the screen."""
        if text is None:
            return await self.service.retry(conversation_id, self.bridge, self.approve_tool)
        approve = self.approve_tool
        return await self.service.send(conversation_id, text, self.bridge, attachments, approve)

    async def approve_tool(self, call: ToolCall) -> Decision:
        """Ask the person about a tool call (the approval prompt); a cancelled send closes it."""
        if self.tool_prompt is None:
            return "deny"
        answered: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def done(decision: Decision | None) -> None:
            if not answered.done():
                answered.set_result(decision or "deny")

        prompt = self.tool_prompt(call)
        await self.push_screen(prompt, done)
        try:
            return await answered
        finally:
            if prompt.is_attached and self.screen is prompt:
                prompt.dismiss("deny")

    def cancel_reply(self) -> None:
        """Cancel the streaming reply; the engine keeps what arrived, marked incomplete."""
        self.workers.cancel_group(self, "reply")

    @work(name="compact", group="compaction", exit_on_error=False)
    async def compact(
        self, conversation_id: str, instructions: str | None = None
    ) -> Summary | None:
        """Compact a conversation now (progress arrives as engine events).

        Too few turns to fold is said as such (a warning), not reported as a failure.
        """
        from tui_chat.engine.compaction import NothingToCompact

        try:
            return await self.service.summaries.compact(conversation_id, instructions)
        except NothingToCompact as exc:
            self.notify(f"{str(exc).capitalize()}.", title="Compact", severity="warning")
            return None

    @work(name="compact-upto", group="compaction", exit_on_error=False)
    async def compact_upto(self, conversation_id: str, message_id: int) -> Summary:
        """Compact every whole turn up to a message's turn ("compact up to here")."""
        return await self.service.branches.compact_upto(conversation_id, message_id)

    @work(name="regenerate", group="compaction", exit_on_error=False)
    async def regenerate(
        self, conversation_id: str, version: int, instructions: str | None = None
    ) -> Summary:
        """Regenerate a summary version with optional instructions."""
        return await self.service.summaries.regenerate(conversation_id, version, instructions)
