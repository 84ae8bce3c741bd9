"""The chat screen's view: its panels, and how they are (re)loaded from the engine.

:class:`ChatView` lays out the conversation list, the chat pane, the composer, the token gauge
and the summary timeline, and refreshes them; :class:`~tui_chat.tui.screens.main.MainScreen`
builds on it with what the user and the engine do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import events, getters, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker

from tui_chat.core.attachments import Attachment, typed_text
from tui_chat.core.models import Conversation, Summary
from tui_chat.core.tokens import UNCOUNTED
from tui_chat.tui.after_frame import after_frame, next_frame
from tui_chat.tui.failures import report_failure
from tui_chat.tui.host import ChatHost
from tui_chat.tui.layout import PanelRow
from tui_chat.tui.messages import OpenConversation
from tui_chat.tui.stray_keys import is_stray, type_into
from tui_chat.tui.text import inert, one_line
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList
from tui_chat.tui.widgets.draft_tray import DraftTray
from tui_chat.tui.widgets.follow_marker import FollowMarker
from tui_chat.tui.widgets.footer import ChatFooter
from tui_chat.tui.widgets.path_completions import PathCompletions
from tui_chat.tui.widgets.sibling_switch import SiblingSwitch
from tui_chat.tui.widgets.summary_timeline import SummaryTimeline, Versions
from tui_chat.tui.widgets.token_gauge import TokenGauge
from tui_chat.tui.widgets.welcome import Welcome

if TYPE_CHECKING:
    from tui_chat.core.request import Breakdown

NO_KEY_HELP = (
    "No API key: reading, search, pins, export and offline compaction work; sending needs a "
    "key. Set it with  export ANTHROPIC_API_KEY=sk-ant-…  (or [api] api_key in config.toml) "
    "and restart."
)


PANELS_DELAY = 0.05
"""Seconds between the first frame and filling the panels at start-up."""

PANEL_WIDTHS = {"conversations": 34, "timeline": 46}
"""Preferred widths of the side panels (they give way in narrow terminals)."""


class ChatView(Screen[None]):
    """The panels of the chat and the conversation they show."""

    app = getters.app(ChatHost)
    chat = getters.query_one("#chat", ChatPane)
    composer = getters.query_one("#composer", Composer)
    gauge = getters.query_one("#gauge", TokenGauge)
    timeline = getters.query_one("#timeline", SummaryTimeline)
    conversations = getters.query_one("#conversations", ConversationList)

    conversation: reactive[Conversation | None] = reactive(None, init=False)
    """The conversation on screen."""
    breakdown: reactive[Breakdown | None] = reactive(None, init=False)
    """What the next request carries, counted (the gauge is bound to it)."""
    cost: reactive[float] = reactive(0.0, init=False)
    """Dollars spent on the conversation so far (shown by the gauge)."""
    paused: reactive[bool] = reactive(False, init=False)
    """Whether automatic compaction is paused after failures (shown by the gauge)."""
    versions: reactive[Versions] = reactive(Versions, init=False)
    """The conversation's summary versions (the timeline is bound to them)."""
    streaming_id: reactive[int | None] = reactive(None, init=False)
    """Id of the reply being streamed, if any."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: set[str] = set()
        """Conversations whose request was sent to ``count_tokens`` (once each)."""
        self._timeline_reads = 0  # refresh_timeline calls begun: only the latest one shows
        self._list_reads = 0  # refresh_conversations calls begun: only the latest one shows

    def compose(self) -> ComposeResult:
        """Header, list | chat + composer + gauge | timeline, footer."""
        yield Header(icon="◆")
        with PanelRow(PANEL_WIDTHS, fallback="composer", id="body"):
            yield ConversationList(id="conversations")
            with Vertical(id="center"):
                chat = ChatPane(self.app.service.messages, id="chat")
                yield SiblingSwitch(chat, id="branches")
                yield Welcome(chat, id="welcome")
                yield chat
                yield FollowMarker(chat, id="new-below")
                yield Static(NO_KEY_HELP, id="no-key", markup=False)
                yield DraftTray(self.app.service.drafts, id="pending-files")
                yield PathCompletions(id="path-completions")
                yield Composer(id="composer", cursor_blink=self.app.cursor_blink)
                yield TokenGauge(id="gauge").data_bind(
                    ChatView.breakdown, ChatView.cost, ChatView.paused
                )
            yield SummaryTimeline(id="timeline", clock=self.app.clock).data_bind(ChatView.versions)
        yield ChatFooter()

    def on_mount(self) -> None:
        """Start with the composer focused and panels closed."""
        self.query_one("#no-key").display = not self.app.config.has_key
        self.panels.fit()
        self.composer.focus()

    @property
    def panels(self) -> PanelRow:
        """The row of side panels and the chat column."""
        return self.query_one(PanelRow)

    def on_key(self, event: events.Key) -> None:
        """Keys no panel took: escape closes the side panel that has the focus (before it
        would cancel a reply) or returns to the composer; printable keys type into it."""
        if event.key == "escape" and self.focused is not self.composer:
            focused = self.focused
            panel = next(  # the shown side panel that has the focus, if any
                (
                    p.id
                    for p in (self.conversations, self.timeline)
                    if focused is not None and p in focused.ancestors_with_self and p.display
                ),
                None,
            )
            if panel is not None:
                self.panels.close(panel)
            if panel is not None or not self.app.replying:  # else escape cancels the reply
                self.composer.focus()
                event.stop()
            return
        type_into(self.composer, event)

    @on(events.Key)
    def _follow_again(self, event: events.Key) -> None:
        """``end`` in the composer, where it would not move the cursor (at the end of its line),
        follows the streaming reply again while the "new text below" marker shows."""
        if (
            event.key == "end"
            and self.chat.new_below
            and self.focused is self.composer
            and self.composer.cursor_at_end_of_line
        ):
            event.stop()
            event.prevent_default()
            self.chat.follow()

    def route_key(self, event: events.Key) -> None:
        """Before a key from the terminal is routed: a printable one that no binding takes
        while the messages, the timeline or the conversation list have the focus moves the
        focus to the composer at once, so it and every key after it are typed there in order
        (a focus change by ``focus()`` lands only after the keys already received)."""
        focused = self.focused
        panels = (self.timeline, self.conversations)
        if (
            focused is not None
            and (focused is self.chat or any(p in focused.ancestors for p in panels))
            and is_stray(self, event)
        ):
            self.set_focus(self.composer)

    async def action_scroll_chat(self, where: str) -> None:
        """Scroll the chat from the composer: a page ``up`` or ``down``, or to its ``top``
        (the first page loaded if needed) or its ``end`` (followed again)."""
        chat = self.chat
        if where in ("up", "down"):
            with contextlib.suppress(SkipAction):  # nothing to scroll yet
                (chat.action_page_up if where == "up" else chat.action_page_down)()
        elif where == "top":
            await chat.action_select_first(select=False)
        elif chat.has_newer and chat.conversation_id is not None:
            await chat.show(chat.conversation_id)  # the latest page, followed
        else:
            chat.follow()

    def action_toggle_conversations(self) -> None:
        """Show or hide the conversation list."""
        self._toggle_panel("conversations")

    def action_toggle_timeline(self) -> None:
        """Show or hide the summary timeline."""
        self._toggle_panel("timeline")

    def _toggle_panel(self, panel_id: str) -> None:
        """Close a shown panel; open a hidden one (others give way if the width is short)."""
        panels = self.panels
        if panels.is_shown(panel_id):
            panels.close(panel_id)
            self.composer.focus()
        elif panels.open(panel_id):
            panel = self.conversations if panel_id == "conversations" else self.timeline
            panel.focus_list()
        else:
            panels.close(panel_id)
            self.notify(
                f"No room for that panel beside the chat ({self.size.width} columns).",
                severity="warning",
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: report this screen's failures here."""
        report_failure(self, event.worker)

    @property
    def conversation_id(self) -> str | None:
        """Id of the conversation on screen."""
        return self.conversation.id if self.conversation else None

    async def open_conversation(
        self,
        conversation_id: str,
        around: int | None = None,
        *,
        panels_after_paint: bool = False,
        draft_stays: bool = False,
    ) -> None:
        """Show a conversation (optionally scrolled to one message) and refresh every panel.

        Args:
            conversation_id: The conversation.
            around: A message to scroll to.
            panels_after_paint: Refresh the gauge, timeline and list after the next frame is
                drawn instead of before returning (start-up: the chat comes first).
            draft_stays: Keep the composer's text (another branch of the same conversation).
        """
        await self.keep_draft()
        conversation = await self.app.service.conversations.resolve(conversation_id)
        self.conversation = conversation
        self._show_title(conversation)
        if (problem := self.app.service.conversations.settings_problem(conversation)) is not None:
            self.notify(problem, title="Invalid settings", severity="warning", markup=False)
        await self.chat.show(conversation.id, around)
        page = [v.message for v in self.chat.views]
        self.composer.set_history([typed_text(m.content, m.text) for m in page if m.role == "user"])
        if draft_stays:
            self.app.drafts.note(conversation.id, self.composer.text)
        else:
            await self._show_draft(conversation.id)
        if panels_after_paint:
            # A moment after the frame is composed, so the driver's writer thread puts it on
            # the terminal before the panels' work (the tokenizer's data loads then) holds on.
            after_frame(self, self.set_timer, PANELS_DELAY, self.refresh_panels)
        else:
            await self.refresh_panels()

    async def keep_draft(self) -> None:
        """Write the composer's text as the draft of the conversation on screen."""
        if self.conversation is not None:
            self.app.drafts.note(self.conversation.id, self.composer.text)
        await self.app.drafts.flush()

    async def _show_draft(self, conversation_id: str) -> None:
        """Put the conversation's kept draft in the composer (unless typing began meanwhile)."""
        shown = self.composer.text
        draft = await self.app.drafts.get(conversation_id)
        if self.composer.text == shown and draft != shown:
            self.composer.load_text(draft)
            self.composer.move_cursor(self.composer.document.end)

    def _show_title(self, conversation: Conversation) -> None:
        policy = self.app.service.conversations.policy_for(conversation)
        self.title = one_line(conversation.title, 60)
        self.sub_title = inert(f"{conversation.model} · preset {policy.preset}")

    async def reload(self) -> None:
        """Read the conversation again (its title or settings changed) and refresh everything.

        The title changes at once; the panels are refreshed by :meth:`refresh_panels_later`,
        so a caller's message loop (the app's, after a reply) is not held by their work.
        """
        if self.conversation is not None:
            conversation = await self.app.service.conversations.resolve(self.conversation.id)
            self.conversation = conversation
            self._show_title(conversation)
            self.refresh_panels_later()

    async def after_reply(self) -> None:
        """What a send changed, in one call: the next request's gauge (one build, after the
        next frame), the conversation list and, after a conversation's first send, the title
        it was named by. The cost and the answered request's breakdown came with the reply's
        end (``ReplyFlow.finished`` shows them); the timeline and the pause change only by
        compaction, whose events say so."""
        from tui_chat.engine.conversations import NEW_TITLE  # loaded with the engine by now

        if self.conversation is None:
            return
        if self.conversation.title == NEW_TITLE:
            await self.reload()  # named from its first prompt
            return
        from tui_chat.engine.service import NotFound

        async def after_frame() -> None:
            if not await next_frame(self):
                return
            with contextlib.suppress(NotFound):  # deleted elsewhere: OutsideWatch says so
                await self.refresh_gauge(figures=False)
            await self.refresh_conversations()

        self.run_worker(after_frame(), group="panels", exclusive=True, exit_on_error=False)

    def refresh_panels_later(self) -> None:
        """Refresh the panels in a worker once the next frame is drawn (a newer call wins)."""

        async def after_frame() -> None:
            if await next_frame(self):
                await self.refresh_panels()

        self.run_worker(after_frame(), group="panels", exclusive=True, exit_on_error=False)

    async def refresh_panels(self) -> None:
        """Reload the gauge, the cost, the timeline and the conversation list."""
        from tui_chat.engine.service import NotFound

        # Deleted by another process: OutsideWatch says so and opens another conversation.
        with contextlib.suppress(NotFound):
            await self.refresh_gauge()
            await self.refresh_timeline()
        await self.refresh_conversations()

    def attached_files(self) -> Sequence[Attachment]:
        """Files attached to the draft, counted by the gauge (none here)."""
        return ()

    async def refresh_gauge(self, *, full: bool = False, figures: bool = True) -> None:
        """Recount the next request with the current draft.

        Args:
            full: Build the whole request, so excerpts recalled for the draft are counted
                too (slower: only after a longer pause in typing).
            figures: Read the cost and the pause too (after a reply the event carried them).
        """
        if (conv_id := self.conversation_id) is None:
            return
        service = self.app.service
        draft = self.composer.text
        if full and draft.strip():
            breakdown = (
                await service.requests.context(conv_id, draft, self.attached_files())
            ).breakdown
        else:
            breakdown = await service.requests.gauge(conv_id, draft, self.attached_files())
        if draft != self.composer.text or conv_id != self.conversation_id:
            return  # typing went on (or the conversation changed): a newer count follows
        self.breakdown = breakdown
        if figures:
            self.cost = await service.costs.of(conv_id)
            self.paused = await service.summaries.paused(conv_id)
        if UNCOUNTED in breakdown.counted and self.app.config.has_key:
            count_once(self, conv_id)

    async def refresh_timeline(self) -> None:
        """Reload the summary versions."""
        if self.conversation is None:
            return
        self._timeline_reads += 1
        read = self._timeline_reads
        service = self.app.service
        conversation = await service.conversations.resolve(self.conversation.id)
        policy = service.conversations.policy_for(conversation)
        rate = policy.compression_rate if policy.strategy == "segments" else None
        summaries = await service.summaries.versions(conversation.id)
        if read != self._timeline_reads or self.conversation_id != conversation.id:
            return  # a refresh begun since read later (or another conversation opened)
        self.conversation = conversation
        self.versions = Versions(tuple(summaries), conversation.active_summary_id, rate)

    def show_versions(self, summaries: Sequence[Summary], active_id: int | None) -> None:
        """Show the summary versions an engine event carried (newest first)."""
        if self.conversation is None:
            return
        policy = self.app.service.conversations.policy_for(self.conversation)
        rate = policy.compression_rate if policy.strategy == "segments" else None
        self._timeline_reads += 1  # a read begun before this would show older versions
        self.conversation = replace(self.conversation, active_summary_id=active_id)
        self.versions = Versions(tuple(summaries), active_id, rate)

    async def refresh_summaries(self) -> None:
        """Reload what a compaction changes: the timeline and the gauge."""
        await self.refresh_timeline()
        await self.refresh_gauge()

    async def refresh_conversations(self) -> None:
        """Reload the conversation list."""
        self._list_reads += 1
        read = self._list_reads
        include = self.conversations.show_archived
        service = self.app.service
        infos = await service.conversations.list(include_archived=include, with_cost=True)
        families = await self.app.service.branches.families()
        if read != self._list_reads:
            return  # a refresh begun since (archived shown or hidden meanwhile) reads later
        self.conversations.set_conversations(
            infos, self.conversation_id, self.app.clock(), families
        )

    @on(ConversationList.ArchivedToggled)
    async def _archived_toggled(self) -> None:
        await self.refresh_conversations()

    @on(OpenConversation)
    async def _open(self, event: OpenConversation) -> None:
        await self.open_conversation(
            event.conversation_id, event.message_id, draft_stays=event.in_place
        )
        if not event.in_place:  # another branch in place: the focus stays (f5, [ ] again)
            # A search hit stays selected (f5 goes to it) while typing goes on in the composer.
            self.composer.focus()


def count_once(view: ChatView, conversation_id: str) -> None:
    """Have the API count a stored conversation's request once, before its model's first
    reply (``count_tokens``): the gauge then shows a learnt calibration instead of the
    tokenizer's prior. The draft is never sent for counting."""
    if conversation_id in view.counted or not view.chat.views:
        return
    view.counted.add(conversation_id)

    async def count() -> None:
        if await view.app.service.requests.check_count(conversation_id) is not None:
            await view.refresh_gauge(figures=False)  # the count changes the calibration alone

    view.run_worker(count(), group="count", exit_on_error=False)
