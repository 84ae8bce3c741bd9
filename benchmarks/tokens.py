"""Tokens: local counting throughput, the seeds' ``len/4`` estimate against tiktoken, and the
per-keystroke gauge with 100,000 tokens of context.

Text samples: English from ``../shared/DESIGN.md`` (the benchmark needs ``../shared``) and the
LoCoMo dialogues, Korean from the seed design documents (lines that are mostly Hangul), code
from tui-chat's own Python source.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    LOCOMO_DIR,
    ROOT,
    Options,
    Row,
    missing,
    open_offline,
    p50,
    percentile,
    row,
)
from benchmarks.datagen import TextMaker

GROUP = "tokens"
SHARED = ROOT.parent / "shared"
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def english_samples() -> list[str]:
    """Paragraphs of English prose and dialogue (none without ``../shared``)."""
    design = SHARED / "DESIGN.md"
    if not design.is_file():
        return []
    samples = [
        p.strip()
        for p in design.read_text(encoding="utf-8").split("\n\n")
        if len(p.strip()) > 80 and not p.lstrip().startswith(("|", "```", "#"))
    ]
    for path in sorted(LOCOMO_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in sorted(k for k in data if re.fullmatch(r"session_\d+", k)):
            samples += [turn["text"] for turn in data[key] if len(turn["text"]) > 40]
    return samples


def korean_samples(seeds: Path = SHARED / "seeds") -> list[str]:
    """Lines of the seed documents (``*.txt`` in ``seeds``) that are mostly Korean."""
    samples = []
    for path in sorted(seeds.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip(" #>-*|")
            letters = [c for c in text if c.isalpha()]
            hangul = sum(1 for c in letters if _HANGUL.match(c))
            if len(text) >= 20 and letters and hangul / len(letters) >= 0.7:
                samples.append(text)
    return samples


def code_samples() -> list[str]:
    """Top-level chunks (functions, classes) of tui-chat's Python source."""
    samples = []
    for path in sorted((ROOT / "tui_chat").rglob("*.py")):
        chunks = re.split(r"\n(?=def |class |async def )", path.read_text(encoding="utf-8"))
        samples += [c for c in chunks if len(c) > 80]
    return samples


def len4_error(samples: list[str]) -> tuple[float, float, int, int]:
    """``(total error %, mean absolute per-sample error %, tiktoken tokens, chars)``."""
    from tui_chat.core.tokens import get_counter, len4_estimate

    counter = get_counter()
    real = [counter.count(s) for s in samples]
    guess = [len4_estimate(s) for s in samples]
    total = (sum(guess) - sum(real)) / sum(real) * 100
    per_sample = [abs(g - r) / r * 100 for g, r in zip(guess, real, strict=True) if r]
    return total, sum(per_sample) / len(per_sample), sum(real), sum(len(s) for s in samples)


def throughput(samples: list[str], seconds: float) -> tuple[float, float]:
    """Tokens and characters per second counting strings never seen before (no cache hits)."""
    from tui_chat.core.tokens import TokenCounter

    counter = TokenCounter()
    tokens = chars = 0
    rounds = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        rounds += 1
        for sample in samples:
            text = f"{rounds} {sample}"  # a new string each round: measures counting, not the LRU
            tokens += counter.count(text)
            chars += len(text)
    elapsed = time.perf_counter() - started
    return tokens / elapsed, chars / elapsed


async def keystroke_gauge(context_tokens: int, draft: str) -> tuple[list[float], int]:
    """Time ``service.requests.gauge`` per keystroke while ``draft`` is typed, with a conversation
    holding ``context_tokens`` tokens; returns the samples (ms) and the context size."""
    from tui_chat.core.tokens import get_counter

    counter = get_counter()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gauge.db"
        service, store = await open_offline(db)
        try:
            conversation = await service.conversations.new("gauge")
            maker = TextMaker(random.Random(5))
            rows: list[dict[str, Any]] = []
            total = 0
            while total < context_tokens:
                role = "user" if len(rows) % 2 == 0 else "assistant"
                text = maker.user_text() if role == "user" else maker.assistant_text()
                content = [{"type": "text", "text": text}]
                tokens = counter.count_message(role, content)  # type: ignore[arg-type]
                rows.append({"role": role, "content": content, "text": text, "token_count": tokens})
                total += tokens
            await store.messages.add_many(conversation.id, rows)
            breakdown = await service.requests.gauge(conversation.id, "")
            samples: list[float] = []
            for end in range(1, len(draft) + 1):
                started = time.perf_counter()
                await service.requests.gauge(conversation.id, draft[:end])
                samples.append((time.perf_counter() - started) * 1000)
        finally:
            await service.close()
    return samples, breakdown.input_tokens


def run(options: Options) -> list[Row]:
    """Every tokens figure."""
    from tui_chat.core.tokens import get_counter

    get_counter()  # load the encoding outside the timings
    english, korean, code = english_samples(), korean_samples(), code_samples()
    rows: list[Row] = []
    tokens_per_s, chars_per_s = throughput(english + code, 1.0 if options.quick else 3.0)
    rows.append(
        row(
            GROUP,
            "local count throughput (tiktoken cl100k, uncached)",
            tokens_per_s / 1e6,
            "M tok/s",
            note=f"{chars_per_s / 1e6:.1f} M chars/s, "
            + ("English and code" if english else "code (../shared not found)"),
        )
    )
    for name, samples in (("English", english), ("Korean", korean), ("code", code)):
        if not samples:  # a plain clone without ../shared: said, never made up
            figure = f"len/4 estimate error vs tiktoken, {name}"
            rows.append(missing(GROUP, figure, "%", "../shared not found"))
            continue
        total, mean_abs, real, chars = len4_error(samples)
        rows.append(
            row(
                GROUP,
                f"len/4 estimate error vs tiktoken, {name}",
                total,
                "%",
                note=f"{len(samples)} samples, {chars / real:.2f} chars/token, "
                f"mean |error| per sample {mean_abs:.0f}%",
            )
        )
    draft = (
        "Could you look again at the migration plan we discussed, in particular the index on "
        "messages(conversation_id, id), and tell me whether the FTS rebuild can run while the "
        "app is open? Keep the answer short and list the exact commands."
    )
    keystrokes, context = asyncio.run(keystroke_gauge(100_000, draft))
    rows.append(
        row(
            GROUP,
            "draft count per keystroke p50 (ChatService.gauge)",
            p50(keystrokes),
            "ms",
            le=2,
            note=f"{len(keystrokes)} keystrokes at {context:,} tokens of context; "
            f"p95 {percentile(keystrokes, 95):.2f} ms",
        )
    )
    return rows
