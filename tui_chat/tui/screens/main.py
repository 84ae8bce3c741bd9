"""The main screen: conversation list, chat pane, composer, token gauge, summary timeline.

Every user action lives here as an ``action_*`` method, so key bindings, the command palette
and the help screen all name the same things.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Static, TextArea
from textual.worker import Worker

from tui_chat.core.models import Conversation, Message, Summary
from tui_chat.engine.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ReplyDelta,
    ReplyFinished,
    ReplyStarted,
    UserMessageSaved,
)
from tui_chat.tui.commands import ChatCommands
from tui_chat.tui.messages import ConversationsChanged, EngineUpdate, OpenConversation
from tui_chat.tui.text import inert, one_line, tokens
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList
from tui_chat.tui.widgets.summary_timeline import SummaryTimeline
from tui_chat.tui.widgets.token_gauge import TokenGauge

if TYPE_CHECKING:
    from tui_chat.tui.app import ChatApp

GAUGE_DEBOUNCE = 0.15
"""Seconds of typing pause before the gauge recounts the draft."""

RECALL_DEBOUNCE = 0.6
"""Seconds of typing pause before the full request (with recall for the draft) is built."""

NO_KEY_HELP = (
    "No API key: reading, search, pins, export and offline compaction work; sending needs a "
    "key. Set it with  export ANTHROPIC_API_KEY=sk-ant-…  (or [api] api_key in config.toml) "
    "and restart."
)


def _app_type() -> type[ChatApp]:
    from tui_chat.tui.app import ChatApp

    return ChatApp


class MainScreen(Screen[None]):
    """The chat: everything the user works with, keyboard first."""

    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {ChatCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_conversation", "New", tooltip="New conversation"),
        Binding("ctrl+b", "toggle_conversations", "Chats", tooltip="Show/hide conversations"),
        Binding("ctrl+t", "toggle_timeline", "Timeline", tooltip="Show/hide summary timeline"),
        Binding("ctrl+f", "search", "Search", tooltip="Search all conversations"),
        Binding("ctrl+g", "compact", "Compact", tooltip="Compact now"),
        Binding("ctrl+o", "context_preview", "Context", tooltip="Context preview (next request)"),
        Binding("ctrl+s", "export", "Export", show=False, tooltip="Export conversation"),
        Binding("ctrl+r", "retry", "Retry", show=False, tooltip="Retry the last reply"),
        Binding("escape", "cancel_reply", "Cancel reply", tooltip="Cancel the streaming reply"),
        Binding("f2", "rename_conversation", "Rename", show=False, tooltip="Rename conversation"),
        Binding("f3", "settings", "Settings", show=False, tooltip="Conversation settings"),
        Binding("f4", "inspect_summary", "Inspect", show=False, tooltip="Inspect summary"),
        Binding("f5", "focus_messages", "Messages", show=False, tooltip="Select messages"),
    ]

    app = getters.app(_app_type)
    chat = getters.query_one("#chat", ChatPane)
    composer = getters.query_one("#composer", Composer)
    gauge = getters.query_one("#gauge", TokenGauge)
    timeline = getters.query_one("#timeline", SummaryTimeline)
    conversations = getters.query_one("#conversations", ConversationList)

    conversation: reactive[Conversation | None] = reactive(None, init=False)
    """The conversation on screen."""
    streaming_id: reactive[int | None] = reactive(None, init=False)
    """Id of the reply being streamed, if any."""

    def __init__(self) -> None:
        super().__init__()
        self._gauge_timers: list[Timer] = []

    def compose(self) -> ComposeResult:
        """Header, list | chat + composer + gauge | timeline, footer."""
        yield Header(icon="◆")
        with Horizontal(id="body"):
            yield ConversationList(id="conversations")
            with Vertical(id="center"):
                yield ChatPane(id="chat")
                yield Static(NO_KEY_HELP, id="no-key", markup=False)
                yield Composer(id="composer", cursor_blink=self.app.cursor_blink)
                yield TokenGauge(id="gauge")
            yield SummaryTimeline(id="timeline", clock=self.app.clock)
        yield Footer()

    def on_mount(self) -> None:
        """Start with the composer focused and panels closed."""
        self.query_one("#no-key").display = not self.app.config.has_key
        self.conversations.display = False
        self.timeline.display = False
        self.composer.focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: hand failures to the app's one handler."""
        self.app.report_worker_failure(event.worker)

    # -- loading ---------------------------------------------------------------------------

    @property
    def conversation_id(self) -> str | None:
        """Id of the conversation on screen."""
        return self.conversation.id if self.conversation else None

    async def open_conversation(self, conversation_id: str, around: int | None = None) -> None:
        """Show a conversation (optionally scrolled to one message) and refresh every panel."""
        conversation = await self.app.service.resolve(conversation_id)
        self.conversation = conversation
        self._show_title(conversation)
        await self.chat.show(conversation.id, around)
        page = [v.message for v in self.chat.views]
        self.composer.set_history([m.text for m in page if m.role == "user"])
        await self.refresh_panels()

    def _show_title(self, conversation: Conversation) -> None:
        policy = self.app.service.policy_for(conversation)
        self.title = one_line(conversation.title, 60)
        self.sub_title = inert(f"{conversation.model} · preset {policy.preset}")

    async def refresh_panels(self) -> None:
        """Reload the gauge, the cost, the timeline and the conversation list."""
        await self.refresh_gauge()
        await self.refresh_timeline()
        await self.refresh_conversations()

    async def refresh_gauge(self, *, full: bool = False) -> None:
        """Recount the next request with the current draft.

        Args:
            full: Build the whole request, so excerpts recalled for the draft are counted
                too (slower: only after a longer pause in typing).
        """
        if (conv_id := self.conversation_id) is None:
            return
        service = self.app.service
        draft = self.composer.text
        if full and draft.strip():
            breakdown = (await service.context(conv_id, draft)).breakdown
        else:
            breakdown = await service.gauge(conv_id, draft)
        if draft != self.composer.text or conv_id != self.conversation_id:
            return  # typing went on (or the conversation changed): a newer count follows
        self.gauge.breakdown = breakdown
        self.gauge.cost = await service.cost_usd(conv_id)
        self.gauge.paused = await service.compaction_paused(conv_id)

    async def refresh_timeline(self) -> None:
        """Reload the summary versions."""
        if self.conversation is None:
            return
        service = self.app.service
        conversation = await service.resolve(self.conversation.id)
        self.conversation = conversation
        policy = service.policy_for(conversation)
        rate = policy.compression_rate if policy.strategy == "segments" else None
        await self.timeline.set_summaries(
            await service.summaries(conversation.id), conversation.active_summary_id, rate
        )

    async def refresh_conversations(self) -> None:
        """Reload the conversation list."""
        infos = await self.app.service.list_conversations()
        self.conversations.set_conversations(infos, self.conversation_id, self.app.clock())

    @on(ConversationsChanged)
    async def _conversations_changed(self) -> None:
        await self.refresh_conversations()

    @on(OpenConversation)
    async def _open(self, event: OpenConversation) -> None:
        await self.open_conversation(event.conversation_id, event.message_id)
        if event.message_id is not None:
            self.chat.focus()
        else:
            self.composer.focus()

    # -- the draft and the gauge -------------------------------------------------------------

    @on(TextArea.Changed, "#composer")
    def _draft_changed(self) -> None:
        # Counting is cheap, but not per keystroke: wait for a pause in typing.
        for timer in self._gauge_timers:
            timer.stop()
        self._gauge_timers = [
            self.set_timer(GAUGE_DEBOUNCE, partial(self._update_gauge, False)),
            self.set_timer(RECALL_DEBOUNCE, partial(self._update_gauge, True)),
        ]

    @work(group="gauge", exclusive=True, exit_on_error=False)
    async def _update_gauge(self, full: bool) -> None:
        await self.refresh_gauge(full=full)

    # -- sending -----------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submit(self, event: Composer.Submitted) -> None:
        if self.conversation is None:
            return
        if not self.app.service.has_key:
            self.notify(NO_KEY_HELP, title="Cannot send", severity="error", markup=False)
            return
        if self.streaming_id is not None or self.app.replying:
            self.notify("A reply is still streaming: escape cancels it.", severity="warning")
            return
        event.composer.remember(event.text)
        self.app.send_reply(self.conversation.id, event.text)

    async def on_engine_update(self, message: EngineUpdate) -> None:
        """Apply an engine event to the widgets."""
        event = message.event
        current = self.conversation_id
        match event:
            case UserMessageSaved(message=saved) if saved.conversation_id == current:
                await self.chat.add_message(saved)
            case ReplyStarted(message=reply) if reply.conversation_id == current:
                await (await self.chat.add_message(reply)).start_stream()
                self.streaming_id = reply.id
            case ReplyDelta(message_id=message_id, text=text):
                if (streaming := self.chat.view_for(message_id)) is not None:
                    await streaming.write(text)
            case ReplyFinished(message=reply, error=error):
                await self._reply_finished(reply, error.display if error else None)
            case CompactionStarted(conversation_id=conv_id, summary=summary):
                if conv_id == current:
                    self.notify(f"Compacting: summary v{summary.version} started…", timeout=3)
                    await self.refresh_timeline()
            case CompactionFinished(conversation_id=conv_id, summary=summary, activated=active):
                if conv_id == current:
                    self.notify(self._finished_text(summary, active), title="Compaction done")
                    await self.refresh_timeline()
                    await self.refresh_gauge()
            case CompactionFailed(conversation_id=conv_id, summary=summary, error=error, paused=p):
                if conv_id == current:
                    version = f" v{summary.version}" if summary else ""
                    text = f"Summary{version} failed: {error}"
                    if p:
                        text += " — auto-compaction is paused; ctrl+g still compacts."
                    self.notify(text, title="Compaction failed", severity="error", markup=False)
                    await self.refresh_timeline()
                    await self.refresh_gauge()

    @staticmethod
    def _finished_text(summary: Summary, activated: bool) -> str:
        text = (
            f"Summary v{summary.version}: {tokens(summary.source_tokens)} → "
            f"{tokens(summary.summary_tokens)} tokens (−{summary.reduction:.0%})"
        )
        if not activated:
            text += "; kept aside (another version is active)"
        return text

    async def _reply_finished(self, reply: Message, error_text: str | None) -> None:
        view = self.chat.view_for(reply.id)
        if view is not None:
            await view.finish(reply, error_text)
        if self.streaming_id == reply.id:
            self.streaming_id = None
        if error_text and reply.conversation_id == self.conversation_id:
            self.notify(error_text, title="Reply failed", severity="error", markup=False)

    async def reply_done(self) -> None:
        """After a reply worker ends: the title may have changed, figures certainly did."""
        self.streaming_id = None
        if self.conversation is not None:
            conversation = await self.app.service.resolve(self.conversation.id)
            self.conversation = conversation
            self._show_title(conversation)
            await self.refresh_panels()

    def watch_streaming_id(self) -> None:
        """Show "Cancel reply" in the footer only while streaming."""
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide actions that cannot run now."""
        if action == "cancel_reply":
            return self.app.replying
        return True

    # -- actions -----------------------------------------------------------------------------

    def action_focus_composer(self) -> None:
        """Focus the composer."""
        self.composer.focus()

    def action_focus_messages(self) -> None:
        """Focus the chat pane to select, copy and pin messages."""
        self.chat.focus()

    def action_cancel_reply(self) -> None:
        """Stop the streaming reply; what arrived is kept, marked incomplete."""
        if not self.app.replying:
            self.notify("No reply is streaming.", severity="warning")
            return
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
        self.app.send_reply(self.conversation.id, None)

    async def action_new_conversation(self) -> None:
        """Start a new conversation and open it."""
        conversation = await self.app.service.new_conversation()
        await self.open_conversation(conversation.id)
        self.composer.focus()

    def action_toggle_conversations(self) -> None:
        """Show or hide the conversation list."""
        panel = self.conversations
        panel.display = not panel.display
        if panel.display:
            panel.focus_list()
        else:
            self.composer.focus()

    def action_toggle_timeline(self) -> None:
        """Show or hide the summary timeline."""
        panel = self.timeline
        panel.display = not panel.display
        if panel.display:
            panel.focus_list()
        else:
            self.composer.focus()

    def _target(self, conversation_id: str | None) -> str | None:
        return conversation_id or self.conversation_id

    @work(exit_on_error=False)
    async def action_rename_conversation(self, conversation_id: str | None = None) -> None:
        """Rename a conversation (the current one by default)."""
        from tui_chat.tui.screens.prompt import TextPrompt

        if (conv_id := self._target(conversation_id)) is None:
            return
        conversation = await self.app.service.resolve(conv_id)
        title = await self.app.push_screen_wait(
            TextPrompt("Rename conversation", conversation.title, "A short title")
        )
        if title is None or not title.strip():
            return
        await self.app.service.rename(conv_id, title)
        if conv_id == self.conversation_id:
            await self.reply_done()
        else:
            await self.refresh_conversations()

    @work(exit_on_error=False)
    async def action_delete_conversation(self, conversation_id: str | None = None) -> None:
        """Delete a conversation after confirmation; opens another one afterwards."""
        from tui_chat.tui.screens.prompt import Confirm

        if (conv_id := self._target(conversation_id)) is None:
            return
        conversation = await self.app.service.resolve(conv_id)
        question = (
            f"Delete “{one_line(conversation.title, 50)}” and all its messages and summaries? "
            "This cannot be undone."
        )
        if not await self.app.push_screen_wait(Confirm(question, "Delete")):
            return
        await self.app.service.delete(conv_id)
        self.notify(f"Deleted “{one_line(conversation.title, 50)}”.", markup=False)
        if conv_id == self.conversation_id:
            await self._open_any()
        else:
            await self.refresh_conversations()

    async def action_archive_conversation(self, conversation_id: str | None = None) -> None:
        """Archive a conversation (hidden from the list, kept in the database)."""
        if (conv_id := self._target(conversation_id)) is None:
            return
        conversation = await self.app.service.archive(conv_id)
        self.notify(f"Archived “{one_line(conversation.title, 50)}”.", markup=False)
        if conv_id == self.conversation_id:
            await self._open_any()
        else:
            await self.refresh_conversations()

    async def _open_any(self) -> None:
        infos = await self.app.service.list_conversations()
        if infos:
            await self.open_conversation(infos[0].conversation.id)
        else:
            conversation = await self.app.service.new_conversation()
            await self.open_conversation(conversation.id)

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
        timeline = self.timeline
        if timeline.display and (summary := timeline.highlighted) is not None:
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
        await self.app.push_screen(
            InspectorScreen(
                summary, parent, active=summary.id == self.conversation.active_summary_id
            )
        )

    @on(SummaryTimeline.Inspect)
    async def _inspect(self, event: SummaryTimeline.Inspect) -> None:
        await self.action_inspect_summary(event.summary)

    async def activate_version(self, version: int) -> None:
        """Put a summary version in force (0: none) and refresh the panels."""
        if self.conversation is None:
            return
        await self.app.service.activate(self.conversation.id, version)
        label = f"v{version}" if version else "no summary (everything raw)"
        self.notify(f"Summary in force: {label}.")
        await self.refresh_timeline()
        await self.refresh_gauge()

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

    @work(exit_on_error=False)
    async def action_regenerate_summary(self) -> None:
        """Regenerate the highlighted (or active) version, asking for instructions."""
        from tui_chat.tui.screens.prompt import TextPrompt

        await self.refresh_timeline()
        summary = self._highlighted_or_active()
        if summary is None:
            self.notify("No completed summary to regenerate.", severity="warning")
            return
        instructions = await self.app.push_screen_wait(
            TextPrompt(
                f"Regenerate summary v{summary.version} — instructions (optional)",
                placeholder="e.g. keep every SQL statement and file path",
            )
        )
        if instructions is not None:
            self.regenerate(summary, instructions.strip())

    @work(exit_on_error=False)
    async def action_search(self) -> None:
        """Search every conversation and jump to the chosen message."""
        from tui_chat.tui.screens.search import SearchScreen

        hit = await self.app.push_screen_wait(SearchScreen())
        if hit is not None:
            self.post_message(OpenConversation(hit.conversation_id, hit.message_id))

    async def action_context_preview(self) -> None:
        """Show the exact request the next send would make."""
        from tui_chat.tui.screens.context_preview import ContextPreviewScreen

        if self.conversation is None:
            return
        built = await self.app.service.context(self.conversation.id, self.composer.text or None)
        await self.app.push_screen(ContextPreviewScreen(built))

    @work(exit_on_error=False)
    async def action_export(self) -> None:
        """Export the conversation to a Markdown (``.md``) or JSON (``.json``) file."""
        from tui_chat.tui.screens.prompt import TextPrompt

        if self.conversation is None:
            return
        default = self.app.export_dir / f"tui-chat-{self.conversation.id[:8]}.md"
        answer = await self.app.push_screen_wait(
            TextPrompt("Export conversation to (.md or .json)", str(default))
        )
        if not answer or not answer.strip():
            return
        path = Path(answer.strip()).expanduser()
        fmt = "json" if path.suffix.lower() == ".json" else "md"
        text = await self.app.service.export(self.conversation.id, fmt)
        try:
            # Private like the database it comes from (0600), whatever the umask.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            self.notify(
                f"Cannot write {path}: {exc.strerror or exc}", severity="error", markup=False
            )
            return
        self.notify(f"Exported to {path}", title="Export", markup=False)

    async def action_settings(self) -> None:
        """Open the conversation's settings."""
        from tui_chat.tui.screens.settings import SettingsScreen

        if self.conversation is None:
            return
        await self.app.push_screen(SettingsScreen(self.conversation), self._settings_closed)

    async def _settings_closed(self, changed: bool | None) -> None:
        if changed and self.conversation is not None:
            await self.reply_done()
