"""What the API calls cost, summed by day (local time) and model, over every conversation.

Two sources: each reply's ``usage`` JSON (priced by the engine at the model's prices) and
each summary version's call (tokens and dollars stored when it was made, migration 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from tui_chat.core.models import Usage
from tui_chat.store.rows import to_json
from tui_chat.store.sql import Sql

USAGE_FIELDS = tuple(f.name for f in fields(Usage) if f.type in ("int", int))
"""Every count of :class:`Usage`, each a key of a reply's ``usage`` JSON."""
PROMPT_SPLITS = (100_000, 200_000)
"""Prompt sizes the sums are split at: every long-prompt threshold of the model table (a
request past one is billed at its model's higher tier on every token, so replies either side
of it are priced apart; a test keeps this list covering the table)."""
_PROMPT = " + ".join(
    f"IFNULL(json_extract(usage, '$.{name}'), 0)"
    for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
)
PRICE_GROUP = "IFNULL(json_extract(usage, '$.speed'), ''), " + " + ".join(
    f"(({_PROMPT}) > {split})" for split in PROMPT_SPLITS
)
"""The SQL of the two columns replies are summed apart by: their speed (fast mode is billed
at a multiple) and how many of :data:`PROMPT_SPLITS` their prompt passed."""
USAGE_SUMS = (
    PRICE_GROUP + ", " + ", ".join(f"sum(json_extract(usage, '$.{name}'))" for name in USAGE_FIELDS)
)
"""The SQL that selects a group's speed and prompt split, then sums every count of the
replies' ``usage`` JSON in :data:`USAGE_FIELDS` order (group by :data:`PRICE_GROUP` too)."""


def summed_usage(values: Sequence[int | str | None]) -> tuple[Usage, int]:
    """The :class:`Usage` of the columns :data:`USAGE_SUMS` selects (``NULL`` read as 0), and
    the least prompt size of its group (what prices its tier: 0, or just past a split)."""
    speed, passed, *sums = values
    counts: dict[str, Any] = {n: int(v or 0) for n, v in zip(USAGE_FIELDS, sums, strict=True)}
    split = int(passed or 0)
    floor = PROMPT_SPLITS[split - 1] + 1 if split else 0
    return Usage(**counts, speed=str(speed or "")), floor


@dataclass(frozen=True, slots=True)
class DayUsage:
    """One model's replies on one day."""

    day: str
    """``YYYY-MM-DD`` in local time."""
    model: str
    replies: int
    usage: Usage
    prompt_floor: int = 0
    """The least prompt of these replies (their price tier: see :func:`summed_usage`)."""


@dataclass(frozen=True, slots=True)
class DaySummaryCalls:
    """One model's summary calls on one day (the offline summarizer makes none)."""

    day: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class ConversationUsage:
    """One conversation's replies of one model, and (on one of its rows) its summary calls."""

    conversation_id: str
    model: str
    usage: Usage
    summary_usd: float = 0.0
    prompt_floor: int = 0
    """The least prompt of these replies (their price tier: see :func:`summed_usage`)."""


IMPORTED = (
    "EXISTS (SELECT 1 FROM imports AS i WHERE i.conversation_id = row.conversation_id "
    "AND julianday(row.created_at) < julianday(i.imported_at))"
)
"""Whether a row (``row``: a message or a summary version) is an imported copy: its
conversation was imported after the row was made (its usage was spent where it was exported,
and counted there). What is sent after the import is new spend."""


class UsageLedger:
    """Sums of the API's usage, per day and model (a report: it reads every reply once)."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def replies(self, since: str | None = None, *, imported: bool = False) -> list[DayUsage]:
        """Replies' usage by local day and model, oldest day first (``since``: a first day;
        ``imported``: only the copies an import brought, else only the spend made here)."""
        rows = await self._sql.all(
            "SELECT date(created_at, 'localtime') AS day, IFNULL(model, ''), count(*), "
            f"{USAGE_SUMS} FROM messages AS row WHERE usage IS NOT NULL "
            f"AND (? IS NULL OR date(created_at, 'localtime') >= ?) AND {IMPORTED} = ? "
            f"GROUP BY day, model, {PRICE_GROUP} ORDER BY day, model",
            (since, since, int(imported)),
        )
        return [DayUsage(str(r[0]), str(r[1]), int(r[2]), *summed_usage(r[3:])) for r in rows]

    async def cache_misses(self, since: str | None = None) -> list[tuple[str, str, str, int]]:
        """``(local day, model, cache_miss reason, replies)`` of the replies whose cache
        diagnostics named a reason, oldest day first."""
        rows = await self._sql.all(
            "SELECT date(created_at, 'localtime') AS day, IFNULL(model, ''), "
            "json_extract(usage, '$.cache_miss') AS reason, count(*) FROM messages "
            "WHERE usage IS NOT NULL AND reason IS NOT NULL "
            "AND (? IS NULL OR date(created_at, 'localtime') >= ?) "
            "GROUP BY day, model, reason ORDER BY day, model, reason",
            (since, since),
        )
        return [(str(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]

    async def summary_calls(
        self, since: str | None = None, *, imported: bool = False
    ) -> list[DaySummaryCalls]:
        """Summary calls by local day and model, oldest day first (``imported`` as for
        :meth:`replies`)."""
        rows = await self._sql.all(
            "SELECT date(created_at, 'localtime') AS day, call_model, count(*), "
            "sum(call_input_tokens + call_cache_read_tokens + call_cache_write_tokens), "
            "sum(call_output_tokens), sum(call_cost_usd) FROM summaries AS row "
            "WHERE call_model IS NOT NULL "
            f"AND (? IS NULL OR date(created_at, 'localtime') >= ?) AND {IMPORTED} = ? "
            "GROUP BY day, call_model ORDER BY day, call_model",
            (since, since, int(imported)),
        )
        return [
            DaySummaryCalls(
                str(r[0]), str(r[1]), int(r[2]), int(r[3] or 0), int(r[4] or 0), float(r[5] or 0)
            )
            for r in rows
        ]

    async def conversations(self, ids: Sequence[str]) -> list[ConversationUsage]:
        """Usage of each of these conversations' replies by model, and the dollars of their
        summary calls: two queries for the whole list, however many conversations it has."""
        wanted = "conversation_id IN (SELECT value FROM json_each(?))"
        listed = to_json(list(ids))
        rows = await self._sql.all(
            f"SELECT conversation_id, IFNULL(model, ''), {USAGE_SUMS} FROM messages "
            f"WHERE usage IS NOT NULL AND {wanted} GROUP BY conversation_id, model, {PRICE_GROUP}",
            (listed,),
        )
        out = []
        for r in rows:
            usage, floor = summed_usage(r[2:])
            out.append(ConversationUsage(str(r[0]), str(r[1]), usage, prompt_floor=floor))
        calls = await self._sql.all(
            "SELECT conversation_id, sum(call_cost_usd) FROM summaries "
            f"WHERE call_model IS NOT NULL AND {wanted} GROUP BY conversation_id",
            (listed,),
        )
        out += [ConversationUsage(str(r[0]), "", Usage(), float(r[1] or 0)) for r in calls]
        return out

    async def revisions(self, ids: Sequence[str]) -> dict[str, int]:
        """Each conversation's revision (it changes with every write to its messages and
        summaries: migration 13), one query for the list."""
        rows = await self._sql.all(
            "SELECT id, revision FROM conversations WHERE id IN (SELECT value FROM json_each(?))",
            (to_json(list(ids)),),
        )
        return {str(r[0]): int(r[1]) for r in rows}
