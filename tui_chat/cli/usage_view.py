"""``tui-chat usage``: cost per day or month and model, as a table and a bar per period."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.cli import render
from tui_chat.cli.parser import Args
from tui_chat.engine.usage import report_lines

if TYPE_CHECKING:
    from tui_chat.engine.service import ChatService
    from tui_chat.engine.usage import UsageReport


def report_json(report: UsageReport) -> render.JsonObject:
    """The report as JSON: every row, each period's total and the grand total."""
    return {
        "by": report.by,
        "rows": [
            {
                "period": r.period,
                "model": r.model,
                "replies": r.replies,
                "input_tokens": r.input_tokens,
                "cache_read_tokens": r.cache_read_tokens,
                "output_tokens": r.output_tokens,
                "web_searches": r.web_searches,
                "chat_usd": round(r.chat_usd, 6),
                "summary_calls": r.summary_calls,
                "summary_usd": round(r.summary_usd, 6),
                "total_usd": round(r.total_usd, 6),
                "cache_misses": dict(r.cache_misses),
            }
            for r in report.rows
        ],
        "totals": [{"period": p, "usd": round(usd, 6)} for p, usd in report.totals()],
        "total_usd": round(report.total_usd, 6),
        "imported": {  # copies an import brought: spent where they were exported
            "usd": round(report.imported_usd, 6),
            "summary_calls": report.imported_summary_calls,
        },
    }


async def usage(service: ChatService, args: Args) -> int:
    """Print what replies and summaries cost, per day (or ``--month``) and model."""
    report = await service.costs.report("month" if args.month else "day", args.since)
    if args.as_json:
        render.json_out(report_json(report))
        return 0
    if args.since:  # said first: the table counts only from that day
        render.out(f"usage since {args.since}" if report.rows else f"no usage since {args.since}")
        if not report.rows:
            return 0
    for line in report_lines(report):
        render.out(line)
    return 0
