"""The usage report and costs as text, for both front ends: ``tui-chat usage`` prints these
lines and the TUI's usage screen shows the same columns and bars (nothing here draws)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_chat.engine.usage.usage import UsageReport, UsageRow

BAR = 30
"""Cells of the longest bar."""

COLUMNS: tuple[str, ...] = ("period", "model", "replies", "input", "output", "summaries", "cost")
"""The table's columns (the first is renamed ``day`` or ``month``)."""


MISS_LINES = {
    "model_changed": "model changed",
    "system_changed": "system changed",
    "tools_changed": "tools changed",
    "messages_changed": "messages changed",
    "previous_message_not_found": "previous request not found",
    "unavailable": "no diagnosis",
}
"""One line for each cache diagnostics ``cache_miss_reason`` type."""


def miss_line(reason: str, missed: int = 0) -> str:
    """Why a turn missed the cache, in a few words (``messages changed, 12,345 tokens``)."""
    text = MISS_LINES.get(reason, reason.replace("_", " "))
    return f"{text}, {missed:,} tokens" if missed else text


def usd(amount: float) -> str:
    """A cost in US dollars with enough precision for small amounts."""
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:.2f}"


def columns(report: UsageReport) -> tuple[str, ...]:
    """The table's headings: the period is called by what it is (``day`` or ``month``)."""
    return (report.by, *COLUMNS[1:])


def row_cells(row: UsageRow) -> tuple[str, ...]:
    """One row of the table, in :data:`COLUMNS` order."""
    return (
        row.period,
        row.model,
        str(row.replies),
        f"{row.input_tokens:,}",
        f"{row.output_tokens:,}",
        str(row.summary_calls),
        f"${row.total_usd:.4f}",
    )


def bars(report: UsageReport, width: int = BAR) -> list[tuple[str, str, str]]:
    """``(period, bar, dollars)`` of each period, oldest first; the dearest fills ``width``."""
    totals = report.totals()
    top = max((amount for _, amount in totals), default=0.0) or 1.0
    return [(p, "█" * round(width * amount / top), f"${amount:.4f}") for p, amount in totals]


def report_lines(report: UsageReport) -> list[str]:
    """The report as a table (a row per period and model), its total and a bar per period."""
    if not report.rows:
        return ["no usage yet: nothing has been sent to the API", *imported_lines(report)]
    widths = (-10, -26, 7, 10, 8, 9, 9)
    lines = [_line(columns(report), widths)]
    lines += [_line(row_cells(r), widths) for r in report.rows]
    lines += ["", f"total ${report.total_usd:.4f}", *imported_lines(report), ""]
    lines += [f"{period:<10} {bar:<{BAR}} {amount}" for period, bar, amount in bars(report)]
    missed = [r for r in report.rows if r.cache_misses]
    if missed:
        lines += ["", "cache misses (why the prompt cache could not reuse the previous request)"]
    for r in missed:
        reasons = ", ".join(f"{miss_line(k)} ×{n}" for k, n in sorted(r.cache_misses.items()))
        lines.append(f"{r.period:<10} {r.model:<26} {reasons}")
    return lines


def imported_lines(report: UsageReport) -> list[str]:
    """The imported copies' spend, apart from the total (nothing when there is none)."""
    if not report.imported_usd and not report.imported_summary_calls:
        return []
    calls = report.imported_summary_calls
    return [
        f"imported copies: ${report.imported_usd:.4f} ({calls} summary call"
        f"{'s' if calls != 1 else ''}), spent where they were exported: not counted above"
    ]


def _line(cells: tuple[str, ...], widths: tuple[int, ...]) -> str:
    """Cells padded to their widths (negative: left-aligned), a space between."""
    return " ".join(
        f"{cell[:-w]:<{-w}}" if w < 0 else f"{cell:>{w}}"
        for cell, w in zip(cells, widths, strict=True)
    )
