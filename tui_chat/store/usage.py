"""What the API calls cost, summed by day (local time) and model, over every conversation.

Two sources: each reply's ``usage`` JSON (priced by the engine at the model's prices) and
each summary version's call (tokens and dollars stored when it was made, migration 6).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from tui_chat.core.models import Usage
from tui_chat.store.sql import Sql

USAGE_FIELDS = tuple(f.name for f in fields(Usage))
"""Every figure of :class:`Usage`, each a key of a reply's ``usage`` JSON."""


@dataclass(frozen=True, slots=True)
class DayUsage:
    """One model's replies on one day."""

    day: str
    """``YYYY-MM-DD`` in local time."""
    model: str
    replies: int
    usage: Usage


@dataclass(frozen=True, slots=True)
class DaySummaryCalls:
    """One model's summary calls on one day (the offline summarizer makes none)."""

    day: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


class UsageLedger:
    """Sums of the API's usage, per day and model (a report: it reads every reply once)."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def replies(self, since: str | None = None) -> list[DayUsage]:
        """Replies' usage by local day and model, oldest day first (``since``: a first day)."""
        sums = ", ".join(f"sum(json_extract(usage, '$.{name}'))" for name in USAGE_FIELDS)
        rows = await self._sql.all(
            "SELECT date(created_at, 'localtime') AS day, IFNULL(model, ''), count(*), "
            f"{sums} FROM messages WHERE usage IS NOT NULL "
            "AND (? IS NULL OR date(created_at, 'localtime') >= ?) "
            "GROUP BY day, model ORDER BY day, model",
            (since, since),
        )
        return [
            DayUsage(
                day=str(r[0]),
                model=str(r[1]),
                replies=int(r[2]),
                usage=Usage(**{n: int(v or 0) for n, v in zip(USAGE_FIELDS, r[3:], strict=True)}),
            )
            for r in rows
        ]

    async def summary_calls(self, since: str | None = None) -> list[DaySummaryCalls]:
        """Summary calls by local day and model, oldest day first."""
        rows = await self._sql.all(
            "SELECT date(created_at, 'localtime') AS day, call_model, count(*), "
            "sum(call_input_tokens + call_cache_read_tokens + call_cache_write_tokens), "
            "sum(call_output_tokens), sum(call_cost_usd) FROM summaries "
            "WHERE call_model IS NOT NULL "
            "AND (? IS NULL OR date(created_at, 'localtime') >= ?) "
            "GROUP BY day, call_model ORDER BY day, call_model",
            (since, since),
        )
        return [
            DaySummaryCalls(
                str(r[0]), str(r[1]), int(r[2]), int(r[3] or 0), int(r[4] or 0), float(r[5] or 0)
            )
            for r in rows
        ]
