"""The conversation list (left, toggled): open, new, rename, delete, archive and unarchive.

The list asks the screen to act by posting typed messages (:class:`ConversationList.Rename`,
…); letters are commands only in its navigation mode (``f5`` while it has the focus),
otherwise they are typed into the composer (issue 22).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_chat.core.models import ConversationInfo
from tui_chat.engine.usage_text import usd
from tui_chat.tui.actions import bindings
from tui_chat.tui.messages import OpenConversation
from tui_chat.tui.text import age, inert_content, one_line, tokens
from tui_chat.tui.widgets.navigation import NavigationMode


def fork_tree(
    conversations: list[ConversationInfo], parents: Mapping[str, str]
) -> list[tuple[ConversationInfo, int]]:
    """The conversations in list order with each fork right under its parent.

    Args:
        conversations: Newest first.
        parents: Fork id -> parent id (a parent missing from the list makes its fork a root).

    Returns:
        ``(conversation, depth)`` pairs; depth 0 for roots.
    """
    shown = {info.conversation.id for info in conversations}
    children: dict[str, list[ConversationInfo]] = {}
    roots: list[ConversationInfo] = []
    for info in conversations:
        parent = parents.get(info.conversation.id)
        if parent in shown and parent != info.conversation.id:
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    out: list[tuple[ConversationInfo, int]] = []
    seen: set[str] = set()

    def visit(info: ConversationInfo, depth: int) -> None:
        if info.conversation.id in seen:
            return
        seen.add(info.conversation.id)
        out.append((info, depth))
        for child in children.get(info.conversation.id, []):
            visit(child, depth + 1)

    for info in roots:
        visit(info, 0)
    for info in conversations:  # a cycle of forks (never made by tui-chat) still shows
        visit(info, 0)
    return out


class ConversationList(Vertical, NavigationMode):
    """Conversations newest first; ``enter`` opens the highlighted one."""

    DEFAULT_CSS = """
    ConversationList {
        width: 34;
        border-right: vkey $border-blurred;
        background: $surface;
        &:focus-within { border-right: vkey $border; }
        &.-navigating { border-top: heavy $accent; border-title-color: $text-accent; }
        & > #conversations-title { text-style: bold; color: $text-accent; padding: 0 1; }
        & > OptionList {
            height: 1fr; border: none; background: $surface;
            text-wrap: nowrap; text-overflow: ellipsis;  /* a row is two lines, always */
        }
    }
    """

    # Priority: each key acts when it arrives, before the next one is routed (issue 22).
    BINDINGS: ClassVar[list[BindingType]] = bindings("conversations", priority=True)

    NAVIGATION_TITLE: ClassVar[str] = "NAVIGATION · i/esc: typing"

    @dataclass
    class ArchivedToggled(Message):
        """Archived conversations were shown or hidden: list the conversations again."""

    @dataclass
    class Acted(Message):
        """The user asked to act on a listed conversation (the screen does it)."""

        conversation_id: str

    class Rename(Acted):
        """Rename this conversation."""

    class Delete(Acted):
        """Delete this conversation (after confirmation)."""

    class Archive(Acted):
        """Archive this conversation, or unarchive it if it is archived."""

    @dataclass
    class New(Message):
        """Start a new conversation."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conversations: list[ConversationInfo] = []
        self.current_id: str | None = None
        self.show_archived = False
        """Whether archived conversations are listed (marked) too."""

    def compose(self) -> ComposeResult:
        """A title and the list."""
        yield Static("Conversations", id="conversations-title")
        yield OptionList(id="conversation-options")

    @property
    def options(self) -> OptionList:
        """The option list."""
        return self.query_one(OptionList)

    @property
    def highlighted_id(self) -> str | None:
        """Id of the conversation under the cursor."""
        options = self.options
        if options.highlighted is None:
            return None
        return options.get_option_at_index(options.highlighted).id

    def _prompt(self, info: ConversationInfo, now: datetime, depth: int = 0) -> Content:
        conv = info.conversation
        marker = "▶ " if conv.id == self.current_id else "  "
        indent = "  " * (depth - 1) + "↳ " if depth else ""
        width = max(8, 28 - len(indent))
        cost = f"{usd(info.cost_usd)} · " if info.cost_usd else ""  # nothing sent: no figure
        return Content("\n").join(
            [
                Content.assemble(
                    (marker, "bold $text-accent"),
                    (indent, "$text-muted"),
                    inert_content(one_line(conv.title, width), "bold"),
                ),
                Content.assemble(
                    (
                        f"  {'  ' * depth}{info.message_count} msgs · "
                        f"{tokens(info.token_count)} tok · {cost}{age(conv.updated_at, now)}",
                        "$text-muted",
                    ),
                    (" · archived" if conv.archived_at else "", "$text-warning"),
                ),
            ]
        )

    def set_conversations(
        self,
        conversations: list[ConversationInfo],
        current_id: str | None,
        now: datetime,
        parents: Mapping[str, str] | None = None,
    ) -> None:
        """Show these conversations, highlighting the current one; forks (``parents``: fork
        id -> parent id) under their parent."""
        rows = fork_tree(conversations, parents or {})
        self.conversations = [info for info, _ in rows]
        self.current_id = current_id
        options = self.options
        options.clear_options()
        options.add_options(
            [
                Option(self._prompt(info, now, depth), id=info.conversation.id)
                for info, depth in rows
            ]
        )
        ids = [info.conversation.id for info, _ in rows]
        if current_id in ids:
            options.highlighted = ids.index(current_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Open the chosen conversation."""
        event.stop()
        if event.option.id is not None:
            self.post_message(OpenConversation(event.option.id))

    def focus_list(self) -> None:
        """Give the list keyboard focus."""
        self.options.focus()

    def on_descendant_blur(self) -> None:
        """Leaving the list leaves navigation mode."""
        if not self.has_focus_within:
            self.navigating = False

    def _ask(self, message: type[ConversationList.Acted]) -> None:
        if (conv_id := self.highlighted_id) is not None:
            self.post_message(message(conv_id))

    def action_new(self) -> None:
        """Start a new conversation."""
        self.post_message(self.New())

    def action_rename(self) -> None:
        """Rename the highlighted conversation."""
        self._ask(self.Rename)

    def action_delete(self) -> None:
        """Delete the highlighted conversation (after confirmation)."""
        self._ask(self.Delete)

    def action_archive(self) -> None:
        """Archive the highlighted conversation, or unarchive it if it is archived."""
        self._ask(self.Archive)

    def action_toggle_archived(self) -> None:
        """Show or hide archived conversations in the list."""
        self.show_archived = not self.show_archived
        title = "Conversations (and archived)" if self.show_archived else "Conversations"
        self.query_one("#conversations-title", Static).update(title)
        self.post_message(self.ArchivedToggled())
