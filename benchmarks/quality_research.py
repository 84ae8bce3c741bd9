"""Research switches of the quality group, read in its worker processes:
``TUI_CHAT_QUALITY_SETTINGS`` changes a lever to measure it first, ``TUI_CHAT_QUALITY_DUMP``
writes every question's outcome. (``python -m benchmarks.quality --presets adaptive --windows
2000,4000,8000 --jobs 2 --no-truncation`` prints the rows of chosen configurations.)
"""

from __future__ import annotations

import os
from typing import Any

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
