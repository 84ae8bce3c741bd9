"""Scale: request build, send overhead, search, conversation list and memory on a big database.

The database (``datagen``) holds 1,000 conversations and 200,000 messages (``--quick``: 200
and 30,000). The big conversation holds 100,000 (20,000) messages, the baseline one 1,000;
both have an active summary leaving their newest 800 messages unsummarised, as the app leaves
a long conversation. They send the same raw tail, so the ratio shows what 99,000 more
messages of history cost: the recall search runs over 99,200 instead of 200 compacted ones.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.common import (
    ROOT,
    Options,
    Row,
    die_with_parent,
    missing,
    p50,
    percentile,
    row,
    time_async,
)
from benchmarks.datagen import FULL, QUICK, ScaleDb, TextMaker, scale_db

GROUP = "scale"
_T = TypeVar("_T")
DRAFTS = 24


def drafts(count: int = DRAFTS, seed: int = 7) -> list[str]:
    """Deterministic user messages to build requests for (each one a different recall query)."""
    maker = TextMaker(random.Random(seed))
    return [maker.user_text() for _ in range(count)]


def _config(db: Path, **overrides: Any) -> Any:
    from tui_chat.config import Config

    values: dict[str, Any] = {"db_path": db, "api_key": None}
    values.update(overrides)
    return Config(**values)


async def _build_figures(data: ScaleDb, runs: int, db: Path) -> list[Row]:
    from tui_chat.engine.service import ChatService

    service = await ChatService.open(_config(db), db)
    texts = drafts()
    rows: list[Row] = []
    try:
        results: dict[str, float] = {}
        for label, cid in (("1k", data.medium_id), ("big", data.big_id)):
            index = 0

            async def build(cid: str = cid) -> None:
                nonlocal index
                index += 1
                await service.requests.context(cid, texts[index % len(texts)])

            results[label] = p50(await time_async(build, runs))
            if label == "big":  # the event loop's stalls while more such builds run
                stalls, _ = await _stalls(partial(time_async, build, runs, 0))
        big = data.spec.big
        ratio = results["big"] / results["1k"]
        rows.append(
            row(
                GROUP,
                f"request build p50, {data.spec.medium:,}-message conversation (baseline)",
                results["1k"],
                "ms",
                le=10,
            )
        )
        rows.append(
            row(
                GROUP,
                f"request build p50, {big:,}-message conversation",
                results["big"],
                "ms",
                le=10,
                ratio=ratio,
            )
        )
        rows.append(row(GROUP, f"request build ratio {big:,} / 1,000", ratio, "x", le=1.5))
        rows.append(
            row(
                GROUP,
                f"event loop's p99 stall while building, {big:,}-message conversation",
                percentile(stalls, 99),
                "ms",
                le=50,
                note=f"longest {max(stalls):.0f} ms (keys typed meanwhile wait this long)",
            )
        )
        rows += await _unsummarised_figures(service, data, texts)

        queries = [" ".join(t.split()[:2]) for t in texts]
        index = 0

        async def search() -> None:
            nonlocal index
            index += 1
            await service.messages.search(queries[index % len(queries)])

        samples = await time_async(search, runs)
        rows.append(
            row(
                GROUP,
                f"FTS search p50 over {data.spec.messages:,} messages",
                p50(samples),
                "ms",
                le=50,
            )
        )
        samples = await time_async(service.conversations.list, max(5, runs // 2))
        rows.append(
            row(
                GROUP,
                f"conversation list p50 ({data.spec.conversations:,} conversations)",
                p50(samples),
                "ms",
                le=50,
            )
        )
    finally:
        await service.close()
    return rows


async def _unsummarised_figures(service: Any, data: ScaleDb, texts: list[str]) -> list[Row]:
    """Request build for conversations with no summary at all (imported, never compacted).

    The 1k and the big conversation have their summary rolled back (on this copy); the
    ``ten`` one never had one. With nothing compacted the builder reads the newest messages
    up to the model's usable window (1M tokens): the first build in a fresh process loads
    them, later ones reuse what the store cached.
    """
    await service.summaries.activate(data.medium_id, 0)
    await service.summaries.activate(data.big_id, 0)
    sizes = [(data.spec.medium, data.medium_id)]
    if data.ten_id is not None:
        sizes.append((data.spec.ten, data.ten_id))
    sizes.append((data.spec.big, data.big_id))
    rows: list[Row] = []
    first: dict[int, float] = {}
    warm: dict[int, float] = {}
    for size, cid in sizes:
        start = time.perf_counter()
        built = await service.requests.context(cid, texts[0])
        first[size] = (time.perf_counter() - start) * 1000
        index = 0

        async def build(cid: str = cid) -> None:
            nonlocal index
            index += 1
            await service.requests.context(cid, texts[index % len(texts)])

        warm[size] = p50(await time_async(build, 5, warmup=1))
        base = size == data.spec.medium
        label = f"request build p50, {size:,} messages, no summary"
        label += " (baseline)" if base else ""
        rows.append(
            row(
                GROUP,
                label,
                warm[size],
                "ms",
                ratio=None if base else warm[size] / warm[data.spec.medium],
                note=f"{len(built.sent_message_ids):,} messages sent, "
                f"{built.breakdown.input_tokens:,} tokens; first build {first[size]:.0f} ms",
            )
        )
    big = data.spec.big
    ratio = warm[big] / warm[data.spec.medium]
    rows.append(row(GROUP, f"request build ratio {big:,} / 1,000, no summary", ratio, "x", le=2))
    rows.append(
        row(
            GROUP,
            f"first request build ratio {big:,} / 1,000, no summary (first build, cold cache)",
            first[big] / first[data.spec.medium],
            "x",
            note=f"{first[data.spec.medium]:.0f} ms vs {first[big]:.0f} ms",
        )
    )
    await service.summaries.activate(data.medium_id, 1)
    await service.summaries.activate(data.big_id, 1)
    return rows


async def _stalls(work: Callable[[], Awaitable[_T]]) -> tuple[list[float], _T]:
    """The gaps (ms) between the wakes of a 2 ms ticker on the event loop while ``work`` runs
    beside it: how long a key typed meanwhile would wait to be read."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.002)
            now = time.perf_counter()
            gaps.append((now - last) * 1000)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        result = await work()
    finally:
        done.set()
        await ticker
    return gaps or [0.0], result


def _start_server() -> tuple[subprocess.Popen[str], str]:
    """The fake API in its own process (no GIL shared with the measured client)."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fakes" / "fake_anthropic.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=die_with_parent,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        server.kill()
        raise RuntimeError("the fake API server did not start")
    return server, url


async def _send_figures(data: ScaleDb, runs: int, db: Path) -> list[Row]:
    """Submit → request on the wire, against a zero-latency local server."""
    from tui_chat.engine.service import ChatService

    server, url = _start_server()
    rows: list[Row] = []
    service = await ChatService.open(
        _config(db, api_key="sk-ant-bench-0000", base_url=url, max_retries=0), db
    )
    try:
        texts = drafts(seed=11)
        for label, cid in (("1k", data.medium_id), ("big", data.big_id)):
            wire: list[float] = []

            def on_request(_request: Any, wire: list[float] = wire) -> None:
                wire.append(time.perf_counter())

            async def hook(request: Any, on_request: Any = on_request) -> None:
                on_request(request)

            await service.send(cid, "warm up the connection")
            await service.finish_background()
            http = (await service._client._sdk())._client  # the SDK's httpx client
            http.event_hooks = {"request": [hook], "response": []}
            samples: list[float] = []
            for i in range(runs):
                wire.clear()
                start = time.perf_counter()
                outcome = await service.send(cid, texts[i % len(texts)])
                if outcome.error is not None or not wire:
                    raise RuntimeError(f"send failed: {outcome.error}")
                samples.append((wire[0] - start) * 1000)
                await service.finish_background()
            name = "1,000" if label == "1k" else f"{data.spec.big:,}"
            rows.append(
                row(
                    GROUP,
                    f"send overhead p50, submit to request on the wire ({name} messages)",
                    p50(samples),
                    "ms",
                    le=20,
                    note=f"p95 {percentile(samples, 95):.1f} ms",
                )
            )
    finally:
        await service.close()
        server.terminate()
        server.wait(timeout=10)
    return rows


async def _load(db: Path, cid: str) -> dict[str, Any]:
    """Open the database and load the big conversation as the app does; report peak RSS."""
    from benchmarks.common import peak_rss_mb
    from tui_chat.engine.service import ChatService

    before = peak_rss_mb()
    service = await ChatService.open(_config(db), db)
    try:
        await service.conversations.list()
        conversation = await service.conversations.resolve(cid)
        await service.messages.page(conversation.id, limit=200)
        await service.requests.context(conversation.id, "what did we decide about the index?")
        await service.requests.gauge(conversation.id, "what did we decide")
        await service.summaries.versions(conversation.id)
        await service.messages.search("index latency")
    finally:
        await service.close()
    return {"peak_rss_mb": peak_rss_mb(), "before_mb": before}


def _rss_figure(data: ScaleDb) -> Row:
    figure = "peak RSS, big database open and the big conversation loaded"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.scale", "rss", str(data.path), data.big_id],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        return missing(GROUP, figure, "MB", f"failed: {done.stderr.strip()[-200:]}", le=250)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return row(
        GROUP,
        figure,
        result["peak_rss_mb"],
        "MB",
        le=250,
        note=f"interpreter and imports alone: {result['before_mb']:.0f} MB",
    )


def run(options: Options) -> list[Row]:
    """Every scale figure."""
    spec = QUICK if options.quick else FULL
    started = time.perf_counter()
    data = scale_db(options.data_dir, spec)
    made = time.perf_counter() - started
    rows = [
        row(
            GROUP,
            f"generate {spec.conversations:,} conversations / {spec.messages:,} messages (info)",
            made,
            "s",
            note="bulk SQL inserts with the app's schema and FTS triggers (0 = cached)",
        )
    ]
    runs = 30 if options.quick else 100
    work = options.data_dir / f"work-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        # Sends and rollbacks write: they run on a copy, the cached database stays as made.
        db = work / "scale.db"
        shutil.copyfile(data.path, db)
        rows += asyncio.run(_build_figures(data, runs, db))
        rows += asyncio.run(_send_figures(data, 15 if options.quick else 40, db))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows.append(_rss_figure(data))
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "rss":
        print(json.dumps(asyncio.run(_load(Path(sys.argv[2]), sys.argv[3]))))
