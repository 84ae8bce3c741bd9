"""The chat screen: one class composed of parts.

:class:`MainScreen` lays out the panels, holds what the engine reports as reactives (the
widgets are bound to them) and (re)loads them; everything the user and the engine do to the
chat is in a part it holds, each built with the screen as a small protocol
(:class:`~tui_chat.tui.screens.chat_screen.ChatScreen`, or ``ReplyScreen`` for the reply's turn):

- ``drafting`` (:class:`~tui_chat.tui.screens.drafting.Drafting`): the draft, its files, the
  gauge's recount while typing, sending;
- ``branches`` (:class:`~tui_chat.tui.screens.branching.Branches`): edit, fork, compact up to
  and delete at a message;
- ``messages`` (:class:`~tui_chat.tui.screens.exchange.Exchange`): the messages and replies
  the engine reports, pins, retry, cancel; ``replies``
  (:class:`~tui_chat.tui.screens.reply_flow.ReplyFlow`): a reply's end and the prompts queued;
- ``view`` (:class:`~tui_chat.tui.screens.chat_view.ChatView`): the panels' keys, focus,
  scrolling and the dialogs over the chat;
- ``conversation`` and ``summary``
  (:class:`~tui_chat.tui.screens.conversation_commands.ConversationCommands`,
  :class:`~tui_chat.tui.screens.summary_commands.SummaryCommands`).

A key or the palette names a part's action by namespace (``part('drafting.attach_file')``,
from the table of actions in ``tui/actions.py``): :meth:`MainScreen.action_part` runs it and
:meth:`MainScreen.check_action` asks the part whether it can run. Each message the screen
receives (an engine event, a widget's request) goes to the parts that declared it in their
``routes()``, in the order the parts are listed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from inspect import isawaitable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import getters, on
from textual.actions import parse
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.command import Provider
from textual.containers import Vertical
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import Worker

from tui_chat.core.attachments import typed_text
from tui_chat.core.models import Conversation, Summary
from tui_chat.core.tokens import UNCOUNTED
from tui_chat.tui.actions import bindings
from tui_chat.tui.after_frame import after_frame, next_frame
from tui_chat.tui.failures import report_failure
from tui_chat.tui.host import ChatHost
from tui_chat.tui.layout import PanelRow
from tui_chat.tui.screens.branching import Branches
from tui_chat.tui.screens.chat_view import NO_KEY_HELP, PANEL_WIDTHS, PANELS_DELAY, ChatView
from tui_chat.tui.screens.conversation_commands import ConversationCommands
from tui_chat.tui.screens.drafting import Drafting
from tui_chat.tui.screens.exchange import Exchange
from tui_chat.tui.screens.outside import OutsideWatch
from tui_chat.tui.screens.reply_flow import ReplyFlow
from tui_chat.tui.screens.summary_commands import SummaryCommands
from tui_chat.tui.text import inert, one_line
from tui_chat.tui.widgets.chat_pane import ChatPane
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.conversation_list import ConversationList, Listing
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

# The other screens (inspector, settings, search, prompts, context preview, help) and the
# palette's commands are imported by the actions that open them: the first frame needs none.

Route = Callable[[Any], object]
"""A part's handler of one message type (a coroutine's result is awaited; ``True``: taken,
the parts after it do not see the message)."""


def _chat_commands() -> type[Provider]:
    """The palette's provider, loaded when the palette first opens."""
    from tui_chat.tui.commands import ChatCommands

    return ChatCommands


class MainScreen(Screen[None]):
    """The chat: everything the user works with, keyboard first."""

    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {_chat_commands}

    AUTO_FOCUS = "#composer"
    """Focused when the screen is composed (not the first focusable widget, then this one:
    each focus change recomposes the footer)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    app = getters.app(ChatHost)
    chat = getters.query_one("#chat", ChatPane)
    composer = getters.query_one("#composer", Composer)
    gauge = getters.query_one("#gauge", TokenGauge)
    timeline = getters.query_one("#timeline", SummaryTimeline)
    conversations = getters.query_one("#conversations", ConversationList)
    tray = getters.query_one("#pending-files", DraftTray)
    """The files attached to the draft, and the prompt being edited."""
    panels = getters.query_one(PanelRow)
    """The row of side panels and the chat column."""

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
    listing: reactive[Listing] = reactive(Listing, init=False)
    """The conversations the list shows (it is bound to them)."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: set[str] = set()
        """Conversations whose request was sent to ``count_tokens`` (once each)."""
        self._timeline_reads = 0  # refresh_timeline calls begun: only the latest one shows
        self._list_reads = 0  # refresh_conversations calls begun: only the latest one shows
        self._bindings_due = False  # the footer is told after the next refresh
        self.replies = ReplyFlow(self)
        """Prompts queued while a reply runs, and what the reply's end does."""
        self.drafting = Drafting(self)
        """The draft, its files, the gauge while typing, and sending."""
        self.branches = Branches(self)
        """Edit, fork, compact up to and delete at the selected message."""
        self.messages = Exchange(self)
        """What the engine reports (messages, replies, compaction), pins, retry, cancel."""
        self.view = ChatView(self)
        """The panels' keys, focus, scrolling, and the dialogs over the chat."""
        self.conversation_commands = ConversationCommands(self)
        """New, rename, delete, archive, export."""
        self.summary_commands = SummaryCommands(self)
        """Compact now, inspect, activate, roll back and regenerate summary versions."""
        self.parts: Mapping[str, Any] = {
            "replies": self.replies,
            "drafting": self.drafting,
            "branches": self.branches,
            "messages": self.messages,
            "view": self.view,
            "conversation": self.conversation_commands,
            "summary": self.summary_commands,
        }
        """The parts by action namespace, in the order messages are handed to them."""
        self.routes: dict[type[TextualMessage], list[Route]] = {}
        """The parts' handlers by message type, in the parts' order."""
        for part in self.parts.values():
            for kind, route in part.routes().items():
                self.routes.setdefault(kind, []).append(route)

    def compose(self) -> ComposeResult:
        """Header, list | chat + composer + gauge | timeline, footer."""
        yield Header(icon="◆")
        with PanelRow(PANEL_WIDTHS, fallback="composer", id="body"):
            yield ConversationList(id="conversations").data_bind(MainScreen.listing)
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
                    MainScreen.breakdown, MainScreen.cost, MainScreen.paused
                )
            yield SummaryTimeline(id="timeline", clock=self.app.clock).data_bind(
                MainScreen.versions
            )
        yield ChatFooter()

    def on_mount(self) -> None:
        """Start with the composer focused and panels closed; watch for what other processes
        write."""
        self.query_one("#no-key").display = not self.app.config.has_key
        self.panels.fit()
        self.composer.focus()
        OutsideWatch(self).start()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: report this screen's failures here."""
        report_failure(self, event.worker)

    @property
    def conversation_id(self) -> str | None:
        """Id of the conversation on screen."""
        return self.conversation.id if self.conversation else None

    # -- the parts' actions and messages ------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A part's action runs when the part says it can (``check_action`` of its own)."""
        if action == "part" and parameters and isinstance(parameters[0], str):
            namespace, name, params = parse(parameters[0])
            check = getattr(self.parts.get(namespace), "check_action", None)
            if check is not None:
                return bool(check(name, params))
        return True

    async def action_part(self, action: str) -> None:
        """Run a part's action: ``drafting.attach_file`` runs ``drafting.action_attach_file()``."""
        namespace, name, params = parse(action)
        if isawaitable(done := getattr(self.parts[namespace], f"action_{name}")(*params)):
            await done

    @on(TextualMessage)
    async def _routed(self, message: TextualMessage) -> None:
        """Hand a message to the parts that handle its type, in order, until one takes it."""
        for route in self.routes.get(type(message), ()):
            taken = route(message)
            if isawaitable(taken):
                taken = await taken
            if taken is True:
                return

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

    def watch_conversation(self, conversation: Conversation | None) -> None:
        """The header shows the conversation's title, model and preset (Textual's ``Header``
        is bound to the screen's ``title`` and ``sub_title``)."""
        if conversation is not None:
            policy = self.app.service.conversations.policy_for(conversation)
            self.title = one_line(conversation.title, 60)
            self.sub_title = inert(f"{conversation.model} · preset {policy.preset}")

    def watch_streaming_id(self) -> None:
        """Show "Cancel reply" in the footer only while streaming."""
        self.refresh_bindings()

    # -- what the screen shows, (re)loaded ----------------------------------------------------

    async def open_conversation(
        self,
        conversation_id: str,
        around: int | None = None,
        *,
        panels_after_paint: bool = False,
        draft_stays: bool = False,
    ) -> None:
        """Show a conversation (optionally scrolled to one message) with the files attached to
        its draft, and refresh every panel; an edit of another one is dropped (the other's
        attached files stay in its draft).

        Args:
            conversation_id: The conversation.
            around: A message to scroll to.
            panels_after_paint: Refresh the gauge, timeline and list after the next frame is
                drawn instead of before returning (start-up: the chat comes first).
            draft_stays: Keep the composer's text (another branch of the same conversation).
        """
        if conversation_id != self.conversation_id:
            for tray in self.query(DraftTray):  # not there yet at start-up
                tray.forget()
        await self.drafting.keep_draft()
        conversation = await self.app.service.conversations.resolve(conversation_id)
        self.conversation = conversation  # the header follows (watch_conversation)
        if (problem := self.app.service.conversations.settings_problem(conversation)) is not None:
            self.notify(problem, title="Invalid settings", severity="warning", markup=False)
        await self.chat.show(conversation.id, around)
        page = [v.message for v in self.chat.views]
        self.composer.set_history([typed_text(m.content, m.text) for m in page if m.role == "user"])
        if draft_stays:
            self.app.drafts.note(conversation.id, self.composer.text)
        else:
            await self.drafting.show_draft(conversation.id)
        if panels_after_paint:
            # A moment after the frame is composed, so the driver's writer thread puts it on
            # the terminal before the panels' work (the tokenizer's data loads then) holds on.
            after_frame(self, self.set_timer, PANELS_DELAY, self.refresh_panels)
        else:
            await self.refresh_panels()
        await self.tray.switch(self.conversation_id)
        if self.conversation_id is not None:  # the branch its family opens next time
            await self.app.service.branches.viewed(self.conversation_id)

    async def reload(self) -> None:
        """Read the conversation again (its title or settings changed) and refresh everything.

        The title changes at once; the panels are refreshed by :meth:`refresh_panels_later`,
        so a caller's message loop (the app's, after a reply) is not held by their work.
        """
        if self.conversation is not None:
            conversation = await self.app.service.conversations.resolve(self.conversation.id)
            self.conversation = conversation  # a new title shows at once
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

        self._panels_worker(after_frame)

    def _panels_worker(self, work: Callable[[], Coroutine[Any, Any, None]]) -> Worker[None]:
        """Run ``work`` in the panels' worker group (a newer call cancels an older one).

        The coroutine *function* is given, not a coroutine: a worker cancelled before it
        starts then leaves no coroutine never awaited behind."""
        return self.run_worker(work, group="panels", exclusive=True, exit_on_error=False)

    def refresh_panels_later(self) -> None:
        """Refresh the panels in a worker once the next frame is drawn (a newer call wins)."""

        async def after_frame() -> None:
            if await next_frame(self):
                await self.refresh_panels()

        self._panels_worker(after_frame)

    async def refresh_panels(self) -> None:
        """Reload the gauge, the cost, the timeline and the conversation list."""
        from tui_chat.engine.service import NotFound

        # Deleted by another process: OutsideWatch says so and opens another conversation.
        with contextlib.suppress(NotFound):
            await self.refresh_gauge()
            await self.refresh_timeline()
        await self.refresh_conversations()

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
        draft, files = self.composer.text, self.drafting.attached_files()
        if full and draft.strip():
            breakdown = (await service.requests.context(conv_id, draft, files)).breakdown
        else:
            breakdown = await service.requests.gauge(conv_id, draft, files)
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
        self.listing = Listing(tuple(infos), families, self.conversation_id, self.app.clock())


def count_once(screen: MainScreen, conversation_id: str) -> None:
    """Have the API count a stored conversation's request once, before its model's first
    reply (``count_tokens``): the gauge then shows a learnt calibration instead of the
    tokenizer's prior. The draft is never sent for counting."""
    if conversation_id in screen.counted or not screen.chat.views:
        return
    screen.counted.add(conversation_id)

    async def count() -> None:
        if await screen.app.service.requests.check_count(conversation_id) is not None:
            await screen.refresh_gauge(figures=False)  # the count changes the calibration alone

    screen.run_worker(count(), group="count", exit_on_error=False)
