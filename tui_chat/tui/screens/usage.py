"""The usage screen: what the API cost per day or month and model, replies
and summaries, as a table and a bar per period; the same report as ``tui-chat usage``."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.worker import Worker

from tui_chat.engine.usage import bars, columns, imported_lines, row_cells, usd
from tui_chat.tui.actions import bindings

if TYPE_CHECKING:
    from tui_chat.engine.usage import Period, UsageReport

__all__ = ["UsageScreen", "UsageSource"]

NOTE = (
    "Replies are priced at each model's prices (as the gauge's 'spent'); summary calls at what "
    "they cost when they ran. Every conversation, archived ones too."
)


class UsageSource(Protocol):
    """Where the usage report is read (``service.costs`` is one)."""

    async def report(self, by: Period = "day", since: str | None = None) -> UsageReport:
        """The API's cost per ``by`` and model."""
        ...


class UsageScreen(ModalScreen[None]):
    """The usage report, per day (``d``) or month (``m``); ``escape`` closes."""

    CSS_PATH = "usage.tcss"
    CHART_PERIODS: ClassVar[int] = 10
    """Periods the chart shows, the latest (the table has them all)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("usage")

    by: reactive[Period] = reactive("day", init=False)
    """What a row sums: a day or a month."""
    report: reactive[UsageReport | None] = reactive(None, init=False)
    """The report shown (``None`` while it is read)."""

    def __init__(self, source: UsageSource) -> None:
        super().__init__()
        self._source = source

    def compose(self) -> ComposeResult:
        """Title, the table, the total and the chart, and what the figures are."""
        with Vertical(id="usage"):
            yield Static(id="usage-title")
            yield DataTable(id="usage-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="usage-total")
            yield Static(id="usage-chart")
            yield Static(NOTE, id="usage-note", markup=False)

    def on_mount(self) -> None:
        """Read the report per day."""
        self._load()

    def watch_by(self) -> None:
        """Read the report again, summed the other way."""
        self._load()

    def _load(self) -> None:
        self.report = None
        self.query_one("#usage-title", Static).update(self._title("reading…"))
        # A callable, not a coroutine: one a newer read replaces before it starts is never made.
        read: Callable[[], Coroutine[Any, Any, None]] = partial(self._read, self.by)
        _worker: Worker[None] = self.run_worker(read, group="usage", exclusive=True)

    async def _read(self, by: Period) -> None:
        report = await self._source.report(by)
        if by == self.by:  # the user switched while it was read: the other read shows
            self.report = report

    def _title(self, status: str) -> Content:
        return Content.assemble(
            ("Usage ", "bold $text-accent"),
            (f"per {self.by}", "bold"),
            f" · {status} · d: per day, m: per month, esc: close",
        )

    def watch_report(self, report: UsageReport | None) -> None:
        """Fill the table, the total and the chart."""
        if report is None:
            return
        table = self.query_one(DataTable)
        table.clear(columns=True)
        cells = [row_cells(row) for row in report.rows]
        for index, label in enumerate(columns(report)):  # widths set: never cut to the label
            table.add_column(label, width=max([len(label), *(len(r[index]) for r in cells)]))
        for period, model, *figures in cells:
            table.add_row(period, model, *(Text(f, justify="right") for f in figures))
        periods = len(report.totals())
        status = f"{periods} {self.by}{'s' if periods != 1 else ''}" if report.rows else "no usage"
        self.query_one("#usage-title", Static).update(self._title(status))
        total = Content.assemble("total ", (usd(report.total_usd), "bold"))
        if not report.rows:
            total = Content("No usage yet: nothing has been sent to the API.")
        if copied := imported_lines(report):  # apart: spent where the copies were exported
            total = Content("\n").join([total, Content.styled(copied[0], "$text-muted")])
        self.query_one("#usage-total", Static).update(total)
        self.query_one("#usage-chart", Static).update(self._chart(report))

    def _chart(self, report: UsageReport) -> Content:
        """A bar per period (the last :attr:`CHART_PERIODS`), as wide as the screen allows."""
        width = max(10, min(60, self.size.width - 40))
        return Content("\n").join(
            Content.assemble(f"{period:<10} ", (bar, "$accent"), f" {amount}")
            for period, bar, amount in bars(report, width)[-self.CHART_PERIODS :]
        )

    def action_per(self, by: str) -> None:
        """Sum per ``day`` or ``month``."""
        self.by = "month" if by == "month" else "day"

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
