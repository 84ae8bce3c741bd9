"""The main screen: what the user and the engine do to the chat.

Every user action is an ``action_*`` method named in the table of actions (``tui/actions.py``),
which the key bindings, the command palette and the help screen read: here, or in the class
this one builds on (:class:`~tui_chat.tui.screens.branching.BranchView`: one message, and whole
conversations through :class:`~tui_chat.tui.screens.conversation_commands.ConversationCommands`).
Each engine event arrives as its own message with its own handler; a reply ends by one route,
the reply worker's end (:class:`~tui_chat.tui.screens.reply_flow.ReplyFlow`, which also holds the
prompts queued meanwhile). Summary versions are handed to
:class:`~tui_chat.tui.screens.summary_commands.SummaryCommands`. The panels themselves and their
reloading are :class:`~tui_chat.tui.screens.chat_view.ChatView`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import BindingType
from textual.command import Provider
from textual.timer import Timer
from textual.widgets import TextArea

from tui_chat.core.models import SearchHit, Summary
from tui_chat.engine import events
from tui_chat.tui import messages
from tui_chat.tui.actions import bindings
from tui_chat.tui.after_frame import after_frame
from tui_chat.tui.screens.branching import BranchView
from tui_chat.tui.screens.chat_view import NO_KEY_HELP
from tui_chat.tui.screens.outside import OutsideWatch
from tui_chat.tui.screens.reply_flow import ReplyEnded, ReplyFlow
from tui_chat.tui.text import tokens
from tui_chat.tui.widgets.chat_pane import PinsChanged
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.summary_timeline import SummaryTimeline

if TYPE_CHECKING:
    pass

# The other screens (inspector, settings, search, prompts, context preview, help) and the
# palette's commands are imported by the actions that open them: the first frame needs none.

GAUGE_DEBOUNCE = 0.15
"""Seconds of typing pause before the gauge recounts the draft."""

RECALL_DEBOUNCE = 0.6
"""Seconds of typing pause before the full request (with recall for the draft) is built."""


def _chat_commands() -> type[Provider]:
    """The palette's provider, loaded when the palette first opens."""
    from tui_chat.tui.commands import ChatCommands

    return ChatCommands


class MainScreen(BranchView):
    """The chat: everything the user works with, keyboard first."""

    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {_chat_commands}

    AUTO_FOCUS = "#composer"
    """Focused when the screen is composed (not the first focusable widget, then this one:
    each focus change recomposes the footer)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    def __init__(self) -> None:
        super().__init__()
        self._gauge_timers: list[Timer] = []
        self._bindings_due = False  # the footer is told after the next refresh
        self.replies = ReplyFlow(self)
        """Prompts queued while a reply runs, and what the reply's end does."""

    def on_mount(self) -> None:
        """Watch for what other processes write (Textual runs the bases' ``on_mount`` too)."""
        OutsideWatch(self).start()

    # -- the draft and the gauge -------------------------------------------------------------

    @on(TextArea.Changed, "#composer")
    def _draft_changed(self) -> None:
        if (conv_id := self.conversation_id) is not None:
            self.app.drafts.note(conv_id, self.composer.text)  # written after a pause
        # Counting is cheap, but not per keystroke: wait for a pause in typing.
        for timer in self._gauge_timers:
            timer.stop()
        self._gauge_timers = [
            self.set_timer(GAUGE_DEBOUNCE, partial(self._update_gauge, False)),
            self.set_timer(RECALL_DEBOUNCE, partial(self._update_gauge, True)),
        ]

    @work(group="gauge", exclusive=True, exit_on_error=False)
    async def _update_gauge(self, full: bool) -> None:
        if self.app.replying and not self.composer.text.strip():
            return  # the prompt went out: the reply's end brings the figures (no build here)
        if not full:
            await self.app.drafts.flush()
        await self.refresh_gauge(full=full, figures=False)  # typing changes the draft alone

    # -- sending -----------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submit(self, event: Composer.Submitted) -> None:
        if self.conversation is None:
            event.composer.restore(event.text)
            return
        if not self.app.service.has_key:
            event.composer.restore(event.text)
            self.notify(NO_KEY_HELP, title="Cannot send", severity="error", markup=False)
            return
        # The new message and its reply are shown, wherever the view was.
        self.chat.follow(unselect=True)
        if self.replies.busy:  # still streaming, or the reply's worker is finishing
            self.replies.queue(event.composer, event.text)
            return
        self.send_draft(event.composer, event.text)

    @on(ReplyEnded)
    async def _reply_ended(self, message: ReplyEnded) -> None:
        await self.replies.ended(message.worker)

    def refresh_bindings(self) -> None:
        """Tell the footer the keys changed: once after the next refresh, however many changes.

        Textual calls this twice per focus change (and on every screen resume); each call
        rebuilds the footer's keys (about 30 ms), three to four times before the first frame.
        """
        if not self._bindings_due:
            self._bindings_due = True
            after_frame(self, self._publish_bindings)

    def _publish_bindings(self) -> None:
        self._bindings_due = False
        super().refresh_bindings()

    def watch_streaming_id(self) -> None:
        """Show "Cancel reply" in the footer only while streaming."""
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide actions that cannot run now."""
        if action == "cancel_reply":
            return self.app.replying
        return True

    # -- engine events -----------------------------------------------------------------------

    @on(messages.SendWaiting)
    @on(messages.FileUploading)
    def _send_note(self, message: messages.SendWaiting | messages.FileUploading) -> None:
        """Say why the reply has not begun: another sender first, or a file uploading."""
        event = message.event
        if isinstance(event, events.SendWaiting):
            self.notify(
                "Another tui-chat is sending to this conversation; yours goes out when it is done.",
                title="Waiting",
            )
        elif isinstance(event, events.FileUploading) and event.problem is None:
            self.notify(
                f"Uploading {event.name}… (escape cancels)", title="Files API", markup=False
            )
        elif isinstance(event, events.FileUploading):
            text = f"{event.name}: {event.problem}"
            self.notify(text, title="Files API", severity="warning", markup=False)

    @on(messages.UserMessageSaved)
    @on(messages.ToolResultsSaved)  # the user turn of tool results is shown as a prompt is
    async def _user_message_saved(
        self, message: messages.UserMessageSaved | messages.ToolResultsSaved
    ) -> None:
        saved = message.event.message
        if saved.conversation_id == self.conversation_id:
            await self.chat.add_message(saved)

    @on(messages.ToolCallStarted)
    def _tool_call_started(self, message: messages.ToolCallStarted) -> None:
        self.notify(f"Running {message.event.name}…", timeout=2, markup=False)

    @on(messages.ReplyStarted)
    async def _reply_started(self, message: messages.ReplyStarted) -> None:
        reply = message.event.message
        if reply.conversation_id == self.conversation_id:
            await (await self.chat.add_message(reply)).start_stream()
            self.streaming_id = reply.id

    @on(messages.ReplyDelta)
    async def _reply_delta(self, message: messages.ReplyDelta) -> None:
        if (streaming := self.chat.view_for(message.event.message_id)) is not None:
            await streaming.take(message.event)  # text, thinking or a web search's block
            self.chat.text_arrived()

    @on(messages.ReplyFinished)
    async def _reply_finished(self, message: messages.ReplyFinished) -> None:
        await self.replies.finished(message.event)

    @on(messages.CompactionStarted)
    async def _compaction_started(self, message: messages.CompactionStarted) -> None:
        event = message.event
        if event.conversation_id == self.conversation_id:
            self.notify(f"Compacting: summary v{event.summary.version} started…", timeout=3)
            shown = self.versions  # the version in progress joins them, as the event says
            self.show_versions((event.summary, *shown.summaries), shown.active_id)

    @on(messages.CompactionFinished)
    async def _compaction_finished(self, message: messages.CompactionFinished) -> None:
        event = message.event
        if event.conversation_id != self.conversation_id:
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
        self.notify(text, title="Compaction done", markup=False)
        if event.versions is None:  # the engine could not read them: read them here
            await self.refresh_summaries()
            return
        self.show_versions(event.versions, event.active_summary_id)  # pushed, not read back
        await self.refresh_gauge()  # the next request now carries the new summary

    @on(messages.CompactionFailed)
    async def _compaction_failed(self, message: messages.CompactionFailed) -> None:
        event = message.event
        if event.conversation_id != self.conversation_id:
            return
        version = f" v{event.summary.version}" if event.summary else ""
        text = f"Summary{version} failed: {event.error}"
        if event.paused:
            text += " — auto-compaction is paused; ctrl+g still compacts."
        self.notify(text, title="Compaction failed", severity="error", markup=False)
        await self.refresh_summaries()

    # -- actions -----------------------------------------------------------------------------

    def action_focus_composer(self) -> None:
        """Back to typing: leave navigation mode and focus the composer at once (the keys
        typed next are routed to it, not to the messages)."""
        self.chat.navigating = self.conversations.navigating = False
        self.set_focus(self.composer)

    def action_focus_messages(self) -> None:
        """Navigation mode: letters are commands. In the conversation list when it has the
        focus; else the messages get the focus at once."""
        if self.conversations.has_focus_within:
            self.conversations.navigating = True
            return
        self.set_focus(self.chat)
        self.chat.select_default()
        self.chat.navigating = True

    def action_previous_panel(self) -> None:
        """``shift+tab`` from the messages: the conversation list, opened when hidden (else
        the list was out of reach from the keys, its f5 commands easy to miss)."""
        if self.panels.is_shown("conversations"):
            self.focus_previous()
        else:
            self.action_toggle_conversations()

    async def action_cancel_reply(self) -> None:
        """Stop the streaming reply; what arrived is kept, marked incomplete. Prompts queued
        meanwhile come back to the composer, unsent: escape means "stop", not "send the next"."""
        if not self.app.replying:
            self.notify("No reply is streaming.", severity="warning")
            return
        if taken := await self.replies.take_back():
            noun = "prompt is" if taken == 1 else f"{taken} prompts are"
            self.notify(f"The queued {noun} back in the composer, unsent.")
        self.app.cancel_reply()  # the worker's end says it was cancelled (screens/reply_flow.py)

    def action_dismiss_warnings(self) -> None:
        """Hide the warnings under the gauge (until one of them changes)."""
        if not self.gauge.dismiss():
            self.notify("No warning to hide.")

    def action_retry(self) -> None:
        """Ask again for the last reply (after an error or a cut-off)."""
        if self.conversation is None:
            return
        if not self.app.service.has_key:
            self.notify(NO_KEY_HELP, title="Cannot send", severity="error", markup=False)
            return
        if self.app.replying:
            self.notify("A reply is still streaming.", severity="warning")
            return
        self.app.send_reply(self.conversation.id, None)

    async def action_pin_message(self) -> None:
        """Pin the selected message (the newest one when nothing is selected)."""
        await self.chat.pin(True)

    async def action_unpin_message(self) -> None:
        """Unpin the selected message (the newest one when nothing is selected)."""
        await self.chat.pin(False)

    @on(PinsChanged)
    async def _pins_changed(self) -> None:
        await self.refresh_gauge()

    def action_compact(self) -> None:
        """Compact the conversation now (in the background), asking first when the compact
        preview warns."""
        self.run_worker(
            self.summary_commands.compact(), group="compact-preview", exit_on_error=False
        )

    async def action_inspect_summary(self, summary: Summary | None = None) -> None:
        """Open the inspector on the highlighted (or active) summary version."""
        await self.summary_commands.inspect(summary)

    @on(SummaryTimeline.Inspect)
    async def _inspect(self, event: SummaryTimeline.Inspect) -> None:
        await self.summary_commands.inspect(event.summary)

    async def action_roll_back_summary(self) -> None:
        """Put the previous completed version in force (none before v1)."""
        await self.summary_commands.roll_back()

    def action_regenerate_summary(self) -> None:
        """Regenerate the highlighted (or active) version, asking for instructions."""
        self.run_worker(self.summary_commands.ask_regenerate(), exit_on_error=False)

    def action_search(self) -> None:
        """Search every conversation and jump to the chosen message."""
        from tui_chat.tui.screens.search import SearchScreen, archived_ids

        # Pushed at once (not from a worker): keys typed right after ctrl+f reach the search.
        screen = SearchScreen(
            self.app.service.messages.search, partial(archived_ids, self.app.service)
        )
        self.app.push_screen(screen, self._search_closed)

    def _search_closed(self, hit: SearchHit | None) -> None:
        if hit is not None:
            self.post_message(messages.OpenConversation(hit.conversation_id, hit.message_id))

    async def action_context_preview(self) -> None:
        """Show the exact request the next send would make."""
        from tui_chat.tui.screens.context_preview import ContextPreviewScreen, sent_labels

        if (conv_id := self.conversation_id) is None:
            return
        service, new = self.app.service, bool(self.composer.text or self.attached_files())
        built = await service.requests.context(
            conv_id, self.composer.text or None, self.attached_files()
        )
        recent = await service.messages.page(conv_id, limit=40)
        labels = await sent_labels(service.messages, conv_id, built, new_message=new)
        path = (await service.branches.path(conv_id)).describe()
        await self.app.push_screen(ContextPreviewScreen(built, recent, labels, path))

    async def action_settings(self) -> None:
        """Open the conversation's settings."""
        from tui_chat.tui.screens.settings import SettingsScreen

        if self.conversation is None:
            return
        screen = SettingsScreen(self.conversation, self.app.service)
        await self.app.push_screen(screen, self._settings_closed)

    async def _settings_closed(self, saved: list[str] | None) -> None:
        if saved:
            self.notify(f"Saved: {', '.join(saved)}.")
            await self.reload()
