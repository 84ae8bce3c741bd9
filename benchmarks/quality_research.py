"""Research tools for the quality group: ``python -m benchmarks.quality --presets adaptive
--windows 2000,4000,8000 --jobs 2 --no-truncation`` prints the rows of chosen configurations, and
``TUI_CHAT_QUALITY_SETTINGS`` changes a lever in the worker processes to measure it first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from benchmarks import quality
from benchmarks.common import LOCOMO_DIR
from benchmarks.locomo import load_dialogue

EXTRA_SETTINGS: tuple[tuple[str, str], ...] = tuple(
    tuple(pair.split("=", 1))  # type: ignore[misc]
    for pair in os.environ.get("TUI_CHAT_QUALITY_SETTINGS", "").split(",")
    if "=" in pair
)
"""Research switch (``TUI_CHAT_QUALITY_SETTINGS``): Policy fields replaced in every preset
(``summary_share=0.02,ledger_share=0``) and module constants replaced in the workers
(``tui_chat.core.request.recall:NEIGHBOUR_WEIGHT=0.7``), to measure a lever before making it."""


DUMP_DIR = os.environ.get("TUI_CHAT_QUALITY_DUMP", "")
"""Research switch (``TUI_CHAT_QUALITY_DUMP``): a directory where every question's outcome
(ours and the strong probe's) and its request are written, one JSON line each, per worker."""


def dump(
    name: str, key: Any, question: Any, hit: bool, probe_hit: bool, tokens: int, request: Any
) -> None:
    """Write one question's outcome under :data:`DUMP_DIR` (nothing when it is not set)."""
    if not DUMP_DIR:
        return
    import json
    from pathlib import Path

    record = {
        "conversation": name,
        "preset": key[0],
        "window": key[1],
        "question": question.text,
        "category": question.category,
        "evidence": list(question.evidence),
        "hit": hit,
        "probe": probe_hit,
        "tokens": tokens,
        "request": request,
    }
    path = Path(DUMP_DIR) / f"{name}-{key[0]}-{key[1]}.jsonl"
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def patch_presets() -> None:
    """Apply :data:`EXTRA_SETTINGS` in this (worker) process."""
    import importlib
    from dataclasses import fields, replace

    from tui_chat.core import presets

    if not EXTRA_SETTINGS:
        return
    types = {f.name: f.type for f in fields(presets.Policy)}
    changes: dict[str, Any] = {}
    for key, value in EXTRA_SETTINGS:
        if ":" in key:
            module = importlib.import_module(key.split(":")[0])
            name = key.split(":")[1]
            kind = type(getattr(module, name))
            setattr(module, name, value == "True" if kind is bool else kind(value))
            continue
        kind = str(types[key])
        changes[key] = float(value) if "float" in kind else int(value) if "int" in kind else value
    for name, policy in list(presets.PRESETS.items()):
        presets.PRESETS[name] = replace(policy, **changes)


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
    quality.RAW_WINDOW = args.raw_window
    from tui_chat.core.presets import PRESETS

    presets = [p for p in args.presets.split(",") if p] or list(PRESETS)
    windows = [int(w) for w in args.windows.split(",")]
    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if args.conversations:
        paths = [p for p in paths if p.stem in args.conversations.split(",")]
    dialogues = [load_dialogue(p) for p in paths]
    tallies, stats = quality.measure(dialogues, presets, windows, args.jobs, not args.no_truncation)
    for r in quality.rows_for(tallies, stats, presets, windows, ""):
        value = "n/a" if r.value is None else f"{r.value:5.1f}"
        print(f"{value}  {r.figure}  | {r.note}")
