"""The live token gauge: what the next request is made of, against the usable window."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_chat.engine.usage import usd
from tui_chat.tui.text import inert_content, tokens

if TYPE_CHECKING:
    from tui_chat.core.request import Breakdown

SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("tools", "tools", "$error-lighten-2"),
    ("system", "system", "$secondary"),
    ("anchors", "pins", "$warning"),
    ("summary", "summary", "$success"),
    ("ledger", "identifiers", "$success-darken-2"),
    ("recall", "recall", "$accent-lighten-2"),
    ("recent", "recent", "$primary"),
    ("new_message", "draft", "$foreground"),
)
"""(breakdown key, label, style) of each bar segment, in request order (``tools`` shown only
when the request has tools: the MCP servers switched on in the conversation). The ledger is
named for what it holds: the identifiers (names, paths, numbers) of the folded turns."""

FILLED_BY_FOLDS = frozenset({"summary", "ledger", "recall"})
"""Sections empty until older turns are folded: their budget shows once they hold something."""


class TokenGauge(Widget):
    """A segmented bar system / anchors / summary / recall / recent / draft over the working
    budget (or the usable window when no budget is set).

    One figure: the next request's size (calibrated to what the API counts) against the point
    where it is compacted, as tokens and a percentage. The compaction point is marked on the
    bar (under the budget trigger it is the budget itself, the bar's end: it never moves); the
    total turns to the warning colour at the preset's warning level and to the error colour
    past the budget. The conversation's cost so far follows, labelled.
    """

    DEFAULT_CSS = """
    TokenGauge {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    """

    BAR_EMPTY: ClassVar[str] = "░"
    BAR_FULL: ClassVar[str] = "█"

    breakdown: reactive[Breakdown | None] = reactive(None)
    """The latest breakdown from the engine (``None`` until the first one)."""
    cost: reactive[float] = reactive(0.0)
    """The conversation's cost so far in USD."""
    paused: reactive[bool] = reactive(False)
    """Auto-compaction is paused after repeated failures."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dismissed: set[str] = set()
        """Warnings the user hid (for this session)."""
        self._drawn: tuple[Breakdown | None, tuple[object, ...], Content, dict[int, int]] | None
        self._drawn = None
        """The last render: what it was made of, the content, its height at each width."""
        self._height_due = False
        """A check of the height is queued (it reads the figures set meanwhile too)."""

    def _watch_breakdown(self) -> None:
        shown = self.warnings
        self.tooltip = "\n".join(f"⚠ {w}" for w in shown) if shown else None
        self._check_height()

    def _watch_cost(self) -> None:
        self._check_height()

    def _watch_paused(self) -> None:
        self._check_height()

    def _check_height(self) -> None:
        """Lay the screen out again only when the gauge's height changes (a changed figure
        is repainted in place: the draft's count changes as the user types, and a layout of
        the whole screen costs 15-40 ms of the event loop's time while a reply streams).

        Checked once the figures set together are all set (a reply's end sets the breakdown
        and the cost: one render for both, which the frame reuses)."""
        if not self._height_due:
            self._height_due = True
            self.call_next(self._check_height_now)

    def _check_height_now(self) -> None:
        self._height_due = False
        width = self.content_size.width
        if not width or self._height(width) != self.content_size.height:
            self.refresh(layout=True)

    def _inputs(self) -> tuple[object, ...]:
        """Everything :meth:`render` reads but the breakdown (compared by identity: a new
        count is a new object)."""
        return (
            self.cost,
            self.paused,
            self.size.width,
            self.content_size.width,
            frozenset(self.dismissed),
        )

    def _height(self, width: int) -> int:
        """The lines the content takes at ``width`` (wrapped once per content and width)."""
        content = self.render()
        assert self._drawn is not None
        heights = self._drawn[3]
        if width not in heights:
            heights[width] = len(content.wrap(width))
        return heights[width]

    def _used(self, breakdown: Breakdown) -> int:
        """The one figure the trigger, the marker and the fit check use as well."""
        return breakdown.used

    def _level(self, breakdown: Breakdown) -> str:
        total = self._used(breakdown) - breakdown.elastic  # filled recall yields first
        if total >= breakdown.usable:
            return "$text-error"
        if total >= breakdown.warn_tokens:
            return "$text-warning"
        return "$text-success"

    def _bar(self, breakdown: Breakdown, width: int) -> Content:
        usable = max(1, breakdown.usable)
        # Sections are local counts; scaled so the bar ends at the calibrated total. Cells
        # follow the running total (no minimum per part), so an empty request is an empty bar.
        scale = self._used(breakdown) / max(1, breakdown.input_tokens)
        cells: list[tuple[str, str]] = []
        running = 0.0
        for key, _, style in SECTIONS:
            value = int(breakdown.sections.get(key, 0))
            if value <= 0:
                continue
            running += value * scale
            end = min(width, round(running / usable * width))
            cells.extend((self.BAR_FULL, style) for _ in range(end - len(cells)))
        cells = cells[:width]
        cells.extend((self.BAR_EMPTY, "$foreground 30%") for _ in range(width - len(cells)))
        if breakdown.trigger_tokens:
            at = min(width - 1, round(breakdown.trigger_tokens / usable * width))
            cells[at] = ("┃", "bold $text-error")
        return Content.assemble(*cells)

    def render(self) -> Content:
        """Two lines: the bar with its total, then the legend; warnings on a third line.

        Made once per change of what it shows: a reply's end sets the breakdown and the cost
        (each checks the height) and the frame draws it, three renders for one look."""
        inputs = self._inputs()
        drawn = self._drawn
        if drawn is not None and drawn[0] is self.breakdown and drawn[1] == inputs:
            return drawn[2]
        content = self._render()
        self._drawn = (self.breakdown, inputs, content, {})
        return content

    def _render(self) -> Content:
        breakdown = self.breakdown
        if breakdown is None:
            return Content.styled("tokens: counting…", "$text-muted")
        used = self._used(breakdown)
        # One figure: the request against the point where it is compacted (the working
        # budget under the budget trigger, the trigger's point otherwise).
        point = breakdown.trigger_tokens or breakdown.usable
        percent = used / max(1, point) * 100
        kind = "budget" if breakdown.budget is not None else "window"
        label = Content.assemble(
            (f" {tokens(used)}", f"bold {self._level(breakdown)}"),
            f" / {tokens(breakdown.usable)} {kind} ",
            (f"{percent:.0f}%", self._level(breakdown)),
        )
        width = max(10, self.size.width - label.cell_length)
        lines = [Content.assemble(self._bar(breakdown, width), label)]
        legend: list[Content | tuple[str, str] | str] = []
        for key, name, style in SECTIONS:
            if key == "tools" and not breakdown.sections.get(key):
                continue
            legend.append(("■ ", style))
            used_here = int(breakdown.sections.get(key, 0))
            budget = breakdown.budgets.get(key)
            # What only a fold fills shows its budget once it holds something: "0/1.5k"
            # before any fold read as a share spent on nothing.
            limit = (
                f"/{tokens(budget)}" if budget and (used_here or key not in FILLED_BY_FOLDS) else ""
            )
            legend.append(f"{name} {tokens(used_here)}{limit} ")
        if breakdown.trigger_tokens:
            legend.append(("┃", "bold $text-error"))
            legend.append(f"compacts at {tokens(breakdown.trigger_tokens)} ")
        if breakdown.counted:
            legend.append((f"{breakdown.counted} ", "$text-muted"))
        legend.append("spent ")
        legend.append((usd(self.cost), "bold"))
        if breakdown.price_note:
            legend.append((f" ({breakdown.price_note})", "$text-warning"))
        if self.paused:
            legend.append(("  auto-compaction paused", "bold $text-error"))
        lines.append(Content.assemble(*legend))
        if shown := self.warnings:
            # One line, whatever the width: the whole text is the tooltip and the context
            # preview's; a click (or the palette's "Hide warnings") hides these ones.
            text = inert_content("⚠ " + "; ".join(shown), "$text-warning")
            hint = Content.styled(" (click hides)", "$text-muted")
            room = max(10, self.content_size.width or 200)
            if text.cell_length + hint.cell_length > room:
                text = text.truncate(max(1, room - hint.cell_length), ellipsis=True)
            lines.append(text + hint)
        return Content("\n").join(lines)

    @property
    def warnings(self) -> list[str]:
        """The breakdown's warnings not dismissed."""
        breakdown = self.breakdown
        if breakdown is None:
            return []
        return [w for w in breakdown.warnings if w not in self.dismissed]

    def dismiss(self) -> bool:
        """Hide the warnings shown now (a warning that changes shows again); whether any was."""
        shown = self.warnings
        self.dismissed.update(shown)
        self.tooltip = None
        self._check_height()
        self.refresh()
        return bool(shown)

    def on_click(self) -> None:
        """A click on the gauge hides its warnings."""
        self.dismiss()
