"""The main screen: what the user and the engine do to the chat.

Every user action is an ``action_*`` method named in the table of actions (``tui/actions.py``),
which the key bindings, the command palette and the help screen read: here, or in the class
this one builds on (:class:`~tui_chat.tui.screens.branching.BranchView`: one message, and whole
conversations through :class:`~tui_chat.tui.conversation_commands.ConversationCommands`).
Each engine event arrives as its own message with its own handler. The panels themselves and
their reloading are :class:`~tui_chat.tui.screens.chat_view.ChatView`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import BindingType
from textual.command import Provider
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import TextArea

from tui_chat.core.attachments import AttachmentError, check_request
from tui_chat.core.models import SearchHit, Summary
from tui_chat.tui import messages
from tui_chat.tui.actions import bindings
from tui_chat.tui.queued import Queued
from tui_chat.tui.screens.branching import BranchView
from tui_chat.tui.screens.chat_view import NO_KEY_HELP
from tui_chat.tui.text import tokens
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.summary_timeline import SummaryTimeline

if TYPE_CHECKING:
    from tui_chat.tui.screens.inspector import Activate, Regenerate

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

    streaming_id: reactive[int | None] = reactive(None, init=False)
    """Id of the reply being streamed, if any."""

    def __init__(self) -> None:
        super().__init__()
        self._gauge_timers: list[Timer] = []
        self._reply_over = False  # the reply ended (its worker may still be finishing)
        self._cancelled = False  # the user cancelled the reply: no failure toast
        self._bindings_due = False  # the footer is told after the next refresh
        self._queued: list[Queued] = []  # prompts sent when the reply ends, oldest first

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
        if not full:
            await self.app.drafts.flush()
        await self.refresh_gauge(full=full)

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
        self.chat.follow()  # the new message and its reply are shown, wherever the view was
        if self.app.replying or self._queued or self._forking:
            # Still streaming, or the reply's worker is finishing: the prompt waits its turn
            # (never glued to the next one typed — issue 22).
            self.queue_draft(event.composer, event.text)
            self._show_queue()
            return
        self._reply_over = self._cancelled = False
        self.send_draft(event.composer, event.text)

    def queue_draft(self, composer: Composer, text: str) -> None:
        """Keep the draft (and its files) to send when the reply ends; the composer is free
        for the next prompt."""
        if self.conversation is None:
            return
        try:
            check_request([a.ref() for a in self.tray.pending])
        except AttachmentError as exc:
            composer.restore(text)
            self.notify(f"{exc}; nothing was queued", severity="error", markup=False)
            return
        composer.remember(text)
        # Typed while an edit's fork is made: it goes to the fork (the conversation shown then).
        target = None if self._forking else self.conversation.id
        files, editing = self.tray.take()
        self._queued.append(Queued(target, text, files, editing))
        self.notify("Queued: it is sent when the reply ends (escape cancels the reply).")

    def send_queued(self) -> None:
        """Send the oldest queued prompt (as a fork when it was an edit)."""
        queued = self._queued.pop(0)
        if queued.editing is None and (target := queued.conversation_id or self.conversation_id):
            self.app.send_reply(target, queued.text, queued.files)
        else:
            self._send_edit(queued.editing, queued.text, queued.files)

    def keep_queued(self) -> None:
        """Before quitting: prompts still queued become their conversation's draft."""
        drafts: dict[str, list[str]] = {}
        for queued in self._queued:
            if target := queued.conversation_id or self.conversation_id:
                drafts.setdefault(target, []).append(queued.text)
        for conversation_id, texts in drafts.items():
            if conversation_id == self.conversation_id and self.composer.text.strip():
                texts.append(self.composer.text)
            self.app.drafts.note(conversation_id, "\n\n".join(texts))
        self._queued.clear()

    @property
    def _forking(self) -> bool:  # an edited prompt's fork is being made (no reply yet)
        return any(w.name == "_send_edit" and not w.is_finished for w in self.workers)

    def _show_queue(self) -> None:
        """Say on the composer how many prompts wait for the reply to end."""
        count = len(self._queued)
        self.composer.border_subtitle = (
            f"⏳ {count} prompt{'s' if count > 1 else ''} queued: sent when the reply ends"
            if count
            else None
        )

    async def reply_done(self) -> None:
        """After a reply worker ends: the title may have changed, figures certainly did; the
        next queued prompt goes out."""
        self.streaming_id = None
        self._reply_over = True
        self.refresh_bindings()
        await self.reload()
        if self._queued and not self.app.replying:
            self._reply_over = self._cancelled = False
            self.send_queued()
            self._show_queue()

    def refresh_bindings(self) -> None:
        """Tell the footer the keys changed: once after the next refresh, however many changes.

        Textual calls this twice per focus change (and on every screen resume); each call
        rebuilds the footer's keys (about 30 ms), three to four times before the first frame.
        """
        if not self._bindings_due:
            self._bindings_due = True
            self.call_after_refresh(self._publish_bindings)

    def _publish_bindings(self) -> None:
        self._bindings_due = False
        super().refresh_bindings()

    def watch_streaming_id(self) -> None:
        """Show "Cancel reply" in the footer only while streaming."""
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide actions that cannot run now."""
        if action == "cancel_reply":
            return self.app.replying and not self._reply_over
        return True

    # -- engine events -----------------------------------------------------------------------

    @on(messages.SendWaiting)
    def _send_waiting(self, message: messages.SendWaiting) -> None:
        self.notify(
            "Another tui-chat is sending to this conversation; yours goes out when it is done.",
            title="Waiting",
        )

    @on(messages.UserMessageSaved)
    async def _user_message_saved(self, message: messages.UserMessageSaved) -> None:
        saved = message.event.message
        if saved.conversation_id == self.conversation_id:
            await self.chat.add_message(saved)

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

    @on(messages.ReplyFinished)
    async def _reply_finished(self, message: messages.ReplyFinished) -> None:
        reply, error = message.event.message, message.event.error
        error_text = error.display if error else None
        view = self.chat.view_for(reply.id)
        if view is not None:
            await view.finish(reply, error_text)
        self._reply_over = True
        if self.streaming_id == reply.id:
            self.streaming_id = None
        self.refresh_bindings()  # "Cancel reply" leaves the footer now, not when the worker ends
        if self._cancelled:
            self._cancelled = False
            self.notify("Reply cancelled: what arrived is kept; ctrl+r asks again.")
        elif error_text and reply.conversation_id == self.conversation_id:
            self.notify(error_text, title="Reply failed", severity="error", markup=False)

    @on(messages.CompactionStarted)
    async def _compaction_started(self, message: messages.CompactionStarted) -> None:
        event = message.event
        if event.conversation_id == self.conversation_id:
            self.notify(f"Compacting: summary v{event.summary.version} started…", timeout=3)
            await self.refresh_timeline()

    @on(messages.CompactionFinished)
    async def _compaction_finished(self, message: messages.CompactionFinished) -> None:
        event = message.event
        if event.conversation_id != self.conversation_id:
            return
        summary = event.summary
        text = (
            f"Summary v{summary.version}: {tokens(summary.source_tokens)} → "
            f"{tokens(summary.summary_tokens)} tokens (−{summary.reduction:.0%})"
        )
        # A regenerated version is put in force after this event: regenerated() says so.
        if not event.activated and summary.trigger != "regenerate":
            text += "; kept aside (another version is active)"
        if event.notice:
            text += f"\n{event.notice}"
        self.notify(text, title="Compaction done", markup=False)
        await self.refresh_summaries()

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

    def action_cancel_reply(self) -> None:
        """Stop the streaming reply; what arrived is kept, marked incomplete."""
        if not self.app.replying:
            self.notify("No reply is streaming.", severity="warning")
            return
        self._cancelled = True
        self.app.cancel_reply()

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
        self._reply_over = self._cancelled = False
        self.app.send_reply(self.conversation.id, None)

    def _selected_or_last(self) -> int | None:
        view = self.chat.selected_view
        if view is None and (views := self.chat.views):
            view = views[-1]
        return view.message_id if view is not None else None

    async def action_toggle_pin(self) -> None:
        """Pin the selected message, or unpin it if it is pinned."""
        view = self.chat.selected_view
        if view is None:
            self.notify("Select a message first (f5 or tab, then ↑/↓).", severity="warning")
            return
        await self._pin(view.message_id, not view.pinned)

    async def action_pin_message(self) -> None:
        """Pin the selected message (the newest one when nothing is selected)."""
        if (message_id := self._selected_or_last()) is not None:
            await self._pin(message_id, True)

    async def action_unpin_message(self) -> None:
        """Unpin the selected message (the newest one when nothing is selected)."""
        if (message_id := self._selected_or_last()) is not None:
            await self._pin(message_id, False)

    async def _pin(self, message_id: int, pinned: bool) -> None:
        service = self.app.service
        if pinned:
            await service.pin(message_id)
            self.notify(f"Pinned message #{message_id}: it is always sent verbatim.")
        else:
            if not await service.unpin(message_id):
                self.notify(f"Message #{message_id} is not pinned.", severity="warning")
                return
            self.notify(f"Unpinned message #{message_id}.")
        self.chat.set_pinned(message_id, pinned)
        await self.refresh_gauge()

    def action_compact(self) -> None:
        """Compact the conversation now (in the background)."""
        if self.conversation is None:
            return
        self.notify("Compacting now…", timeout=2)
        self.app.compact(self.conversation.id)

    def _highlighted_or_active(self) -> Summary | None:
        """The version highlighted in the timeline when it has the focus, else the active."""
        timeline = self.timeline
        focused = self.focused is not None and timeline in self.focused.ancestors
        if focused and (summary := timeline.highlighted) is not None:
            return summary
        return next((s for s in timeline.summaries if s.id == timeline.active_id), None) or next(
            (s for s in timeline.summaries if s.status == "completed"), None
        )

    async def action_inspect_summary(self, summary: Summary | None = None) -> None:
        """Open the inspector on the highlighted (or active) summary version."""
        from tui_chat.tui.screens.inspector import InspectorScreen

        await self.refresh_timeline()
        summary = summary or self._highlighted_or_active()
        if summary is None or self.conversation is None:
            self.notify("No summary yet: ctrl+g compacts now.", severity="warning")
            return
        parent = next((s for s in self.timeline.summaries if s.id == summary.parent_id), None)
        active = summary.id == self.conversation.active_summary_id
        kept = await self.app.service.summaries.retention(self.conversation.id, summary)
        await self.app.push_screen(
            InspectorScreen(summary, parent, active=active, retention=kept),
            self._inspector_closed,
        )

    async def _inspector_closed(self, choice: Activate | Regenerate | None) -> None:
        from tui_chat.tui.screens.inspector import Activate, Regenerate

        if isinstance(choice, Activate):
            await self.activate_version(choice.version)
        elif isinstance(choice, Regenerate):
            self.regenerate(choice.summary, choice.instructions)

    @on(SummaryTimeline.Inspect)
    async def _inspect(self, event: SummaryTimeline.Inspect) -> None:
        await self.action_inspect_summary(event.summary)

    async def activate_version(self, version: int) -> None:
        """Put a summary version in force (0: none) and refresh the panels."""
        if self.conversation is None:
            return
        await self.app.service.summaries.activate(self.conversation.id, version)
        label = f"v{version}" if version else "no summary (everything raw)"
        self.notify(f"Summary in force: {label}.")
        await self.refresh_summaries()

    async def action_roll_back_summary(self) -> None:
        """Put the previous completed version in force (none before v1)."""
        await self.refresh_timeline()
        timeline = self.timeline
        active = next((s for s in timeline.summaries if s.id == timeline.active_id), None)
        if active is None:
            self.notify("No summary is in force: nothing to roll back.", severity="warning")
            return
        older = [
            s for s in timeline.summaries if s.status == "completed" and s.version < active.version
        ]
        await self.activate_version(older[0].version if older else 0)

    def regenerate(self, summary: Summary, instructions: str | None) -> None:
        """Start regenerating a version in the background."""
        if self.conversation is None:
            return
        self.notify(f"Regenerating summary v{summary.version}…", timeout=2)
        self.app.regenerate(self.conversation.id, summary.version, instructions or None)

    async def regenerated(self, summary: Summary) -> None:
        """A regeneration finished: say whether the new version is the one in force."""
        if self.conversation is None or summary.conversation_id != self.conversation.id:
            return
        await self.refresh_summaries()
        if self.timeline.active_id == summary.id:
            self.notify(f"Summary v{summary.version} is now the active version.")
        else:
            self.notify(f"Summary v{summary.version} kept aside (another version is active).")

    @work(exit_on_error=False)
    async def action_regenerate_summary(self) -> None:
        """Regenerate the highlighted (or active) version, asking for instructions."""
        from tui_chat.tui.screens.inspector import regenerate_prompt

        await self.refresh_timeline()
        summary = self._highlighted_or_active()
        if summary is None:
            self.notify("No completed summary to regenerate.", severity="warning")
            return
        instructions = await self.app.push_screen_wait(regenerate_prompt(summary))
        if instructions is not None:
            self.regenerate(summary, instructions.strip())

    def action_search(self) -> None:
        """Search every conversation and jump to the chosen message."""
        from tui_chat.tui.screens.search import SearchScreen, archived_ids

        # Pushed at once (not from a worker): keys typed right after ctrl+f reach the search.
        screen = SearchScreen(self.app.service.search, partial(archived_ids, self.app.service))
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
        built = await service.context(conv_id, self.composer.text or None, self.attached_files())
        recent = await service.messages(conv_id, limit=40)
        labels = await sent_labels(service, conv_id, built, new_message=new)
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
