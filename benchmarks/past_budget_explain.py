"""Where the past-budget chat's dollars go and why its questions miss (the figures the
engine's recall is tuned from, not guesses).

``python -m benchmarks.past_budget_explain [--quick] [--pattern warm|paused]
[--conversations conv-26,...]``: replays the default (and sending everything) as
``benchmarks/past_budget.py`` does, then prints

- the bill per chat turn, split into cached reads of the prefix, cache writes, uncached
  recalled tokens, the rest of the uncached input (the new message), the replies' output,
  and the summary calls' input and output (each at its own model's price);
- each missed question's reason: the evidence turn is still raw (in the request yet
  missed: a layout bug), not found by recall's search at all (``search``), found but below
  the relevance floor (``floor``), above it but ranked past the 6k maximum (``ranked out``),
  within the maximum but past this request's cap (``capped``), or outside recall and only
  said in the summary (``summary``).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from benchmarks.locomo import CATEGORIES
from benchmarks.past_budget_misses import recalled_tokens, why_missed

__all__ = ["recalled_tokens", "run", "why_missed"]


def _bill_lines(result: Any, label: str) -> list[str]:
    from benchmarks.cost import usage_of
    from tui_chat.config import DEFAULT_MODEL
    from tui_chat.core.models import Usage
    from tui_chat.llm.models import cost_usd, model_info

    info = model_info(DEFAULT_MODEL)
    sums: Counter[str] = Counter()
    chats = 0
    recall_turns = 0
    for kind, raw, dollars, recalled in result.turns:
        usage = usage_of(raw)
        if kind != "chat":
            sums[f"{kind} $"] += dollars
            sums[f"{kind} in"] += usage.input_tokens + usage.cache_read_input_tokens
            sums[f"{kind} out"] += usage.output_tokens
            continue
        chats += 1
        recall_turns += recalled > 0
        uncached = usage.input_tokens
        hour = usage.cache_creation_1h_input_tokens
        parts = {  # each part at the request's own tier and lifetime (llm.models.cost_usd)
            "read": Usage(cache_read_input_tokens=usage.cache_read_input_tokens),
            "write": Usage(
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
                cache_creation_1h_input_tokens=hour,
            ),
            "recall": Usage(input_tokens=min(recalled, uncached)),
            "other uncached": Usage(input_tokens=max(0, uncached - recalled)),
            "out": Usage(output_tokens=usage.output_tokens),
        }
        for part, tokens in zip(
            parts,
            (
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
                recalled,
                max(0, uncached - recalled),
                usage.output_tokens,
            ),
            strict=True,
        ):
            sums[f"{part} tok"] += tokens
            sums[f"{part} $"] += cost_usd(info, parts[part], usage.total_input)
    total = result.dollars
    lines = [f"{label}: ${total:.2f}, {chats} chat turns, {recall_turns} with recall"]
    for part in ("read", "write", "recall", "other uncached", "out"):
        lines.append(
            f"  {part:<15} {sums[part + ' tok'] / max(1, chats):>8,.0f} tok/turn "
            f"${sums[part + ' $']:.3f} ({100 * sums[part + ' $'] / total:.1f} %)"
        )
    for kind in ("summary", "compaction"):
        if sums[f"{kind} $"]:
            lines.append(
                f"  {kind:<15} in {sums[kind + ' in']:,} out {sums[kind + ' out']:,} "
                f"${sums[kind + ' $']:.3f} ({100 * sums[kind + ' $'] / total:.1f} %)"
            )
    return lines


def run(
    quick: bool, patterns: Sequence[str], names: Sequence[str], jobs: int, keep: str = ""
) -> list[str]:
    """``keep``: a path prefix; each default replay's database is copied to
    ``{keep}-{pattern}.db`` for ``benchmarks.past_budget_offline``."""
    from benchmarks.common import parallel_map
    from benchmarks.past_budget import (
        QUICK_SESSIONS,
        Job,
        budget_for,
        build_chat,
        dollar_tokens,
        measure,
        search_hits,
    )
    from tui_chat.config import DEFAULT_MODEL

    sessions = QUICK_SESSIONS if quick else None
    chat = build_chat(sessions, names)
    work = [
        Job(
            config,
            pattern,
            sessions,
            tuple(names),
            explain=config == "default",
            keep=f"{keep}-{pattern}.db" if keep and config == "default" else "",
        )
        for pattern in patterns
        for config in ("everything", "default")
    ]
    results = parallel_map(measure, work, jobs)
    lines = [f"budget {budget_for(chat):,}, {len(chat.questions)} questions"]
    for job, result in zip(work, results, strict=True):
        label = f"{job.config} {job.pattern}"
        lines += _bill_lines(result, label)
        if job.config != "default":
            continue
        lines.append(f"  evidence {result.tally.rate:.1f} %; {result.tally.categories_note()}")
        thirds = ", ".join(f"{100 * h / max(1, n):.1f} % ({n})" for h, n in result.thirds)
        lines.append(f"  by third (early, middle, late): {thirds}; {result.folds} folds")
        same = search_hits(chat, result.tokens)
        spend = dollar_tokens(result, DEFAULT_MODEL)
        dollars = search_hits(chat, [spend] * len(chat.questions))
        lines.append(
            f"  strong search same tokens ({same.mean_tokens / 1e3:.1f}k) {same.rate:.1f} % "
            f"({same.categories_note()}); same dollars ({spend / 1e3:.1f}k) {dollars.rate:.1f} "
            f"% ({dollars.categories_note()})"
        )
        reasons = Counter(reason for _, reason in result.misses)
        lines.append("  misses: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()))
        for number, name in CATEGORIES.items():
            own = Counter(r for c, r in result.misses if c == number)
            if own:
                lines.append(f"    {name}: " + ", ".join(f"{r} {n}" for r, n in own.most_common()))
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pattern", default="", help="warm or paused (default: both)")
    parser.add_argument("--conversations", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", default="", help="path prefix for the replayed databases")
    args = parser.parse_args(argv)
    patterns = [args.pattern] if args.pattern else ["warm", "paused"]
    names = [n for n in args.conversations.split(",") if n]
    for line in run(args.quick, patterns, names, args.jobs, args.keep):
        print(line)


if __name__ == "__main__":
    main()
