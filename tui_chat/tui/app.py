"""The Textual application: opens the engine, shows the main screen, reports failed work.

:class:`ChatApp` adds the screens and start-up to :class:`~tui_chat.tui.host.ChatHost` (the
engine and the long-lived workers); one ``Worker.StateChanged`` handler turns every failure
of that work into a visible notification.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import PurePath
from typing import Any, ClassVar

from textual import events
from textual.app import SystemCommand
from textual.binding import BindingType
from textual.driver import Driver
from textual.screen import Screen
from textual.widget import AwaitMount, Widget
from textual.worker import Worker, WorkerState

from tui_chat.core.models import Conversation, Summary
from tui_chat.tui import termination
from tui_chat.tui.actions import bindings
from tui_chat.tui.after_frame import after_frame
from tui_chat.tui.failures import report_failure
from tui_chat.tui.host import ChatHost
from tui_chat.tui.messages import EngineBridge
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.reply_flow import ReplyEnded
from tui_chat.tui.screens.tool_approval import ToolApproval
from tui_chat.tui.screenshot import with_screenshot
from tui_chat.tui.widgets import reply_stream, stream_markdown

HOLD_FRAMES = 20
"""Refreshes a key waits at most for an opening prompt's field."""


def _text_field(screen: Screen[Any]) -> Widget | bool | None:
    """A prompt's input: ``False`` for a screen that is no prompt, ``None`` while the prompt
    is being composed (its class says ``TYPED_INTO``)."""
    if not getattr(screen, "TYPED_INTO", False):
        return False
    return next(iter(screen.query("Input")), None)


class ChatApp(ChatHost):
    """tui-chat: a keyboard-driven chat client for Claude with open context management.

    Takes the arguments of :class:`~tui_chat.tui.host.ChatHost`.
    """

    # The main screen is the default one, whose own CSS_PATH Textual does not load: its
    # layout file is read with the app's.
    CSS_PATH: ClassVar[list[str | PurePath]] = ["app.tcss", "screens/main.tcss"]
    TITLE = "tui-chat"

    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    _unsubscribe: Callable[[], None] | None = None
    freeze_after_start = False
    """Whether to freeze the heap once drawn (:meth:`_warm_up`; the process's own app only)."""
    _startup_error: str | None = None
    _initial_conversation_id: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_prompt = ToolApproval
        self._told_failed: set[str] = set()
        """MCP servers whose failure was said."""
        self._held: list[events.Key] = []
        """Keys typed while a prompt opens, routed to its field once it is there."""

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (always at the bottom of the stack)."""
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
                conversation = await self._service.conversations.resolve(self.conversation_ref)
            else:
                conversation = await self._last_or_new()
        except NotFound as exc:
            self._startup_error = f"tui-chat: {exc}"
        except Exception as exc:  # a newer or unreadable database: say why and leave
            self._startup_error = f"tui-chat: cannot open the database: {exc}"
        else:
            self._initial_conversation_id = conversation.id
            return
        self.exit(return_code=1, message=self._startup_error)

    async def _last_or_new(self) -> Conversation:
        """The most recently active conversation (the branch of it last viewed), or a new one."""
        from tui_chat.engine.service import NotFound

        try:
            last = await self.service.conversations.resolve("last")
        except NotFound:
            return await self.service.conversations.new()
        shown = (await self.service.branches.family(last.id)).shown
        return last if shown == last.id else await self.service.conversations.resolve(shown)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver; on Linux and macOS one whose writes never wait on a terminal that
        has gone away (:mod:`~tui_chat.tui.sturdy_driver`)."""
        driver = super().get_driver_class()
        if driver.__name__ == "LinuxDriver":
            from tui_chat.tui.sturdy_driver import SturdyLinuxDriver

            return SturdyLinuxDriver
        return driver

    def get_default_screen(self) -> Screen[None]:
        """The main screen (a blank one when start-up failed and the app is leaving)."""
        if self._startup_error is not None:
            return Screen()
        return MainScreen()

    async def on_mount(self) -> None:
        """Connect engine events to the main screen and show the conversation."""
        if self._initial_conversation_id is None:
            return
        termination.install(self)  # SIGTERM/SIGHUP keep the streaming reply's text
        main = self.main_screen
        # The screen composes in its own task: with the engine's reads quick, this handler
        # could run before the chat pane was there (NoMatches '#chat' at start-up).
        await AwaitMount(main, [main])
        self.bridge = EngineBridge(main)
        self._unsubscribe = self.service.subscribe(self.bridge)
        # The chat pane is drawn first; the panels not needed for it (gauge, timeline, the
        # list) are filled in after the first frame is on screen.
        await main.open_conversation(self._initial_conversation_id, panels_after_paint=True)
        # `tui-chat` starts with the cyclic garbage collector off (cli.main): on once drawn.
        after_frame(self, gc.enable)

    def on_ready(self) -> None:
        """The first frame is on the terminal (Textual's ``Ready``, sent once after the first
        screen's first layout was displayed): warm up after the next, and start the MCP
        servers. Started from :meth:`on_mount` with :func:`after_frame`, the warm-up imported
        the SDK before the first frame now and then (its one-second timer fired first on a
        loaded machine, or the frame it waited for was not drawn): one start in three on a
        loaded machine."""
        if self._initial_conversation_id is not None:
            after_frame(self, partial(self.run_worker, self._warm_up, thread=True))
        after_frame(self, self._start_tools)

    def _start_tools(self) -> None:
        """Once drawn: start the MCP servers in the background (the gauge counts their tools
        as each one is ready); a failed one is said with its reason, the chat goes on."""
        tools = self.service.tools
        if tools.problem:
            self.notify(tools.problem, title="mcp.json", severity="error", markup=False)
        if not tools.configured:
            return

        def changed() -> None:
            self.main_screen.refresh_panels_later()
            for report in tools.reports():
                if report.state == "failed" and report.name not in self._told_failed:
                    self._told_failed.add(report.name)
                    first = (report.error or "failed").splitlines()[0]
                    title = f"MCP server {report.name}"
                    self.notify(first, title=title, severity="error", markup=False, timeout=10)

        tools.on_change(changed)
        tools.start()

    def _warm_up(self) -> None:
        """Once drawn, in a thread: import the SDK (about a second of CPU that the first send
        would spend on the event loop while its reply starts), then, in the ``tui-chat``
        process, move what start-up made into the collector's permanent generation, so the
        full collection after each reply (:mod:`~tui_chat.tui.gc_pause`) does not walk the
        SDK's and Textual's objects again (100 ms of CPU, a second on a loaded machine)."""
        stream_markdown.rehearse()  # the first reply's Markdown and code, parsed here
        if self.service.has_key:
            self.service.preload()
        if self.freeze_after_start:
            gc.collect()
            gc.freeze()

    async def on_event(self, event: events.Event) -> None:
        """A key from the terminal goes where the screen says, before it is routed
        (letters typed while the messages have the focus are text, in the order typed)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            reply_stream.note_key()  # a streaming reply appends in the pauses of typing
            if isinstance(screen := self.screen, MainScreen):
                screen.view.route_key(event)
            elif self._held or (screen.focused is None and _text_field(screen) is not False):
                # A prompt still opening: its keys wait, in order, for its field.
                self._held.append(event)
                await self._release_held()
                return
        await super().on_event(event)

    async def _release_held(self, tries: int = 0) -> None:
        """Route the keys held for an opening prompt once its field is there (focused)."""
        screen = self.screen
        field = _text_field(screen)
        if not field and tries < HOLD_FRAMES and not isinstance(screen, MainScreen):
            if tries or len(self._held) == 1:  # one wait per frame
                after_frame(self, self._release_held, tries + 1)
            return
        if isinstance(field, Widget):
            screen.set_focus(field)
        held, self._held = self._held, []
        for key in held:
            await super().on_event(key)

    async def on_unmount(self) -> None:
        """Keep the drafts, stop listening and close the engine if this app opened it."""
        if self.screen_stack and isinstance(main := self.screen_stack[0], MainScreen):
            main.replies.keep()
        await self.save_drafts()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._owns_service and self._service is not None:
            await self._service.close()

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker failures become visible; refresh after replies and compaction."""
        worker = event.worker
        report_failure(self, worker)
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group == "reply":  # the send is over (the reply ended by its own event)
            self.main_screen.post_message(ReplyEnded(worker))
        elif worker.name == "regenerate" and isinstance(worker.result, Summary):
            await self.main_screen.summary_commands.regenerated(worker.result)
        elif worker.group == "compaction" and event.state != WorkerState.SUCCESS:
            await self.main_screen.refresh_summaries()  # a version done says so, with them

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's palette commands; Screenshot saves into the export folder."""
        return with_screenshot(self, super().get_system_commands(screen), self.export_dir)

    async def action_help(self) -> None:
        """Show every key binding."""
        from tui_chat.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            await self.push_screen(HelpScreen())

    async def action_switch_version(self, step: int) -> None:
        """Show the previous (-1) or next (1) version of the message where the conversation's
        branches part (the one at or above the selected message), in place."""
        from tui_chat.tui.widgets.sibling_switch import SiblingSwitch

        for switch in self.screen.query(SiblingSwitch):
            await switch.step(step)

    async def action_usage(self) -> None:
        """Show what the API cost per day or month and model."""
        from tui_chat.tui.screens.usage import UsageScreen

        if not isinstance(self.screen, UsageScreen):
            await self.push_screen(UsageScreen(self.service.costs))

    async def action_tools(self) -> None:
        """The MCP servers in this conversation (on/off) and the standing approvals."""
        from tui_chat.tui.screens.tools import ToolsScreen

        main = self.main_screen
        if isinstance(self.screen, ToolsScreen) or main.conversation_id is None:
            return

        def closed(changed: bool | None) -> None:
            if changed:
                main.refresh_panels_later()

        await self.push_screen(ToolsScreen(self.service.tools, main.conversation_id), closed)

    async def action_jump_cited(self) -> None:
        """Go to the message the selected reply cites from recall (the palette's entry)."""
        await self.main_screen.chat.reply_keys.action_jump_cited()
