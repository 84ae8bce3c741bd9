"""The benchmark harness: work spread over processes gives the figures of a serial run, cached
input files are made once, and the run's own time is judged against its target.

No timing is asserted: the run-time row is built from a given number of seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import backlog, cost, locomo, quality
from benchmarks.common import Options, parallel_map
from benchmarks.run import run_row


def test_parallel_map_keeps_the_order_of_its_items() -> None:
    texts = [f" item  {n}\n" for n in range(5)]
    assert parallel_map(locomo.normalise, texts, 2) == [f"item {n}" for n in range(5)]
    assert parallel_map(locomo.normalise, texts, 1) == [f"item {n}" for n in range(5)]


def _dialogue() -> locomo.Dialogue:
    turns = [
        locomo.Turn(
            f"D1:{n}",
            "user" if n % 2 else "assistant",
            text := f"Turn {n}: we talked about topic number {n} and the weather.",
            text,
            f"2023-05-0{1 + n // 4}T10:00:00+00:00",
        )
        for n in range(1, 13)
    ]
    questions = [
        locomo.Question("What was topic number 3?", ("D1:3",), 4, "topic number 3"),
        locomo.Question("What about topics 5 and 11?", ("D1:5", "D1:11"), 1, None),
    ]
    return locomo.Dialogue("tiny", "Ann", "Bob", turns, questions)


@pytest.mark.slow  # a process pool
def test_quality_in_two_processes_adds_up_to_the_serial_figures() -> None:
    dialogue = _dialogue()
    serial = quality.measure([dialogue, dialogue], ["window"], [2_000], jobs=1)
    spread = quality.measure([dialogue, dialogue], ["window"], [2_000], jobs=2)
    assert serial == spread
    tallies, stats = serial
    assert tallies[("truncation", 2_000, False)].total == 4  # two questions, twice
    assert set(stats) <= {"window"}


def test_tally_merge_counts_every_question_once() -> None:
    first, second, both = quality.Tally(), quality.Tally(), quality.Tally()
    for tally, items in ((first, [(4, True, True, 10)]), (second, [(4, False, None, 20)])):
        for item in items:
            tally.add(*item)
            both.add(*item)
    first.merge(second)
    assert first == both
    assert first.category_rate(4) == 50.0 and first.mean_tokens == 15.0


def test_quick_cost_leaves_out_the_other_trigger() -> None:
    full = cost.configurations(["adaptive"], ["claude"])
    quick = cost.configurations(["adaptive"], ["claude"], other_trigger=False)
    assert set(quick) == {"baseline", "adaptive + claude"}
    assert set(full) - set(quick) == {"adaptive (cost trigger) + claude"}


def test_backlog_import_file_is_written_once(tmp_path: Path) -> None:
    path = backlog.import_file(tmp_path, 6)
    made = path.stat().st_mtime_ns
    assert backlog.import_file(tmp_path, 6) == path and path.stat().st_mtime_ns == made
    backlog.write_import_file(tmp_path / "again.json", 6)
    assert (tmp_path / "again.json").read_text() == path.read_text()


def test_run_row_judges_the_run_time() -> None:
    assert run_row("quick", 80.0, ["cost 10 s (CPU 9 s)"], 2).met is True
    missed = run_row("full", 700.0, [], 2)
    assert missed.met is False and missed.target == "<= 600"


def test_a_configuration_with_the_baselines_settings_reuses_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[cost.Job] = []

    def fake_measure(job: cost.Job) -> cost.Run:
        seen.append(job)
        bill = cost.Bill(requests=1, dollars=float(len(seen)))
        return cost.Run(bills={"chat": bill}, locomo_hits=50.0 if job.locomo else None)

    monkeypatch.setattr(cost, "measure", fake_measure)
    rows = {r.figure: r for r in cost.run(Options(quick=False, data_dir=tmp_path, jobs=1))}
    baseline = rows["baseline (full history, nothing cut or summarized)"]
    twin = rows["window + extractive"]
    window = {"preset": "window", "summarizer": "extractive"}
    assert [job.settings for job in seen].count(window) == 1
    assert seen[0].baseline and seen[0].locomo  # the baseline's replay, checked as one
    assert twin.value == baseline.value and "same settings" in twin.note
    assert "LoCoMo" in twin.note and "LoCoMo" not in baseline.note
    bills = [r for r in rows.values() if r.unit == "$"]
    assert len(bills) == len(seen) + 1  # every configuration once, the twin from the baseline
