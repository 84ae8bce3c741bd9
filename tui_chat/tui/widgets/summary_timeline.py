"""The summary timeline: every summary version, newest first, with its figures and totals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import ListItem, ListView, Static

from tui_chat.core.models import Summary
from tui_chat.tui.text import age, inert_content, one_line, tokens
from tui_chat.tui.widgets.spinner import Spinner


def retention_label(summary: Summary) -> str:
    """``kept/total (pct)`` of identifiers kept by a summary, or ``n/a``."""
    if summary.identifiers_total <= 0:
        return "n/a"
    share = summary.identifiers_kept / summary.identifiers_total
    return f"{summary.identifiers_kept}/{summary.identifiers_total} ({share:.0%})"


def describe(summary: Summary, *, active: bool, now: datetime) -> Content:
    """The lines of one version's card (status, coverage, tokens, summarizer, retention, age)."""
    when = age(summary.completed_at or summary.created_at, now)
    head: list[Content | tuple[str, str] | str] = [(f"v{summary.version}", "bold")]
    if summary.status == "failed":
        head.append(("  ✗ failed", "bold $text-error"))
    elif summary.status == "in_progress":
        head.append(("  compacting…", "bold $text-accent"))
    elif active:
        head.append(("  ● active", "bold $text-success"))
    if summary.stale and summary.status == "completed":
        head.append(("  ⚠ stale", "bold $text-warning"))
    head.append((f"  {summary.trigger} · {when}", "$text-muted"))
    lines = [Content.assemble(*head)]
    coverage = f"msgs ≤ #{summary.covers_to_message_id} ({summary.covered_messages})"
    if summary.status == "completed":
        lines.append(
            Content.assemble(
                coverage + " · ",
                f"{tokens(summary.source_tokens)} → {tokens(summary.summary_tokens)} ",
                (summary.change, "$text-success"),
            )
        )
        lines.append(
            Content.assemble(
                inert_content(summary.summarizer, "$text-muted"),
                " · ids ",
                retention_label(summary),
            )
        )
    elif summary.status == "in_progress":
        lines.append(Content(coverage))
    else:
        lines.append(inert_content(one_line(summary.error or "unknown error", 120), "$text-error"))
    if summary.stale and summary.status == "completed":
        # Messages it covers were deleted: it still holds them until it is regenerated.
        lines.append(inert_content(one_line(summary.stale, 120), "$text-warning"))
    if summary.instructions:
        lines.append(inert_content("↻ " + one_line(summary.instructions, 60), "$text-muted italic"))
    return Content("\n").join(lines)


def totals(summaries: list[Summary], active_id: int | None, rate: float | None) -> Content:
    """The stats panel of seed 001: counts, coverage, source → summary, overall reduction."""
    completed = [s for s in summaries if s.status == "completed"]
    failed = sum(1 for s in summaries if s.status == "failed")
    active = next((s for s in summaries if s.id == active_id), None)
    lines: list[Content] = []
    head = f"{len(completed)} version{'s' if len(completed) != 1 else ''}"
    if failed:
        head += f" · {failed} failed"
    head += f" · active v{active.version}" if active else " · none active"
    lines.append(Content.styled(head, "bold"))
    if rate is not None:
        lines.append(Content(f"compression rate {rate:.2f}"))
    if active is not None:
        lines.append(
            Content.assemble(
                f"in force: {active.covered_messages} msgs · ",
                f"{tokens(active.source_tokens)} → {tokens(active.summary_tokens)} ",
                (active.change, "$text-success"),
            )
        )
        lines.append(Content(f"identifiers kept: {retention_label(active)}"))
    memory = active or max(completed, key=lambda s: (s.covers_to_message_id, s.id), default=None)
    if memory is not None and (source := history_tokens(memory, summaries)) > 0:
        kept = memory.summary_tokens
        lines.append(
            Content(f"history folded: {tokens(source)} → {tokens(kept)} (−{1 - kept / source:.0%})")
        )
    return Content("\n").join(lines)


def history_tokens(summary: Summary, summaries: list[Summary]) -> int:
    """The tokens of the messages a version stands for, from the conversation's start: each
    version's own new messages (its source less its parent's summary) along its chain, so a
    span is counted once however many versions (regenerated, rolled back) summarised it."""
    by_id = {s.id: s for s in summaries}
    total, seen = 0, set()
    node: Summary | None = summary
    while node is not None and node.id not in seen:
        seen.add(node.id)
        parent = by_id.get(node.parent_id) if node.parent_id is not None else None
        total += max(0, node.source_tokens - (parent.summary_tokens if parent else 0))
        node = parent
    return total


class SummaryCard(ListItem):
    """One version in the timeline."""

    DEFAULT_CSS = """
    SummaryCard {
        height: auto;
        padding: 0 1;
        margin-bottom: 1;
        & Horizontal { height: auto; }
        & Static { width: 1fr; }
        &.-active { border-left: outer $success; }
        &.-failed { border-left: outer $error; }
    }
    """

    def __init__(self, summary: Summary, *, active: bool, now: datetime) -> None:
        classes = "-active" if active else ("-failed" if summary.status == "failed" else "")
        super().__init__(classes=classes)
        self.summary = summary
        self.active = active
        self._now = now

    def compose(self) -> ComposeResult:
        """A spinner (while in progress) and the description."""
        with Horizontal():
            if self.summary.status == "in_progress":
                yield Spinner()
            yield Static(describe(self.summary, active=self.active, now=self._now))


@dataclass(frozen=True)
class Versions:
    """A conversation's summary versions as the timeline shows them."""

    summaries: tuple[Summary, ...] = ()
    """The versions, newest first."""
    active_id: int | None = None
    """The version in force, if any."""
    rate: float | None = None
    """The compression rate of a segments preset (the totals compare against it)."""


class SummaryTimeline(Vertical):
    """Right-hand panel: totals, then one card per version, newest first.

    The versions come through :attr:`versions` (the chat screen binds it to its own);
    ``enter`` on a card posts :class:`SummaryTimeline.Inspect`.
    """

    DEFAULT_CSS = """
    SummaryTimeline {
        width: 46;
        border-left: vkey $border-blurred;
        background: $surface;
        &:focus-within { border-left: vkey $border; }
        & > #timeline-title { text-style: bold; color: $text-accent; padding: 0 1; }
        & > #timeline-totals {
            padding: 0 1 1 1;
            border-bottom: solid $border-blurred;
        }
        & > ListView { height: 1fr; background: $surface; }
        & > #timeline-empty { padding: 1; color: $text-muted; }
    }
    """

    @dataclass
    class Inspect(Message):
        """The user chose a version to inspect."""

        timeline: SummaryTimeline
        summary: Summary

        @property
        def control(self) -> SummaryTimeline:
            """The timeline."""
            return self.timeline

    versions: reactive[Versions] = reactive(Versions, init=False)
    """The versions shown (the cards are rebuilt when it changes)."""

    def __init__(self, *, clock: Callable[[], datetime], id: str | None = None) -> None:
        super().__init__(id=id)
        self._clock = clock
        # Events and finished workers both refresh the list; one rebuild at a time.
        self._rebuild = asyncio.Lock()

    @property
    def summaries(self) -> list[Summary]:
        """The versions, newest first."""
        return list(self.versions.summaries)

    @property
    def active_id(self) -> int | None:
        """The version in force, if any."""
        return self.versions.active_id

    def compose(self) -> ComposeResult:
        """Title, totals, the list of versions."""
        yield Static("Summary timeline", id="timeline-title")
        yield Static("", id="timeline-totals")
        yield Static("No summaries yet. ctrl+g compacts now.", id="timeline-empty")
        yield ListView(id="timeline-list")

    @property
    def list_view(self) -> ListView:
        """The list of cards."""
        return self.query_one("#timeline-list", ListView)

    @property
    def highlighted(self) -> Summary | None:
        """The version under the cursor, if any."""
        item = self.list_view.highlighted_child
        return item.summary if isinstance(item, SummaryCard) else None

    async def watch_versions(self, versions: Versions) -> None:
        """Show the versions; the cursor stays on the same version."""
        async with self._rebuild:
            if versions is not self.versions:
                return  # a newer set came meanwhile: its own rebuild follows
            keep = self.highlighted
            summaries = list(versions.summaries)
            active_id = versions.active_id
            totals_text = totals(summaries, active_id, versions.rate)
            self.query_one("#timeline-totals", Static).update(totals_text)
            self.query_one("#timeline-empty").display = not summaries
            listing = self.list_view
            now = self._clock()
            await listing.clear()
            await listing.extend(
                SummaryCard(s, active=s.id == active_id, now=now) for s in summaries
            )
            if summaries:
                ids = [s.id for s in summaries]
                listing.index = ids.index(keep.id) if keep is not None and keep.id in ids else 0

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        """Enter on a card: inspect it."""
        event.stop()
        if isinstance(event.item, SummaryCard):
            self.post_message(self.Inspect(self, event.item.summary))

    def focus_list(self) -> None:
        """Give the list keyboard focus."""
        self.list_view.focus()
