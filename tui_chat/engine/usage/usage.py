"""``tui-chat usage``: what the replies and the summaries cost, per day or month and model.

Replies are priced now at each model's prices (the prices the gauge uses); a summary call's
dollars were stored when it ran. Both are the API's own token counts, never estimates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tui_chat.llm.models import ModelInfo, cost_usd
from tui_chat.store.repository import Store

Period = Literal["day", "month"]


@dataclass(slots=True)
class UsageRow:
    """One model in one period."""

    period: str
    model: str
    replies: int = 0
    input_tokens: int = 0
    """Every input token the replies' requests carried (uncached, cache writes and reads)."""
    cache_read_tokens: int = 0
    output_tokens: int = 0
    web_searches: int = 0
    chat_usd: float = 0.0
    summary_calls: int = 0
    summary_usd: float = 0.0
    cache_misses: dict[str, int] = field(default_factory=dict)
    """Replies whose cache diagnostics named why they missed, by reason (``model_changed``…)."""

    @property
    def total_usd(self) -> float:
        """Replies and summaries together."""
        return self.chat_usd + self.summary_usd


@dataclass(slots=True)
class UsageReport:
    """Rows by period then model, and each period's total."""

    by: Period
    rows: list[UsageRow] = field(default_factory=list)
    imported_usd: float = 0.0
    """What imported copies' replies and summary calls cost where they were made (shown
    apart: not new spend)."""
    imported_summary_calls: int = 0

    def totals(self) -> list[tuple[str, float]]:
        """Each period with its dollars, oldest first."""
        sums: dict[str, float] = {}
        for row in self.rows:
            sums[row.period] = sums.get(row.period, 0.0) + row.total_usd
        return list(sums.items())

    @property
    def total_usd(self) -> float:
        """Everything in the report."""
        return sum(row.total_usd for row in self.rows)


async def usage_report(
    store: Store,
    info_for: Callable[[str], ModelInfo],
    by: Period = "day",
    since: str | None = None,
) -> UsageReport:
    """Usage of every conversation (archived ones too) from ``since`` (a ``YYYY-MM-DD``
    local day; everything by default), summed by ``by`` and model."""
    width = 10 if by == "day" else 7
    rows: dict[tuple[str, str], UsageRow] = {}

    def row(day: str, model: str) -> UsageRow:
        key = (day[:width], model)
        if key not in rows:
            rows[key] = UsageRow(period=key[0], model=model)
        return rows[key]

    for day in await store.usage.replies(since):
        target, usage = row(day.day, day.model), day.usage
        target.replies += day.replies
        target.input_tokens += usage.total_input
        target.cache_read_tokens += usage.cache_read_input_tokens
        target.output_tokens += usage.output_tokens
        target.web_searches += usage.web_search_requests
        target.chat_usd += cost_usd(info_for(day.model), usage, day.prompt_floor)
    for day_, model, reason, count in await store.usage.cache_misses(since):
        misses = row(day_, model).cache_misses
        misses[reason] = misses.get(reason, 0) + count
    for calls in await store.usage.summary_calls(since):
        target = row(calls.day, calls.model)
        target.summary_calls += calls.calls
        target.input_tokens += calls.input_tokens
        target.output_tokens += calls.output_tokens
        target.summary_usd += calls.cost_usd
    copied = sum(
        cost_usd(info_for(day.model), day.usage)
        for day in await store.usage.replies(since, imported=True)
    )
    copied_calls = await store.usage.summary_calls(since, imported=True)
    return UsageReport(
        by=by,
        rows=[rows[key] for key in sorted(rows)],
        imported_usd=copied + sum(c.cost_usd for c in copied_calls),
        imported_summary_calls=sum(c.calls for c in copied_calls),
    )


async def conversation_costs(
    store: Store, info_for: Callable[[str], ModelInfo], ids: Sequence[str]
) -> dict[str, float]:
    """What each of these conversations has cost so far in USD: its replies at their models'
    prices and its summary calls at what they cost (every listed id is in the result)."""
    costs = dict.fromkeys(ids, 0.0)
    if not costs:
        return costs
    for part in await store.usage.conversations(list(costs)):
        price = cost_usd(info_for(part.model), part.usage, part.prompt_floor) + part.summary_usd
        costs[part.conversation_id] = costs.get(part.conversation_id, 0.0) + price
    return costs


class CostCache:
    """What each conversation has cost, kept while its revision is the same: listing
    thousands of conversations reads the usage of only those written since (the revision is
    read first, so a write meanwhile is read again next time)."""

    def __init__(self, store: Store, info_for: Callable[[str], ModelInfo]) -> None:
        self._store = store
        self._info_for = info_for
        self._kept: dict[str, tuple[int, float]] = {}

    async def costs(self, ids: Sequence[str]) -> dict[str, float]:
        """The cost of each of these conversations in USD (see :func:`conversation_costs`)."""
        revisions = await self._store.usage.revisions(ids)
        stale = [i for i in ids if i not in self._kept or self._kept[i][0] != revisions.get(i)]
        if stale:
            fresh = await conversation_costs(self._store, self._info_for, stale)
            for i in stale:
                self._kept[i] = (revisions.get(i, -1), fresh[i])
        return {i: self._kept[i][1] for i in ids}

    async def of(self, conversation_id: str) -> float:
        """What one conversation has cost so far in USD: its replies and its summary calls."""
        return (await self.costs([conversation_id]))[conversation_id]

    async def report(self, by: Period = "day", since: str | None = None) -> UsageReport:
        """Cost of every conversation's replies and summaries per ``by`` and model."""
        return await usage_report(self._store, self._info_for, by, since)
