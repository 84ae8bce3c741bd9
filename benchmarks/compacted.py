"""After one manual compact at the real window: is compacting a trap?

Each LoCoMo conversation (about 16-26k tokens) is imported with every default (the model's own
window, the default preset and budget), compacted once as ``tui-chat compact`` does (the
offline extractive summarizer), and every question is sent through
``service.requests.context``: the exact request the next turn would make. The strong plain
search (:class:`~benchmarks.probes.StrongBm25Probe`) is given each question's own request size.
The target: at least :data:`~benchmarks.quality.TARGET_MARGIN` points above it, and no category
with :data:`~benchmarks.quality.MIN_CATEGORY` questions below it. ``--quick``: conv-30 only.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import Row, parallel_map, row
from benchmarks.locomo import Dialogue, Tally, answer_in, export_file, normalise, request_text
from benchmarks.probes import StrongBm25Probe

GROUP = "quality"
LABEL = "real (after one manual compact)"
CONFIGURATION = "default after one compact"
PARTS = ("summary", "ledger", "recall", "recent")
"""Request parts whose mean size the row reports."""


async def _measure(dialogue: Dialogue, work: Path) -> tuple[Tally, Tally, dict[str, list[int]]]:
    from benchmarks.quality_research import patch_presets
    from benchmarks.quality_rows import open_service as _open

    patch_presets()
    source = export_file(dialogue, work / f"{dialogue.name}.json")
    service = await _open(work / f"{dialogue.name}-compacted.db")
    ours, probe_tally = Tally(), Tally()
    parts: dict[str, list[int]] = {p: [] for p in PARTS}
    try:
        cid = (await service.transfer.import_file(source)).id
        await service.conversations.set_setting(cid, "summarizer", "extractive")
        await service.summaries.compact(cid)
        texts = {t.dia_id: t.original for t in dialogue.turns}
        probe = StrongBm25Probe(dialogue.turns)
        for question in dialogue.questions:
            built = await service.requests.context(cid, question.text)
            haystack = request_text(built.request)
            tokens = built.breakdown.input_tokens
            hit = all(normalise(texts[e]) in haystack for e in question.evidence)
            ours.add(question.category, hit, answer_in(haystack, question.answer), tokens)
            chosen = probe.selection(question.text, tokens)
            probe_hit = all(normalise(texts[e]) in chosen for e in question.evidence)
            answer = answer_in(chosen, question.answer)
            probe_tally.add(question.category, probe_hit, answer, tokens)
            for part in PARTS:
                parts[part].append(built.breakdown.sections.get(part, 0))
    finally:
        await service.close()
    return ours, probe_tally, parts


def measure_one(dialogue: Dialogue) -> tuple[Tally, Tally, dict[str, list[int]]]:
    """One dialogue in a fresh event loop and scratch directory (a worker's task)."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_measure(dialogue, Path(tmp)))


def rows(dialogues: Sequence[Dialogue], jobs: int = 1) -> list[Row]:
    """The rows: ours, the strong probe at the same sizes, and the margins."""
    return rows_of(parallel_map(measure_one, list(dialogues), jobs))


def rows_of(results: Sequence[tuple[Tally, Tally, dict[str, list[int]]]]) -> list[Row]:
    """The rows of :func:`measure_one`'s results, added up in the order given."""
    from benchmarks.quality_rows import hit_row as _hit_row
    from benchmarks.quality_rows import margin_rows as _margin_rows

    ours, probe = Tally(), Tally()
    parts: dict[str, list[int]] = {p: [] for p in PARTS}
    for mine, theirs, sizes in results:
        ours.merge(mine)
        probe.merge(theirs)
        for part in PARTS:
            parts[part] += sizes[part]
    split = ", ".join(f"{p} {sum(v) / max(1, len(v)):,.0f}" for p, v in parts.items())
    out = [
        _hit_row(LABEL, CONFIGURATION, ours, 0.0, None),
        _hit_row(
            LABEL, f"strong BM25 probe (reference) at {CONFIGURATION}'s budget", probe, 0, None
        ),
        row(
            GROUP,
            f"mean request split, {LABEL} window, {CONFIGURATION}",
            None,
            "tokens",
            note=split,
        ),
    ]
    margins = _margin_rows(LABEL, CONFIGURATION, ours, probe)
    return out + margins[:2]
