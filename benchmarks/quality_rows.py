"""What the quality group's rows say and how its services open: shared by
:mod:`benchmarks.quality` and :mod:`benchmarks.compacted` (neither imports the other's rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.common import Row, open_offline, row
from benchmarks.locomo import CATEGORIES, Tally

GROUP = "quality"
TARGET_MARGIN = 3.0
"""Points the default preset must beat the strong probe by, at the same budget."""
TARGET_TEMPORAL = 90.0
"""Temporal questions the default preset must have the evidence of, at every window."""
MIN_CATEGORY = 30
"""A category with at least this many questions must not fall below the strong probe."""


async def open_service(db: Path) -> Any:
    service, _ = await open_offline(db)
    return service


def hit_row(label: str, name: str, tally: Tally, base: float, target: float | None) -> Row:
    per_hit = tally.tokens_per_hit
    return row(
        GROUP,
        f"evidence in request, {label} window, {name}",
        tally.rate,
        "%",
        ge=target,
        ratio=tally.rate / base if base else None,
        note=f"answer in request {tally.answer_rate:.1f} %; mean request "
        f"{tally.mean_tokens:,.0f} tokens; "
        f"{'-' if per_hit is None else f'{per_hit:,.0f}'} tokens per hit; "
        f"{tally.categories_note()}",
    )


def margin_rows(label: str, preset: str, tally: Tally, probe: Tally) -> list[Row]:
    """The targets against the strong probe at one window: points above it overall (with each
    category's margin, the answer strings and the tokens per hit), the smallest margin over
    the categories with :data:`MIN_CATEGORY` questions, and the temporal hit rate."""
    margins: list[tuple[float, str]] = []
    parts: list[str] = []
    for number, name in CATEGORIES.items():
        ours, theirs = tally.category_rate(number), probe.category_rate(number)
        if ours is None or theirs is None:
            continue
        size = tally.category_size(number)
        parts.append(f"{name} {ours - theirs:+.1f} (n={size})")
        if size >= MIN_CATEGORY:
            margins.append((ours - theirs, name))
    worst, where = min(margins) if margins else (0.0, "-")
    ours_hit, theirs_hit = tally.tokens_per_hit, probe.tokens_per_hit
    per_hit = (
        f"{ours_hit:,.0f} vs {theirs_hit:,.0f}"
        if ours_hit is not None and theirs_hit is not None
        else "-"
    )
    temporal = tally.category_rate(2)
    return [
        row(
            GROUP,
            f"evidence in request, {label} window, {preset} minus the strong probe",
            tally.rate - probe.rate,
            "points",
            ge=TARGET_MARGIN,
            note=f"per category {', '.join(parts)}; answer in request "
            f"{tally.answer_rate - probe.answer_rate:+.1f} points; tokens per hit {per_hit}",
        ),
        row(
            GROUP,
            f"evidence in request, {label} window, {preset} minus the strong probe, "
            f"smallest category margin (n >= {MIN_CATEGORY})",
            worst,
            "points",
            ge=0.0,
            note=f"in {where}",
        ),
        row(
            GROUP,
            f"evidence in request, {label} window, {preset}, temporal questions",
            temporal,
            "%",
            ge=TARGET_TEMPORAL,
            note=f"{tally.category_size(2)} questions",
        ),
    ]
