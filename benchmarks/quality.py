"""Compaction quality, offline, on LoCoMo (Maharana et al., ACL 2024).

Each LoCoMo conversation is imported as ``benchmarks.locomo`` describes. For every
configuration — plain truncation, and each preset compacted with the offline extractive
summarizer, recall off and on — and every usable window (2k, 4k, 8k tokens: ``context_window``
is set so that window minus reply budget is exactly that), each question is sent through
``service.requests.context(conv_id, question)``: the exact request sending it would make. A
question is a *hit* when the text of every one of its evidence turns is inside that request
(summary, pins, recalled excerpts or raw messages).

Every (conversation, configuration) pair starts from its own import, so the pairs run in
worker processes of their own (``--jobs``) and are added up in a fixed order: the figures are
those of a run one pair after another. ``--quick`` measures one conversation (conv-30) at the
4k window only (the window of the targets), and the identifier retention of the coding
session at the model's own window only.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import (
    LOCOMO_DIR,
    Options,
    Row,
    missing,
    open_offline,
    parallel_calls,
    parallel_map,
    row,
)
from benchmarks.locomo import (
    Dialogue,
    PresetStats,
    Tally,
    answer_in,
    context_window_for,
    export_file,
    load_dialogue,
    normalise,
    request_text,
)
from benchmarks.locomo import is_hit as is_hit  # the measure, as ``quality.is_hit``
from benchmarks.probes import Bm25Probe, StrongBm25Probe
from benchmarks.quality_rows import (
    GROUP,
)
from benchmarks.quality_rows import hit_row as _hit_row
from benchmarks.quality_rows import margin_rows as _margin_rows

WINDOWS = (2_000, 4_000, 8_000)
TARGET_WINDOW = 4_000
TARGET_HIT_RATE = 80.0
PROBES = ("strong probe", "bm25 probe")
"""The probes measured at each recall-on configuration's budget: the reference first."""
QUICK_CONVERSATIONS = ("conv-30",)
QUICK_WINDOWS = (TARGET_WINDOW,)
RAW_WINDOW = False
"""Research switch: read a window as ``context_window`` itself (a new user's ``set
context_window 4000``) instead of as the usable part."""


async def _compact_all(service: Any, cid: str) -> int:
    """Compact until nothing more can be folded (as ``tui-chat compact`` repeated would)."""
    from tui_chat.engine.service import CompactionError

    versions = 0
    while True:
        try:
            await service.summaries.compact(cid)
        except CompactionError:
            return versions
        versions += 1


Key = tuple[str, int, bool]
"""``(configuration, usable window, recall on)``; the probe is ``("bm25 probe", usable, …)``
measured at the budget of the configuration named in :data:`PROBE_AT`."""


async def _ask_all(
    service: Any,
    cid: str,
    dialogue: Dialogue,
    key: Key,
    tallies: dict[Key, Tally],
    probes: Sequence[tuple[str, Bm25Probe | StrongBm25Probe]] = (),
) -> None:
    from benchmarks.quality_research import dump

    texts = {t.dia_id: t.original for t in dialogue.turns}
    tally = tallies.setdefault(key, Tally())
    for question in dialogue.questions:
        built = await service.requests.context(cid, question.text)
        haystack = request_text(built.request)
        hit = all(normalise(texts[e]) in haystack for e in question.evidence)
        tokens = built.breakdown.input_tokens
        tally.add(question.category, hit, answer_in(haystack, question.answer), tokens)
        for name, probe in probes:
            chosen = probe.selection(question.text, tokens)
            probe_hit = all(normalise(texts[e]) in chosen for e in question.evidence)
            probe_key = (f"{name} at {key[0]}", key[1], key[2])
            tallies.setdefault(probe_key, Tally()).add(
                question.category, probe_hit, answer_in(chosen, question.answer), tokens
            )
            if name == PROBES[0]:
                dump(dialogue.name, key, question, hit, probe_hit, tokens, built.request)


async def evaluate(
    dialogue: Dialogue,
    presets: Sequence[str],
    windows: Sequence[int],
    work: Path,
    tallies: dict[Key, Tally],
    stats: dict[str, PresetStats],
    truncation: bool = True,
) -> None:
    """Run every configuration on one dialogue, adding to ``tallies`` and ``stats``.

    Plain truncation (unless ``truncation`` is false), then each preset. The probes (the
    strong one, the reference, and the plain one) are measured at the budget of every
    configuration with recall on (each question's own request size), in the same run.
    """
    source = export_file(dialogue, work / f"{dialogue.name}.json")
    probe = (
        ("strong probe", StrongBm25Probe(dialogue.turns)),
        ("bm25 probe", Bm25Probe(dialogue.turns)),
    )
    for preset in ("truncation", *presets) if truncation else tuple(presets):
        for usable in windows:
            await _evaluate_one(dialogue, preset, usable, source, work, tallies, stats, probe)


async def _evaluate_one(
    dialogue: Dialogue,
    preset: str,
    usable: int,
    source: Path,
    work: Path,
    tallies: dict[Key, Tally],
    stats: dict[str, PresetStats],
    probe: Sequence[tuple[str, Bm25Probe | StrongBm25Probe]],
) -> None:
    """One configuration (``truncation`` or a preset) at one usable window."""
    from benchmarks.quality_research import patch_presets
    from tui_chat.core.identifiers import retention

    patch_presets()

    db = work / f"{dialogue.name}-{preset}-{usable}.db"
    service, store = await open_offline(db)
    try:
        conversation = await service.transfer.import_file(source)
        cid = conversation.id
        chosen = "window" if preset == "truncation" else preset
        await service.conversations.set_setting(cid, "preset", chosen)
        await service.conversations.set_setting(cid, "summarizer", "extractive")
        window = usable if RAW_WINDOW else context_window_for(usable)
        await service.conversations.set_setting(cid, "context_window", str(window))
        if preset == "truncation":
            await service.conversations.set_setting(cid, "recall", "off")
            await _ask_all(service, cid, dialogue, (preset, usable, False), tallies, probe)
            return
        versions = await _compact_all(service, cid)
        for recall in (False, True):
            await service.conversations.set_setting(cid, "recall", "on" if recall else "off")
            await _ask_all(
                service,
                cid,
                dialogue,
                (preset, usable, recall),
                tallies,
                probe if recall else (),
            )
        if usable == TARGET_WINDOW:
            active_id = (await service.conversations.resolve(cid)).active_summary_id
            summaries = await service.summaries.versions(cid)
            active = next((s for s in summaries if s.id == active_id), None)
            entry = stats.setdefault(preset, PresetStats())
            entry.versions.append(versions)
            if active is not None:
                covered = await store.messages.history(cid, up_to_id=active.covers_to_message_id)
                tokens = sum(m.token_count for m in covered)
                entry.reductions.append(1 - active.summary_tokens / tokens)
                kept, total = retention([m.text for m in covered], active.text)
                entry.kept += kept
                entry.total += total
    finally:
        await service.close()


@dataclass(frozen=True)
class Task:
    """One dialogue under one configuration at every window (what a worker needs)."""

    dialogue: Dialogue
    configuration: str
    """``truncation`` or a preset."""
    windows: tuple[int, ...]


def evaluate_task(task: Task) -> tuple[dict[Key, Tally], dict[str, PresetStats]]:
    """:func:`evaluate` of one task in a fresh event loop and scratch directory."""
    tallies: dict[Key, Tally] = {}
    stats: dict[str, PresetStats] = {}
    truncation = task.configuration == "truncation"
    presets = [] if truncation else [task.configuration]
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(
            evaluate(task.dialogue, presets, task.windows, Path(tmp), tallies, stats, truncation)
        )
    return tallies, stats


def measure(
    dialogues: Sequence[Dialogue],
    presets: Sequence[str],
    windows: Sequence[int],
    jobs: int = 1,
    truncation: bool = True,
) -> tuple[dict[Key, Tally], dict[str, PresetStats]]:
    """Every configuration on every dialogue: the tallies and the compression figures.

    The (dialogue, configuration) pairs run over ``jobs`` processes and are added up in the
    order a single process would have measured them.
    """
    tasks = tasks_for(dialogues, presets, windows, truncation)
    return merged(parallel_map(evaluate_task, tasks, jobs))


def tasks_for(
    dialogues: Sequence[Dialogue],
    presets: Sequence[str],
    windows: Sequence[int],
    truncation: bool = True,
) -> list[Task]:
    """Every (dialogue, configuration) pair, truncation first, in the order of a serial run."""
    configurations = ("truncation", *presets) if truncation else tuple(presets)
    return [
        Task(dialogue, configuration, tuple(windows))
        for dialogue in dialogues
        for configuration in configurations
    ]


def merged(
    parts: Iterable[tuple[dict[Key, Tally], dict[str, PresetStats]]],
) -> tuple[dict[Key, Tally], dict[str, PresetStats]]:
    """The tallies and compression figures of tasks, added up in the order given."""
    tallies: dict[Key, Tally] = {}
    stats: dict[str, PresetStats] = {}
    for part_tallies, part_stats in parts:
        for key, tally in part_tallies.items():
            tallies.setdefault(key, Tally()).merge(tally)
        for name, entry in part_stats.items():
            stats.setdefault(name, PresetStats()).merge(entry)
    return tallies, stats


def rows_for(
    tallies: dict[Key, Tally],
    stats: dict[str, PresetStats],
    presets: Sequence[str],
    windows: Sequence[int],
    note: str,
) -> list[Row]:
    """The printed rows: per window truncation, every preset with recall off and on, the
    strong probe at each recall-on configuration's budget (and the plain probe at the
    default's), the default's margins over the strong probe; then compression figures."""
    from tui_chat.core.presets import DEFAULT_PRESET

    rows: list[Row] = []
    for usable in windows:
        label = f"{usable // 1000}k"
        truncation = tallies.get(("truncation", usable, False))
        base = truncation.rate if truncation is not None else 0.0
        if truncation is not None:
            rows.append(_hit_row(label, "truncation (baseline)", truncation, 0.0, None))
            rows[-1] = Row(**{**rows[-1].__dict__, "note": f"{note}; {rows[-1].note}"})
        for preset in presets:
            default = preset == DEFAULT_PRESET
            for recall in (False, True):
                tally = tallies[(preset, usable, recall)]
                target = TARGET_HIT_RATE if recall and usable == TARGET_WINDOW and default else None
                name = f"{preset}, recall {'on' if recall else 'off'}"
                rows.append(_hit_row(label, name, tally, base, target))
            strong = tallies.get((f"strong probe at {preset}", usable, True))
            if strong is not None:
                probe_name = f"strong BM25 probe (reference) at {preset}'s budget"
                rows.append(_hit_row(label, probe_name, strong, base, None))
            plain = tallies.get((f"bm25 probe at {preset}", usable, True))
            if default and plain is not None:
                probe_name = f"plain BM25 probe at {preset}'s budget"
                rows.append(_hit_row(label, probe_name, plain, base, None))
            if default and strong is not None:
                rows += _margin_rows(label, preset, tallies[(preset, usable, True)], strong)
    for preset in presets:
        entry = stats.get(preset, PresetStats())
        if entry.reductions:
            rows.append(
                row(
                    GROUP,
                    f"token reduction of the compacted history, {preset}",
                    100 * sum(entry.reductions) / len(entry.reductions),
                    "%",
                    note=f"summary tokens vs covered messages; versions made: "
                    f"{'/'.join(str(v) for v in entry.versions)}",
                )
            )
        if entry.total:
            rows.append(
                row(
                    GROUP,
                    f"identifier retention of the compacted history, {preset}",
                    100 * entry.kept / entry.total,
                    "%",
                    note=f"{entry.kept} of {entry.total} identifiers kept by the final summary",
                )
            )
    return rows


def run(options: Options) -> list[Row]:
    """Every quality figure."""
    from benchmarks import compacted
    from tui_chat.core.presets import PRESETS

    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if options.quick:
        paths = [p for p in paths if p.stem in QUICK_CONVERSATIONS]
    dialogues = [load_dialogue(p) for p in paths]
    presets = list(PRESETS)
    windows = QUICK_WINDOWS if options.quick else WINDOWS
    coding_points = CODING_POINTS[:1] if options.quick else CODING_POINTS
    if not dialogues:  # a plain clone without ../shared: the LoCoMo figures are said missing
        retention = parallel_calls([(_coding_retention, p) for p in coding_points], options.jobs)
        gone = missing(GROUP, "evidence in request (LoCoMo)", "%", "../shared not found")
        return [gone, *coding_rows(coding_points, retention)]
    # One pool for both kinds of work; the coding session's (longer) ones go first.
    calls: list[tuple[Callable[[Any], Any], Any]] = [
        (_coding_retention, point) for point in coding_points
    ]
    calls += [(evaluate_task, task) for task in tasks_for(dialogues, presets, windows)]
    after = len(calls)  # then each dialogue compacted once at the real window
    calls += [(compacted.measure_one, dialogue) for dialogue in dialogues]
    results = parallel_calls(calls, options.jobs)
    tallies, stats = merged(results[len(coding_points) : after])
    asked = sum(len(d.questions) for d in dialogues)
    skipped = sum(d.skipped for d in dialogues)
    names = ", ".join(d.name for d in dialogues)
    note = f"{asked} questions ({names}; {skipped} without usable evidence left out)"
    retention = results[: len(coding_points)]
    rows = rows_for(tallies, stats, presets, windows, note) + coding_rows(coding_points, retention)
    return rows + compacted.rows_of(results[after:])


CODING_POINTS: tuple[tuple[int | None, int | None], ...] = (
    (None, None),
    (None, 64_000),
    (None, 32_000),
    (8_000, None),
)
"""Identifier retention at ``(context window, working budget)`` (``None``: the default): at the
default budget, at 64k and 32k budgets, and at an 8k window."""
TARGET_RETENTION = 95.0
"""Identifier retention ≥ 95 % on the coding session at the default budget."""


def coding_rows(
    points: Sequence[tuple[int | None, int | None]],
    results: Sequence[tuple[float, dict[str, Any]]],
) -> list[Row]:
    """Identifier retention per kind of the default preset on the generated coding session,
    one row per point of :data:`CODING_POINTS` (``results`` from :func:`_coding_retention`)."""
    from benchmarks import coding
    from tui_chat.core.presets import DEFAULT_PRESET

    rows: list[Row] = []
    for (window, budget), (rate, data) in zip(points, results, strict=True):
        if window is not None:
            label = f"a {window // 1000}k window"
        else:
            label = "the default budget" if budget is None else f"a {budget // 1000}k budget"
        kinds = ", ".join(
            f"{k} {100 * v['kept'] / v['total']:.0f}" for k, v in data["by_kind"].items()
        )
        rows.append(
            row(
                GROUP,
                f"identifier retention, {DEFAULT_PRESET}, {coding.TURNS}-turn coding session, "
                f"{label}",
                100 * rate,
                "%",
                ge=TARGET_RETENTION if window is None and budget is None else None,
                note=f"{data['kept']} of {data['total']} (summary + ledger); per kind: {kinds}",
            )
        )
    return rows


def _coding_retention(point: tuple[int | None, int | None]) -> tuple[float, dict[str, Any]]:
    """The coding session's retention at one ``(window, budget)``: its rate and JSON form."""
    from benchmarks import coding

    kept = coding.run_measure(None, *point)
    return kept.rate, kept.to_json()


def main(argv: Sequence[str] | None = None) -> None:
    """Research entry point: ``python -m benchmarks.quality --presets window --windows 4000``."""
    import argparse

    parser = argparse.ArgumentParser(description="LoCoMo evidence-in-request figures")
    parser.add_argument("--presets", default="")
    parser.add_argument("--windows", default="4000")
    parser.add_argument("--conversations", default="")
    parser.add_argument("--raw-window", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-truncation", action="store_true")
    args = parser.parse_args(argv)
    global RAW_WINDOW
    RAW_WINDOW = args.raw_window
    from tui_chat.core.presets import PRESETS

    presets = [p for p in args.presets.split(",") if p] or list(PRESETS)
    windows = [int(w) for w in args.windows.split(",")]
    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if args.conversations:
        paths = [p for p in paths if p.stem in args.conversations.split(",")]
    dialogues = [load_dialogue(p) for p in paths]
    tallies, stats = measure(dialogues, presets, windows, args.jobs, not args.no_truncation)
    for r in rows_for(tallies, stats, presets, windows, ""):
        value = "n/a" if r.value is None else f"{r.value:5.1f}"
        print(f"{value}  {r.figure}  | {r.note}")


if __name__ == "__main__":
    # As ``benchmarks.quality`` (the module the spawned workers import), not as ``__main__``.
    from benchmarks.quality import main as research

    research()
