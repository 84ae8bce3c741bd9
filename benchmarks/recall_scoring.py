"""Recall's scoring of a past-budget build: the CPU time to rank a full pool of candidates.

``python -m benchmarks.recall_scoring [--questions N]``: for LoCoMo questions over the three
dev conversations, :func:`~tui_chat.core.request.recall.rank_passages` ranks a pool of 512
messages (a hop past the budget: :func:`~tui_chat.engine.build.recall.pool_size`) with the
query's stems and weights, as the user types it (each word typed is a build with one stem
more), then :func:`~tui_chat.core.request.recall.related_relevance` with the stems as their
own related words. Timed twice in the same run, alternating: with the stems matched word by
word (:mod:`tui_chat.core.request.stems`, as shipped) and with the whole-text regex scan it
replaced; the figure is their CPU-time ratio, and every ranking must be identical.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from benchmarks.common import LOCOMO_DIR
from benchmarks.locomo import load_dialogue
from tui_chat.core.models import Message
from tui_chat.core.request import recall
from tui_chat.core.request.recall import Passage, rank_passages, related_relevance
from tui_chat.core.tokens import get_counter
from tui_chat.store import fts

POOL = 512
TARGET = 2.0
"""Least speed-up of the scoring (old time / new time) this figure asks for."""


def _scan(text: str, stems: tuple[str, ...]) -> set[str]:
    """The replaced path: one regex scan of the whole text."""
    ordered = sorted(set(stems), key=len, reverse=True)
    pattern = _compiled(tuple(ordered))
    return {m.group(1).lower() for m in pattern.finditer(text)}


_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}


def _compiled(ordered: tuple[str, ...]) -> re.Pattern[str]:
    if ordered not in _PATTERNS:  # compiled once, as the shipped path does
        _PATTERNS[ordered] = re.compile(
            r"\b(" + "|".join(re.escape(s) for s in ordered) + r")\w*", re.I | re.U
        )
    return _PATTERNS[ordered]


@contextmanager
def _scanning() -> Iterator[None]:
    shipped = recall._found
    recall._found = _scan
    try:
        yield
    finally:
        recall._found = shipped


def _messages(name: str) -> list[Message]:
    counter = get_counter()
    dialogue = load_dialogue(LOCOMO_DIR / f"{name}.json")
    return [
        Message(
            id=i + 1,
            conversation_id=name,
            role=turn.role,
            content=[{"type": "text", "text": turn.text}],
            text=turn.text,
            turn=i + 1,
            token_count=counter.count(turn.text),
            status="complete",
            created_at=turn.created_at,
        )
        for i, turn in enumerate(dialogue.turns[:POOL])
    ]


def _builds(questions: int) -> list[tuple[list[Message], list[str]]]:
    """(pool, stems) per build: each question's stems as its words are typed."""
    out: list[tuple[list[Message], list[str]]] = []
    for name in ("conv-26", "conv-30", "conv-41"):
        pool = _messages(name)
        dialogue = load_dialogue(LOCOMO_DIR / f"{name}.json")
        for question in dialogue.questions[:questions]:
            stems = [fts.stem_prefix(w) or w for w in fts.recall_terms(question.text)]
            out.extend((pool, stems[:n]) for n in range(1, len(stems) + 1))
    return out


def _rank(builds: Sequence[tuple[list[Message], list[str]]]) -> list[list[Passage]]:
    counter = get_counter()
    text_of: Callable[[Message], str] = lambda m: m.text  # noqa: E731
    out: list[list[Passage]] = []
    for pool, stems in builds:
        scores = {m.id: 1.0 + (m.id % 7) for m in pool}
        weights = {s: 1.0 + len(s) / 4 for s in stems}
        links = {s[:-1] or s: (s, 0.5) for s in stems}
        ranked = rank_passages(pool, scores, stems, counter, text_of, weights)
        out.append(related_relevance(ranked, weights, links))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10, help="per conversation")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    builds = _builds(args.questions)
    _rank(builds[:2])  # token counter and imports warm for both
    new = old = 0.0
    for _ in range(args.rounds):
        from tui_chat.core.request import stems as shipped_stems

        shipped_stems._words.cache_clear()
        shipped_stems._matcher.cache_clear()
        start = time.process_time()
        fast = _rank(builds)
        new += time.process_time() - start
        _PATTERNS.clear()
        start = time.process_time()
        with _scanning():
            slow = _rank(builds)
        old += time.process_time() - start
        if fast != slow:
            raise SystemExit("rankings differ between the word-wise and the scanning path")
    ratio = old / new if new else float("inf")
    print(
        f"recall scoring, {len(builds)} builds of a {POOL}-message pool x {args.rounds}: "
        f"scan {old:.2f} s CPU, word-wise {new:.2f} s CPU, {ratio:.2f}x "
        f"(target >= {TARGET:.1f}x) {'ok' if ratio >= TARGET else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
