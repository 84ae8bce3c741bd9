"""Large tool results in a coding chat: what cutting them first does to the tokens and the
evidence a request carries.

A generated coding chat (the prompts and replies of ``benchmarks/coding.py``) in which every
other turn reads a source file through a tool: a prompt, a reply calling ``files__read_file``,
the result (a file of :data:`FILE_LINES` numbered lines, about 4,000 tokens, holding its own
order id, timeout figure and handler name, which no message repeats), and a short reply. The
chat is stored message by message through the engine's store, the compaction worker is asked
after each turn what the default preset's ``budget`` trigger says (the offline extractive
summarizer folds), and the request the next prompt would make is built
(``service.requests.context``).

Two arms on the same chat: ``cut`` (tui-chat now: over the budget the older large results are
cut to their head, a marker and the identifiers they held, before anything is folded) and
``whole`` (the rule switched off: :data:`tui_chat.core.request.shrink.LARGE_CHARS` raised past
any result, so results are only clipped to 40,000 characters and the budget folds turns).

Figures per arm: the folds made, the mean and the total input tokens of the requests built
over the chat (what is sent, before any cache), and the evidence at the end: for each file
read, a question naming its path ("what is the order id in src/app/x.py?") is put as a draft
and the request is a hit when it holds the file's order id, timeout and handler (all three),
for the older half of the reads and the newer half.

Usage::

    python -m benchmarks.tool_results [--quick]

``--quick``: 24 turns at a 30,000-token budget instead of 80 turns at the default 100,000.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.coding import generate

FILE_LINES = 420
"""Lines of each file read (about 16,000 characters, 4,000 tokens)."""
TURNS, BUDGET = 80, 100_000
QUICK_TURNS, QUICK_BUDGET = 24, 30_000


@dataclass(frozen=True)
class Read:
    """One file read: its path and the three facts only its result holds."""

    path: str
    order: str
    timeout: str
    handler: str


@dataclass
class Arm:
    """What one arm measured."""

    name: str
    folds: int = 0
    requests: int = 0
    tokens: int = 0
    hits_old: int = 0
    hits_new: int = 0
    reads_old: int = 0
    reads_new: int = 0
    final: int = 0


def _file(read: Read, rng: random.Random) -> str:
    """The text a file-reading tool returns for ``read``."""
    lines = [
        f"{i:>5}  total = step(total, {rng.randint(1, 999)}) + offset_{rng.randint(1, 99)}"
        for i in range(FILE_LINES)
    ]
    at = rng.randint(FILE_LINES // 4, FILE_LINES - 10)
    lines[at] = f"{at:>5}  ORDER_ID = '{read.order}'"
    lines[at + 3] = f"{at + 3:>5}  TIMEOUT_MS = {read.timeout}"
    lines[at + 6] = f"{at + 6:>5}  def {read.handler}(request):"
    return f"# {read.path}\n" + "\n".join(lines)


def _reads(count: int) -> list[Read]:
    rng = random.Random(11)
    return [
        Read(
            path=f"src/app/{rng.choice(('api', 'db', 'workers', 'billing'))}/module_{i:02d}.py",
            order=f"ORD-{rng.randint(1000, 9999)}-{i:02d}",
            timeout=str(rng.randint(1000, 9000) * 10 + i),
            handler=f"handle_{rng.choice(('refund', 'sync', 'audit', 'quota'))}_{i:02d}",
        )
        for i in range(count)
    ]


async def _store_turn(store: Any, counter: Any, cid: str, blocks: list[list[Any]]) -> None:
    from tui_chat.core.blocks import content_text
    from tui_chat.core.request.clip import clean_blocks

    roles = ("user", "assistant")
    for index, content in enumerate(blocks):
        role = roles[index % 2]
        await store.messages.add(
            cid,
            role=role,
            content=content,
            text=content_text(content),
            token_count=counter.count_message(role, clean_blocks(content)),
        )


async def _arm(name: str, turns: int, budget: int, work: Path) -> Arm:
    from tui_chat.config import Config
    from tui_chat.engine.parts import EngineParts
    from tui_chat.engine.service import ChatService

    db = work / f"{name}.db"
    config = Config(db_path=db, api_key=None)
    parts = await EngineParts.open(config, db)
    service = ChatService(config, parts)
    arm = Arm(name)
    chat = generate(turns)
    reads = _reads(turns // 2)
    rng = random.Random(5)
    try:
        cid = (await service.conversations.new("Coding with tools")).id
        await service.conversations.set_setting(cid, "summarizer", "extractive")
        await service.conversations.set_setting(cid, "budget", str(budget))
        for turn in range(turns):
            if turn % 2:
                read = reads[turn // 2]
                use = {"type": "tool_use", "id": f"toolu_{turn:03d}", "name": "files__read_file"}
                use["input"] = {"path": read.path}
                result = {"type": "tool_result", "tool_use_id": use["id"]}
                result["content"] = [{"type": "text", "text": _file(read, rng)}]
                prompt = f"Read {read.path} and tell me what it is for."
                blocks = [
                    [{"type": "text", "text": prompt}],
                    [{"type": "text", "text": f"Reading {read.path}."}, use],
                    [result],
                    [{"type": "text", "text": "It is one of the request handlers."}],
                ]
            else:
                _, user, _ = chat.messages[turn * 2]
                _, reply, _ = chat.messages[turn * 2 + 1]
                blocks = [[{"type": "text", "text": user}], [{"type": "text", "text": reply}]]
            await _store_turn(parts.store, parts.counter, cid, blocks)
            if await parts.worker.maybe_compact(cid) is not None:
                arm.folds += 1
            built = await service.requests.context(cid, "What should we look at next?")
            arm.requests += 1
            arm.tokens += built.breakdown.input_tokens
        arm.final = built.breakdown.input_tokens
        half = len(reads) // 2
        for index, read in enumerate(reads):
            draft = f"What is the order id, the timeout and the handler in {read.path}?"
            built = await service.requests.context(cid, draft)
            sent = str(built.request)
            hit = all(fact in sent for fact in (read.order, read.timeout, read.handler))
            if index < half:
                arm.reads_old += 1
                arm.hits_old += hit
            else:
                arm.reads_new += 1
                arm.hits_new += hit
    finally:
        await service.close()
    return arm


def measure(quick: bool) -> list[Arm]:
    """Both arms on the same chat (the ``whole`` arm with the cutting rule switched off)."""
    from tui_chat.core.request import shrink

    turns, budget = (QUICK_TURNS, QUICK_BUDGET) if quick else (TURNS, BUDGET)
    arms = []
    with tempfile.TemporaryDirectory() as tmp:
        arms.append(asyncio.run(_arm("cut", turns, budget, Path(tmp))))
        large = shrink.LARGE_CHARS
        shrink.LARGE_CHARS = 10**12
        try:
            arms.append(asyncio.run(_arm("whole", turns, budget, Path(tmp))))
        finally:
            shrink.LARGE_CHARS = large
    return arms


def _pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:.0f} % ({hits}/{total})" if total else "-"


def main(argv: Sequence[str] | None = None) -> None:
    """Print one line per arm."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    for arm in measure(args.quick):
        mean = arm.tokens // max(1, arm.requests)
        print(
            f"{arm.name:5}  folds {arm.folds:2}  mean request {mean:,} tokens  "
            f"total {arm.tokens:,}  last {arm.final:,}  evidence older reads "
            f"{_pct(arm.hits_old, arm.reads_old)}  newer {_pct(arm.hits_new, arm.reads_new)}"
        )


if __name__ == "__main__":
    main()
