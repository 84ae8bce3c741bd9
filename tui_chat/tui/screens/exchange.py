"""The chat screen's messages as the engine reports them: a prompt stored, a reply started and
streaming, a tool call running, a send waiting, compaction started, done or failed; and what
the user does to the messages from anywhere on the screen (pin, unpin, retry, cancel).

:class:`Exchange` is a part of the chat screen (``screen.messages``): each engine event
arrives as its own Textual message (``tui/messages.py``) and reaches it through
:meth:`Exchange.routes`; its ``action_*`` methods are named in the table of actions as
``messages.<name>``. A reply's end is :class:`~tui_chat.tui.screens.reply_flow.ReplyFlow`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tui_chat.engine import events
from tui_chat.tui import messages
from tui_chat.tui.screens.chat_view import NO_KEY_HELP
from tui_chat.tui.text import tokens
from tui_chat.tui.widgets.chat_pane import PinsChanged

if TYPE_CHECKING:
    from tui_chat.tui.screens.chat_screen import ChatScreen


class Exchange:
    """What the engine says about the conversation's messages, shown; and the actions on them.

    Args:
        screen: The chat screen: its chat pane shows the messages, its reactives the figures.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """The engine's messages this part shows."""
        return {
            messages.SendWaiting: self._send_note,
            messages.FileUploading: self._send_note,
            messages.UserMessageSaved: self._user_message_saved,
            messages.ToolResultsSaved: self._user_message_saved,  # shown as a prompt is
            messages.ToolCallStarted: self._tool_call_started,
            messages.ReplyStarted: self._reply_started,
            messages.ReplyDelta: self._reply_delta,
            messages.CompactionStarted: self._compaction_started,
            messages.CompactionFinished: self._compaction_finished,
            messages.CompactionFailed: self._compaction_failed,
            PinsChanged: lambda _: self._screen.refresh_gauge(),
        }

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide actions that cannot run now (cancel, when no reply streams)."""
        if action == "cancel_reply":
            return self._screen.app.replying
        return True

    # -- engine events -----------------------------------------------------------------------

    def _send_note(self, message: messages.SendWaiting | messages.FileUploading) -> None:
        """Say why the reply has not begun: another sender first, or a file uploading."""
        event, screen = message.event, self._screen
        if isinstance(event, events.SendWaiting):
            screen.notify(
                "Another tui-chat is sending to this conversation; yours goes out when it is done.",
                title="Waiting",
            )
        elif isinstance(event, events.FileUploading) and event.problem is None:
            screen.notify(
                f"Uploading {event.name}… (escape cancels)", title="Files API", markup=False
            )
        elif isinstance(event, events.FileUploading):
            text = f"{event.name}: {event.problem}"
            screen.notify(text, title="Files API", severity="warning", markup=False)

    async def _user_message_saved(
        self, message: messages.UserMessageSaved | messages.ToolResultsSaved
    ) -> None:
        saved = message.event.message
        if saved.conversation_id == self._screen.conversation_id:
            await self._screen.chat.add_message(saved)

    def _tool_call_started(self, message: messages.ToolCallStarted) -> None:
        self._screen.notify(f"Running {message.event.name}…", timeout=2, markup=False)

    async def _reply_started(self, message: messages.ReplyStarted) -> None:
        reply, screen = message.event.message, self._screen
        if reply.conversation_id == screen.conversation_id:
            await (await screen.chat.add_message(reply)).start_stream()
            screen.streaming_id = reply.id

    async def _reply_delta(self, message: messages.ReplyDelta) -> None:
        chat = self._screen.chat
        if (streaming := chat.view_for(message.event.message_id)) is not None:
            await streaming.take(message.event)  # text, thinking or a web search's block
            chat.text_arrived()

    def _compaction_started(self, message: messages.CompactionStarted) -> None:
        event, screen = message.event, self._screen
        if event.conversation_id == screen.conversation_id:
            screen.notify(f"Compacting: summary v{event.summary.version} started…", timeout=3)
            shown = screen.versions  # the version in progress joins them, as the event says
            screen.show_versions((event.summary, *shown.summaries), shown.active_id)

    async def _compaction_finished(self, message: messages.CompactionFinished) -> None:
        event, screen = message.event, self._screen
        if event.conversation_id != screen.conversation_id:
            return
        summary = event.summary
        text = (
            f"Summary v{summary.version}: {tokens(summary.source_tokens)} → "
            f"{tokens(summary.summary_tokens)} tokens ({summary.change})"
        )
        # A regenerated version is put in force after this event: regenerated() says so.
        if not event.activated and summary.trigger != "regenerate":
            text += "; kept aside (another version is active)"
        if event.notice:
            text += f"\n{event.notice}"
        screen.notify(text, title="Compaction done", markup=False)
        if event.versions is None:  # the engine could not read them: read them here
            await screen.refresh_summaries()
            return
        screen.show_versions(event.versions, event.active_summary_id)  # pushed, not read back
        await screen.refresh_gauge()  # the next request now carries the new summary

    async def _compaction_failed(self, message: messages.CompactionFailed) -> None:
        event, screen = message.event, self._screen
        if event.conversation_id != screen.conversation_id:
            return
        version = f" v{event.summary.version}" if event.summary else ""
        text = f"Summary{version} failed: {event.error}"
        if event.paused:
            text += " — auto-compaction is paused; ctrl+g still compacts."
        screen.notify(text, title="Compaction failed", severity="error", markup=False)
        await screen.refresh_summaries()

    # -- actions -----------------------------------------------------------------------------

    async def action_cancel_reply(self) -> None:
        """Stop the streaming reply; what arrived is kept, marked incomplete. Prompts queued
        meanwhile come back to the composer, unsent: escape means "stop", not "send the next"."""
        screen = self._screen
        if not screen.app.replying:
            screen.notify("No reply is streaming.", severity="warning")
            return
        if taken := await screen.replies.take_back():
            noun = "prompt is" if taken == 1 else f"{taken} prompts are"
            screen.notify(f"The queued {noun} back in the composer, unsent.")
        screen.app.cancel_reply()  # the worker's end says it was cancelled (screens/reply_flow.py)

    def action_retry(self) -> None:
        """Ask again for the last reply (after an error or a cut-off)."""
        screen = self._screen
        if screen.conversation is None:
            return
        if not screen.app.service.has_key:
            screen.notify(NO_KEY_HELP, title="Cannot send", severity="error", markup=False)
            return
        if screen.app.replying:
            screen.notify("A reply is still streaming.", severity="warning")
            return
        screen.app.send_reply(screen.conversation.id, None)

    async def action_pin(self) -> None:
        """Pin the selected message (the newest one when nothing is selected)."""
        await self._screen.chat.pins.pin(True)

    async def action_unpin(self) -> None:
        """Unpin the selected message (the newest one when nothing is selected)."""
        await self._screen.chat.pins.pin(False)
