"""The summary inspector: one version's full text, segments, figures and diff against its parent."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TabbedContent, TabPane
from textual.worker import Worker

from tui_chat.core.ledger import Retention
from tui_chat.core.models import Summary
from tui_chat.tui.actions import bindings
from tui_chat.tui.failures import report_failure
from tui_chat.tui.screens.prompt import TextPrompt
from tui_chat.tui.text import clock_time, inert_content, tokens
from tui_chat.tui.widgets.summary_timeline import retention_label


@dataclass(frozen=True, slots=True)
class Activate:
    """The inspector's result: put this summary version in force."""

    version: int


@dataclass(frozen=True, slots=True)
class Regenerate:
    """The inspector's result: summarise this version's turns again with these instructions."""

    summary: Summary
    instructions: str


def identifiers(kept: Retention | None) -> Content:
    """Identifier retention per kind (summary + ledger as sent), then those not kept.

    Args:
        kept: From ``ChatService.summaries.retention`` (``None``: not measured).

    Returns:
        One line per kind, then the identifiers lost, by kind.
    """
    if kept is None:
        return Content("(not measured)")
    data = kept.to_json()
    if not data["total"]:
        return Content("No identifiers in the covered messages.")
    lines = [f"{data['kept']} of {data['total']} identifiers kept (summary + ledger as sent)"]
    for kind, cell in data["by_kind"].items():
        share = 100 * cell["kept"] / cell["total"]
        lines.append(f"  {kind:<8} {cell['kept']:>5} / {cell['total']:<5} {share:5.1f} %")
    if data["not_kept"]:
        lines.append("")
        lines.append("Not kept:")
        lines.extend(f"  {item['kind']:<8} {item['value']}" for item in data["not_kept"])
    return inert_content("\n".join(lines))


def regenerate_prompt(summary: Summary) -> TextPrompt:
    """The prompt that asks for a regeneration's optional instructions."""
    return TextPrompt(
        f"Regenerate summary v{summary.version} — instructions (optional)",
        placeholder="e.g. keep every SQL statement and file path",
    )


def figures(summary: Summary, *, active: bool) -> Content:
    """Status, coverage, tokens before → after, retention, summarizer, trigger and times."""
    state = "active" if active else summary.status
    rows = [
        (
            "Version",
            f"v{summary.version} ({state}) · {summary.strategy} · trigger {summary.trigger}",
        ),
        (
            "Coverage",
            f"messages up to #{summary.covers_to_message_id} ({summary.covered_messages} messages)",
        ),
        (
            "Tokens",
            f"{tokens(summary.source_tokens)} → {tokens(summary.summary_tokens)} "
            f"({summary.change})",
        ),
        ("Identifiers kept", retention_label(summary)),
        ("Summarizer", summary.summarizer),
        ("Summary call", call_cost_label(summary)),
        ("Created", clock_time(summary.created_at)),
    ]
    if summary.instructions:
        rows.append(("Instructions", summary.instructions))
    if summary.error:
        rows.append(("Error", summary.error))
    lines = [
        Content.assemble((f"{label:<17}", "bold $text-accent"), inert_content(value))
        for label, value in rows
    ]
    return Content("\n").join(lines)


def call_cost_label(summary: Summary) -> str:
    """What the call that wrote the version cost (tokens by kind and dollars)."""
    call = summary.call
    if call is None:
        return "no model call (offline)" if summary.summarizer == "extractive" else "not recorded"
    kind = "compaction block" if summary.compaction_block else call.model
    return (
        f"${call.cost_usd:.4f} · {kind} · input {tokens(call.input_tokens)}, cache read "
        f"{tokens(call.cache_read_tokens)}, cache write {tokens(call.cache_write_tokens)}, "
        f"output {tokens(call.output_tokens)}"
    )


def diff(parent: Summary | None, summary: Summary) -> Content:
    """A unified diff of the parent's text against this version's, coloured by line kind."""
    if parent is None:
        return Content.styled(
            "No parent version: this is the first summary of its branch.", "$text-muted"
        )
    lines = list(
        difflib.unified_diff(
            parent.text.splitlines(),
            summary.text.splitlines(),
            fromfile=f"v{parent.version}",
            tofile=f"v{summary.version}",
            lineterm="",
        )
    )
    if not lines:
        return Content.styled(f"Same text as v{parent.version}.", "$text-muted")
    styled = []
    for line in lines:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$text-accent"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        else:
            style = ""
        styled.append(inert_content(line, style))
    return Content("\n").join(styled)


def segments(summary: Summary) -> Content:
    """Each segment with its turns, sizes and compression rate."""
    if not summary.segments:
        return Content.styled(
            f"The {summary.strategy} strategy keeps one text; it has no segments.", "$text-muted"
        )
    blocks = []
    for segment in summary.segments:
        level = f" · level {segment.level}" if segment.level else ""
        head = Content.styled(
            f"Turns {segment.turns[0]}–{segment.turns[1]}{level} · "
            f"{segment.original_chars} → {segment.summary_chars} chars · "
            f"rate {segment.compression_rate:.2f}",
            "bold $text-accent",
        )
        blocks.append(Content("\n").join([head, inert_content(segment.text), Content("")]))
    return Content("\n").join(blocks)


class InspectorScreen(ModalScreen[Activate | Regenerate | None]):
    """Inspect one summary version; ``a`` activates it, ``g`` regenerates it.

    Dismisses with what the user chose (:class:`Activate`, :class:`Regenerate`) or ``None``.

    Args:
        summary: The version.
        parent: Its parent version, for the diff.
        active: Whether it is the version in force.
    """

    CSS_PATH = "inspector.tcss"

    BINDINGS: ClassVar[list[BindingType]] = bindings("inspector")

    def __init__(
        self,
        summary: Summary,
        parent: Summary | None,
        *,
        active: bool,
        retention: Retention | None = None,
    ) -> None:
        super().__init__()
        self.summary = summary
        self.parent_summary = parent
        self.active = active
        self.retention = retention

    def compose(self) -> ComposeResult:
        """Title, figures, then text / segments / diff tabs."""
        with Vertical(id="inspector"):
            yield Static(
                f"Summary v{self.summary.version} — t text · s segments · d diff · "
                "i identifiers: what the memory kept, per kind",
                id="inspector-title",
            )
            yield Static(figures(self.summary, active=self.active), id="inspector-figures")
            with TabbedContent(initial="text"):
                with TabPane("Text", id="text"), VerticalScroll():
                    yield Static(inert_content(self.summary.text or "(empty)"), id="summary-text")
                with TabPane("Segments", id="segments"), VerticalScroll():
                    yield Static(segments(self.summary), id="summary-segments")
                with TabPane("Diff vs parent", id="diff"), VerticalScroll():
                    yield Static(diff(self.parent_summary, self.summary), id="summary-diff")
                with TabPane("Identifiers", id="identifiers"), VerticalScroll():
                    yield Static(identifiers(self.retention), id="summary-identifiers")
        yield Footer()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker messages do not bubble: hand failures to the app's one handler."""
        report_failure(self, event.worker)

    def action_show_tab(self, tab: str) -> None:
        """Switch tab."""
        self.query_one(TabbedContent).active = tab

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)

    def _completed(self) -> bool:
        if self.summary.status != "completed":
            self.notify(f"v{self.summary.version} is {self.summary.status}.", severity="warning")
            return False
        return True

    def action_activate(self) -> None:
        """Put this version in force."""
        if self._completed():
            self.dismiss(Activate(self.summary.version))

    @work(exit_on_error=False)
    async def action_regenerate(self) -> None:
        """Ask for instructions, then leave to regenerate this version in the background."""
        if not self._completed():
            return
        instructions = await self.app.push_screen_wait(regenerate_prompt(self.summary))
        if instructions is not None:
            self.dismiss(Regenerate(self.summary, instructions.strip()))
