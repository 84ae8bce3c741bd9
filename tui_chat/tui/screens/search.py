"""Full-text search across every conversation; choosing a hit jumps to the message."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from tui_chat.core.models import HIT_END, HIT_START, SearchHit
from tui_chat.tui.actions import bindings
from tui_chat.tui.failures import report_failure
from tui_chat.tui.stray_keys import OrderedInput, type_into
from tui_chat.tui.text import clock_time, inert_content, one_line

if TYPE_CHECKING:
    from tui_chat.engine.service import ChatService

SEARCH_DEBOUNCE = 0.2

Search = Callable[[str], Awaitable[list[SearchHit]]]
"""Runs a full-text query (the engine's ``search``)."""

_MATCH = re.compile(f"{HIT_START}([^{HIT_START}{HIT_END}]*){HIT_END}")


async def archived_ids(service: ChatService) -> set[str]:
    """Ids of the archived conversations (their hits are marked)."""
    infos = await service.conversations.list(include_archived=True)
    return {i.conversation.id for i in infos if i.conversation.archived_at is not None}


def highlight(snippet: str) -> Content:
    """A search snippet with the matched words (between FTS5's hit markers) highlighted."""
    parts: list[Content] = []
    last = 0
    for match in _MATCH.finditer(snippet):
        parts.append(inert_content(snippet[last : match.start()]))
        parts.append(inert_content(match.group(1), "bold reverse $text-accent"))
        last = match.end()
    parts.append(inert_content(snippet[last:]))
    return Content.assemble(*parts)


class SearchScreen(ModalScreen[SearchHit | None]):
    """Type to search (FTS5, every word, the last as a prefix); ``enter`` opens the hit.

    Dismisses with the chosen hit, or ``None``.

    Args:
        search: Runs a query and returns its hits.
    """

    CSS_PATH = "search.tcss"

    TYPED_INTO: ClassVar[bool] = True
    """Keys typed while it opens wait for its input (``ChatApp.on_event``)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("search")

    def __init__(
        self, search: Search, archived: Callable[[], Awaitable[set[str]]] | None = None
    ) -> None:
        super().__init__()
        self._find = search
        self._archived_ids = archived
        self._archived: set[str] = set()
        """Ids of archived conversations: their hits say so."""
        self.hits: list[SearchHit] = []
        self._timer: Timer | None = None

    def on_key(self, event: events.Key) -> None:
        """Typing in the results (or before the input has the focus) goes to the query."""
        type_into(self.query_one("#search-input", Input), event)

    def compose(self) -> ComposeResult:
        """Input, status line and results."""
        with Vertical(id="search"):
            yield Static("Search all conversations", id="search-title")
            yield OrderedInput(placeholder="words to find…", id="search-input")
            yield Static("", id="search-status")
            yield OptionList(id="search-results")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: hand failures to the app's one handler."""
        report_failure(self, event.worker)

    @on(Input.Changed, "#search-input")
    def _changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SEARCH_DEBOUNCE, self._search)

    def _search(self) -> None:
        self._timer = None
        self.run_search(self.query_one("#search-input", Input).value)

    @on(Input.Submitted, "#search-input")
    async def _submitted(self, event: Input.Submitted) -> None:
        # Enter searches now; a pending or running search would reset the results under the
        # cursor (and the next enter would choose nothing).
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.workers.cancel_group(self, "search")
        await self._do_search(event.value)
        if self.hits:
            self.action_focus_results()

    @work(group="search", exclusive=True, exit_on_error=False)
    async def run_search(self, query: str) -> None:
        """Search in the background (a newer query cancels an older one)."""
        await self._do_search(query)

    async def _do_search(self, query: str) -> None:
        status = self.query_one("#search-status", Static)
        results = self.query_one("#search-results", OptionList)
        self.hits = await self._find(query) if query.strip() else []
        if self.hits and self._archived_ids is not None:
            self._archived = await self._archived_ids()
        results.clear_options()
        results.add_options(
            [Option(self._prompt(hit, hit.conversation_id in self._archived)) for hit in self.hits]
        )
        if query.strip():
            status.update(f"{len(self.hits)} result{'s' if len(self.hits) != 1 else ''}")
        else:
            status.update("")

    @staticmethod
    def _prompt(hit: SearchHit, archived: bool = False) -> Content:
        who = "You" if hit.role == "user" else "Claude"
        return Content("\n").join(
            [
                Content.assemble(
                    inert_content(one_line(hit.conversation_title, 50), "bold"),
                    ("  [archived]" if archived else "", "$text-warning"),
                    (f"  #{hit.message_id} · {who} · {clock_time(hit.created_at)}", "$text-muted"),
                ),
                Content("  ") + highlight(one_line(hit.snippet, 200)),
            ]
        )

    def action_focus_results(self) -> None:
        """Move to the results."""
        results = self.query_one("#search-results", OptionList)
        if self.hits:
            results.focus()
            if results.highlighted is None:
                results.highlighted = 0

    @on(OptionList.OptionSelected, "#search-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.hits[event.option_index])

    def action_close(self) -> None:
        """Close without jumping."""
        self.dismiss(None)
