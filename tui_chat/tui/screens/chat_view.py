"""What the user does to the chat screen's view: the side panels, the focus, scrolling the chat
from the composer, keys in the order typed, and the dialogs opened over the chat (search, the
context preview, the settings).

:class:`ChatView` is a part of the chat screen (``screen.view``): its ``action_*`` methods are
named in the table of actions as ``view.<name>``; the keys no widget took and the list's and
the search's requests to open a conversation reach it through :meth:`ChatView.routes`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import events
from textual.actions import SkipAction

from tui_chat.tui.messages import OpenConversation
from tui_chat.tui.stray_keys import is_stray, type_into
from tui_chat.tui.widgets.conversation_list import ConversationList

if TYPE_CHECKING:
    from tui_chat.core.models import SearchHit
    from tui_chat.tui.screens.chat_screen import ChatScreen

NO_KEY_HELP = (
    "No API key: reading, search, pins, export and offline compaction work; sending needs a "
    "key. Set it with  export ANTHROPIC_API_KEY=sk-ant-…  (or [api] api_key in config.toml) "
    "and restart."
)


PANELS_DELAY = 0.05
"""Seconds between the first frame and filling the panels at start-up."""

PANEL_WIDTHS = {"conversations": 34, "timeline": 46}
"""Preferred widths of the side panels (they give way in narrow terminals)."""


class ChatView:
    """The panels, the focus and the dialogs of the chat screen.

    Args:
        screen: The chat screen whose panels these are.
    """

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen

    def routes(self) -> Mapping[type[Any], Callable[[Any], object]]:
        """Keys no widget took, and the requests to show a conversation."""
        return {
            events.Key: self._key,
            ConversationList.ArchivedToggled: lambda _: self._screen.refresh_conversations(),
            OpenConversation: self._open,
        }

    # -- keys --------------------------------------------------------------------------------

    def _key(self, event: events.Key) -> bool:
        """``end`` in the composer, where it would not move the cursor (at the end of its line),
        follows the streaming reply again while the "new text below" marker shows. Escape
        closes the side panel that has the focus (before it would cancel a reply) or returns
        to the composer; printable keys type into it."""
        screen = self._screen
        composer, focused = screen.composer, screen.focused
        if (
            event.key == "end"
            and screen.chat.new_below
            and focused is composer
            and composer.cursor_at_end_of_line
        ):
            event.stop()
            event.prevent_default()
            screen.chat.follow()
            return True
        if event.key == "escape" and focused is not composer:
            panel = next(  # the shown side panel that has the focus, if any
                (
                    p.id
                    for p in (screen.conversations, screen.timeline)
                    if focused is not None and p in focused.ancestors_with_self and p.display
                ),
                None,
            )
            if panel is not None:
                screen.panels.close(panel)
            if panel is not None or not screen.app.replying:  # else escape cancels the reply
                composer.focus()
                event.stop()
            return True
        type_into(composer, event)
        return True

    def route_key(self, event: events.Key) -> None:
        """Before a key from the terminal is routed: a printable one that no binding takes
        while the messages, the timeline or the conversation list have the focus moves the
        focus to the composer at once, so it and every key after it are typed there in order
        (a focus change by ``focus()`` lands only after the keys already received)."""
        screen = self._screen
        focused = screen.focused
        panels = (screen.timeline, screen.conversations)
        if (
            focused is not None
            and focused is not screen.composer  # typing: the key is the composer's already
            and (focused is screen.chat or any(p in focused.ancestors for p in panels))
            and is_stray(screen.chat.screen, event)
        ):
            screen.set_focus(screen.composer)

    # -- panels and focus --------------------------------------------------------------------

    async def action_scroll_chat(self, where: str) -> None:
        """Scroll the chat from the composer: a page ``up`` or ``down``, or to its ``top``
        (the first page loaded if needed) or its ``end`` (followed again)."""
        chat = self._screen.chat
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
        screen = self._screen
        panels = screen.panels
        if panels.is_shown(panel_id):
            panels.close(panel_id)
            screen.composer.focus()
        elif panels.open(panel_id):
            panel = screen.conversations if panel_id == "conversations" else screen.timeline
            panel.focus_list()
        else:
            panels.close(panel_id)
            screen.notify(
                f"No room for that panel beside the chat ({screen.size.width} columns).",
                severity="warning",
            )

    def action_focus_composer(self) -> None:
        """Back to typing: leave navigation mode and focus the composer at once (the keys
        typed next are routed to it, not to the messages)."""
        screen = self._screen
        screen.chat.navigating = screen.conversations.navigating = False
        screen.set_focus(screen.composer)

    def action_focus_messages(self) -> None:
        """Navigation mode: letters are commands. In the conversation list when it has the
        focus; else the messages get the focus at once."""
        screen = self._screen
        if screen.conversations.has_focus_within:
            screen.conversations.navigating = True
            return
        screen.set_focus(screen.chat)
        screen.chat.select_default()
        screen.chat.navigating = True

    def action_previous_panel(self) -> None:
        """``shift+tab`` from the messages: the conversation list, opened when hidden (else
        the list was out of reach from the keys, its f5 commands easy to miss)."""
        if self._screen.panels.is_shown("conversations"):
            self._screen.focus_previous()
        else:
            self.action_toggle_conversations()

    def action_dismiss_warnings(self) -> None:
        """Hide the warnings under the gauge (until one of them changes)."""
        if not self._screen.gauge.dismiss():
            self._screen.notify("No warning to hide.")

    async def _open(self, event: OpenConversation) -> None:
        screen = self._screen
        await screen.open_conversation(
            event.conversation_id, event.message_id, draft_stays=event.in_place
        )
        if not event.in_place:  # another branch in place: the focus stays (f5, [ ] again)
            # A search hit stays selected (f5 goes to it) while typing goes on in the composer.
            screen.composer.focus()

    # -- dialogs over the chat ---------------------------------------------------------------

    def action_search(self) -> None:
        """Search every conversation and jump to the chosen message."""
        from tui_chat.tui.screens.search import SearchScreen, archived_ids

        service = self._screen.app.service
        # Pushed at once (not from a worker): keys typed right after ctrl+f reach the search.
        screen = SearchScreen(service.messages.search, partial(archived_ids, service))
        self._screen.app.push_screen(screen, self._search_closed)

    def _search_closed(self, hit: SearchHit | None) -> None:
        if hit is not None:
            self._screen.post_message(OpenConversation(hit.conversation_id, hit.message_id))

    async def action_context_preview(self) -> None:
        """Show the exact request the next send would make."""
        from tui_chat.tui.screens.context_preview import ContextPreviewScreen, sent_labels

        screen = self._screen
        if (conv_id := screen.conversation_id) is None:
            return
        service, text, files = screen.app.service, screen.composer.text, screen.tray.pending
        built = await service.requests.context(conv_id, text or None, files)
        recent = await service.messages.page(conv_id, limit=40)
        labels = await sent_labels(
            service.messages, conv_id, built, new_message=bool(text or files)
        )
        path = (await service.branches.path(conv_id)).describe()
        await screen.app.push_screen(ContextPreviewScreen(built, recent, labels, path))

    async def action_settings(self) -> None:
        """Open the conversation's settings."""
        from tui_chat.tui.screens.settings import SettingsScreen

        screen = self._screen
        if screen.conversation is None:
            return
        dialog = SettingsScreen(screen.conversation, screen.app.service)
        await screen.app.push_screen(dialog, self._settings_closed)

    async def _settings_closed(self, saved: list[str] | None) -> None:
        if saved:
            self._screen.notify(f"Saved: {', '.join(saved)}.")
            await self._screen.reload()
