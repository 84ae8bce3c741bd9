"""The conversation list (left, toggled): open, new, rename, delete, archive and unarchive.

The list asks the screen to act by posting typed messages (:class:`ConversationList.Rename`,
…); letters are commands only in its navigation mode (``f5`` while it has the focus),
otherwise they are typed into the composer.
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
from textual.reactive import reactive
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui_chat.core.family import FamilyRow, family_rows
from tui_chat.core.models import ConversationInfo
from tui_chat.engine.usage import usd
from tui_chat.tui.actions import bindings
from tui_chat.tui.messages import OpenConversation
from tui_chat.tui.text import age, inert_content, one_line, tokens
from tui_chat.tui.widgets.navigation import NavigationMode


@dataclass(frozen=True)
class Listing:
    """What the list shows: the conversations, the families of branches (branch id ->
    family id, family id -> the branch it shows), the one on screen and the time the ages
    are told from (the chat screen's reactive, bound to the list)."""

    conversations: tuple[ConversationInfo, ...] = ()
    families: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {})
    current_id: str | None = None
    now: datetime | None = None


class ConversationList(Vertical, NavigationMode):
    """Conversations newest first; ``enter`` opens the highlighted one.

    Bound to the chat screen's :class:`Listing` (``data_bind``): a new listing sets what the
    list knows at once and lays out its rows when the list is shown (a hidden list, the
    default, builds no rows after each reply; it builds them as it opens)."""

    listing: reactive[Listing] = reactive(Listing, init=False)
    """The conversations to show (set by the screen)."""

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

    # Priority: each key acts when it arrives, before the next one is routed.
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
        self._titles: dict[str, str] = {}
        """Entry (the branch it opens) -> the branch whose title it shows."""
        self.show_archived = False
        """Whether archived conversations are listed (marked) too."""
        self._rows: list[FamilyRow] | None = None
        """Rows not laid out yet (the list was hidden when they came)."""
        self._now: datetime | None = None

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

    def _prompt(self, row: FamilyRow, now: datetime) -> Content:
        info = row.info
        conv = info.conversation
        marker = "▶ " if conv.id == self.current_id else "  "
        cost = f" {usd(info.cost_usd)}" if info.cost_usd else ""  # nothing sent: no figure
        branches = f" ⑂{row.branches}" if row.branches > 1 else ""  # its branches
        width = 28 - len(cost) - len(branches)
        title = one_line(row.title, width)
        title = title.ljust(width) if cost else title  # the cost at the right
        return Content("\n").join(
            [
                Content.assemble(
                    (marker, "bold $text-accent"),
                    inert_content(title, "bold"),
                    (branches, "$text-accent"),
                    (cost, "$text-muted"),
                ),
                Content.assemble(
                    (
                        f"  {info.message_count} msgs · {tokens(info.token_count)} tok · "
                        f"{age(row.updated_at, now)}",
                        "$text-muted",
                    ),
                    (" · archived" if conv.archived_at else "", "$text-warning"),
                ),
            ]
        )

    def watch_listing(self, listing: Listing) -> None:
        """Show the listing the screen bound (see :meth:`set_conversations`)."""
        now = listing.now if listing.now is not None else datetime.now().astimezone()
        self.set_conversations(
            list(listing.conversations), listing.current_id, now, listing.families
        )

    def set_conversations(
        self,
        conversations: list[ConversationInfo],
        current_id: str | None,
        now: datetime,
        families: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
    ) -> None:
        """Show these conversations, one entry per family of branches (``families``: branch
        id -> family id, family id -> the branch it shows), highlighting the current one.
        What the list knows changes at once; its rows are built now if it is shown, else
        when it opens."""
        rows = family_rows(conversations, families, current_id)
        # While the user moves in the list, a refresh (another process wrote, a reply ended)
        # keeps their row: the next key acts on what they highlighted, not on the open one.
        # Another conversation opened (new, deleted, a search jump): the cursor goes to it.
        moving = self.options.has_focus and current_id == self.current_id
        chosen = self.highlighted_id if moving else None
        self.conversations = [row.info for row in rows]
        self._titles = {row.info.conversation.id: row.title_id for row in rows}
        self.current_id = current_id
        self._rows, self._now = rows, now
        if self.display:
            self._lay_out(chosen)

    def on_show(self) -> None:
        """Opened: build the rows that came while the list was hidden."""
        self._lay_out(None)

    def _lay_out(self, chosen: str | None) -> None:
        rows, now = self._rows, self._now
        if rows is None or now is None:
            return
        self._rows = None
        options = self.options
        options.clear_options()
        options.add_options(
            [Option(self._prompt(row, now), id=row.info.conversation.id) for row in rows]
        )
        ids = [row.info.conversation.id for row in rows]
        for wanted in (chosen, self.current_id):
            if wanted in ids:
                options.highlighted = ids.index(wanted)
                break

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
        """Rename the highlighted conversation (the branch whose title the entry shows)."""
        if (conv_id := self.highlighted_id) is not None:
            self.post_message(self.Rename(self._titles.get(conv_id, conv_id)))

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
