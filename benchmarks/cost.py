"""Cost: a scripted 200-turn conversation through the local Anthropic-compatible server.

Every configuration replays the same conversation (deterministic user messages and replies,
about 1,500 tokens a turn, so 200 turns hold several times seed 002's 100,000-token context)
through ``ChatService.send`` against ``tests/fake_anthropic.py``, which reports usage the way
the API does, prompt caching included (per-model minimum cacheable prefix: 1,024 tokens for
Sonnet). The compaction worker runs as in the app, with Claude summaries through the same
server, and finishes before the next turn is sent; its summary calls are billed too.

Billed input is counted in token-equivalents: uncached input 1x, cache writes 1.25x, cache
reads 0.1x. "No caching" bills the same requests' whole input at 1x. The presets run with a
100,000-token context window (seed 002's ``max_context_tokens``); "no compaction" sends the
whole history every turn (1M-token window, compaction never due).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import Options, Row, row
from benchmarks.datagen import TextMaker

GROUP = "cost"
TURNS = 200
QUICK_TURNS = 100
PRESET_WINDOW = 100_000
DEFAULT_PRESET = "window"
TARGET_REDUCTION = 65.0
WRITE, READ = 1.25, 0.1


@dataclass(frozen=True)
class Script:
    """The conversation every configuration replays."""

    user: list[str]
    replies: list[str]


def script(turns: int = TURNS, seed: int = 42) -> Script:
    """Deterministic user messages (sometimes pasting code) and assistant replies."""
    rng = random.Random(seed)
    maker = TextMaker(rng)
    user, replies = [], []
    for _ in range(turns):
        text = maker.paragraph(rng.randint(3, 8))
        if rng.random() < 0.5:  # pasted code or logs
            text += "\n\n" + "\n\n".join(maker.code() for _ in range(rng.randint(3, 8)))
        user.append(text)
        parts = [maker.paragraph(rng.randint(5, 10)) for _ in range(rng.randint(5, 9))]
        if rng.random() < 0.5:
            parts.insert(2, maker.code())
        replies.append("\n\n".join(parts))
    return Script(user, replies)


@dataclass
class Bill:
    """Usage summed over the requests of one configuration."""

    uncached: int = 0
    written: int = 0
    read: int = 0
    summary_input: int = 0
    chat_requests: int = 0
    summary_requests: int = 0

    @property
    def billed(self) -> float:
        """Token-equivalents with prompt caching."""
        return self.uncached + WRITE * self.written + READ * self.read

    @property
    def uncached_total(self) -> int:
        """Token-equivalents if nothing were cached (every input token at 1x)."""
        return self.uncached + self.written + self.read


async def replay(settings: dict[str, str], turns: Script, work: Path) -> tuple[Bill, int]:
    """Replay the script under ``settings``; returns the bill and the versions made."""
    from tests.fake_anthropic import FakeAnthropic
    from tui_chat.config import Config
    from tui_chat.engine.service import ChatService

    replies = iter(turns.replies)
    with FakeAnthropic() as server:
        server.reply_text = lambda _body: next(replies)
        db = work / f"cost-{len(list(work.iterdir()))}.db"
        config = Config(
            db_path=db, api_key="sk-ant-bench-0000", base_url=server.base_url, max_retries=0
        )
        service = await ChatService.open(config, db)
        try:
            conversation = await service.new_conversation("cost")
            for key, value in settings.items():
                await service.set_setting(conversation.id, key, value)
            for text in turns.user:
                outcome = await service.send(conversation.id, text)
                if outcome.error is not None:
                    raise RuntimeError(f"send failed: {outcome.error}")
                await service.finish_background()
            versions = len(
                [s for s in await service.summaries(conversation.id) if s.status == "completed"]
            )
        finally:
            await service.close()
        bill = Bill()
        for request in server.message_requests:
            usage: dict[str, Any] = request.usage or {}
            bill.uncached += int(usage.get("input_tokens", 0))
            bill.written += int(usage.get("cache_creation_input_tokens", 0))
            bill.read += int(usage.get("cache_read_input_tokens", 0))
            if request.is_summary:
                bill.summary_requests += 1
                bill.summary_input += sum(
                    int(usage.get(k, 0))
                    for k in (
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    )
                )
            else:
                bill.chat_requests += 1
    return bill, versions


def configurations(presets: Sequence[str]) -> dict[str, dict[str, str]]:
    """Settings of every configuration: each preset, and no compaction."""
    configs = {name: {"preset": name, "context_window": str(PRESET_WINDOW)} for name in presets}
    # Compaction never due: a token threshold beyond anything the script reaches, 1M window.
    configs["no compaction"] = {"preset": "threshold", "threshold_tokens": "10000000"}
    return configs


def run(options: Options) -> list[Row]:
    """Every cost figure."""
    from tui_chat.core.presets import PRESETS

    turns = script(QUICK_TURNS if options.quick else TURNS)
    presets = [DEFAULT_PRESET] if options.quick else list(PRESETS)
    bills: dict[str, tuple[Bill, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, settings in configurations(presets).items():
            bills[name] = asyncio.run(replay(settings, turns, Path(tmp)))
    baseline = bills["no compaction"][0]
    rows: list[Row] = []
    for name, (bill, versions) in bills.items():
        label = "no compaction (baseline)" if name == "no compaction" else f"{name} preset"
        rows.append(
            row(
                GROUP,
                f"billed input, {label}",
                bill.billed / 1000,
                "k tok-eq",
                ratio=bill.billed / baseline.billed,
                note=f"{len(turns.user)} turns, {versions} summary versions, "
                f"{bill.summary_requests} summary calls ({bill.summary_input / 1000:,.0f}k input); "
                f"written {bill.written / 1000:,.0f}k, read {bill.read / 1000:,.0f}k, "
                f"uncached {bill.uncached / 1000:,.0f}k",
            )
        )
        rows.append(
            row(
                GROUP,
                f"billed input without caching, {label}",
                bill.uncached_total / 1000,
                "k tok-eq",
                ratio=bill.uncached_total / baseline.billed,
                note=f"caching saves {100 * (1 - bill.billed / bill.uncached_total):.0f}%",
            )
        )
    default = bills[DEFAULT_PRESET][0]
    rows.append(
        row(
            GROUP,
            f"{DEFAULT_PRESET} (default) preset below no compaction",
            100 * (1 - default.billed / baseline.billed),
            "%",
            ge=TARGET_REDUCTION,
        )
    )
    return rows
