"""Cost: an honest bill for a scripted 200-turn conversation, with the quality beside it.

Every configuration replays the same conversation (deterministic user messages and replies,
about 1,500 tokens a turn) through ``ChatService.send`` against ``tests/fakes/fake_anthropic.py``,
which reports usage the way the API does: prompt caching with the per-model minimum prefix,
the 20-block lookback and a 5-minute lifetime. The compaction worker runs as in the app and
finishes before the next turn; its calls are billed too.

- **Baseline**: the full history every turn, nothing cut and nothing summarized, with the
  same prompt caching (the ``window`` preset on the model's own 1M-token window, where no
  trigger is ever due). The run checks this: every chat request must hold every earlier
  message unchanged, and no summary or compaction call may have been made.
- **Configurations**: every preset with every summarizer, on the model's own window (the
  default model, Sonnet 5.5: 1M tokens), as a user gets them, plus the default preset with
  the other of the ``cost`` and ``tokens`` triggers, to show what its trigger is worth.
- **Every request is billed**: uncached input, cache writes, cache reads and output tokens,
  each request at the card of the model it names (``docs/models.md``: chat on Sonnet 5.5,
  whose reads are 0.05x of input; summaries on whatever model the summarizer used, Haiku
  5.5 with its long-prompt tier for a standalone one).
- **Cache expiry**: before each turn a virtual clock (the fake server's cache clock)
  advances by a pause drawn from a seeded mixture: 75 % "reading and typing", log-normal
  with a median of 50 s (sigma 0.9, capped at 30 min); 25 % "a break", uniform between 5
  and 60 minutes. About a quarter of the turns therefore find the cache cold.
- **Streaming**: the fake server sends each reply (and each summary) as a single text delta.
  How a stream is cut changes nothing that is billed or stored; at three words a delta the
  SDK spent a tenth of the replay parsing events.
- **Quick run** (``--quick``): 60 turns, the baseline and the default preset with each
  summarizer only (its other-trigger variants and the other presets are left out), no LoCoMo.
  Every configuration replays alone in a worker process of its own (``--jobs``): the bill of
  a replay depends only on the script, never on timing.
- **Quality beside the cost**: identifiers of the whole script found in the request the
  conversation would send next (same run), and the LoCoMo evidence-in-request rate of the
  same preset and summarizer at a 4,000-token usable window (``benchmarks/quality.py``'s
  measure, on one conversation; skipped with a note without ``../shared``). Summaries of the
  ``claude`` and ``server`` summarizers come from the fake server's deterministic summarizer
  here: their quality figures measure the pipeline, not Claude's writing.
"""

from __future__ import annotations

import asyncio
import math
import random
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.common import LOCOMO_DIR, Options, Row, missing, parallel_map, row
from benchmarks.datagen import TextMaker

GROUP = "cost"
TURNS = 200
QUICK_TURNS = 60
CHAT_MODEL = "claude-sonnet-5-5"
"""The default chat model (``tui_chat.config.DEFAULT_MODEL``)."""
SUMMARIZERS = ("extractive", "claude", "server")
TARGET_REDUCTION = 65.0
QUALITY_WINDOW = 4_000
QUALITY_CONVERSATION = "conv-30"
ONE_DELTA = 1 << 30
"""Words per stream delta for the fake server: every reply in one delta."""


@dataclass(frozen=True)
class Script:
    """The conversation every configuration replays, with the pause before each turn."""

    user: list[str]
    replies: list[str]
    pauses: list[float]


def pause_seconds(rng: random.Random) -> float:
    """One pause between turns (the distribution in the module docstring)."""
    if rng.random() < 0.75:
        return min(1_800.0, math.exp(rng.gauss(math.log(50.0), 0.9)))
    return rng.uniform(300.0, 3_600.0)


def script(turns: int = TURNS, seed: int = 42) -> Script:
    """Deterministic user messages (sometimes pasting code), replies and pauses."""
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
    timing = random.Random(seed + 1)
    return Script(user, replies, [pause_seconds(timing) for _ in range(turns)])


@dataclass
class Bill:
    """Tokens and dollars of one kind of request (chat, summary or compaction)."""

    requests: int = 0
    input: int = 0
    written: int = 0
    read: int = 0
    output: int = 0
    dollars: float = 0.0

    def add(self, usage: dict[str, Any], dollars: float) -> None:
        """Add one request's usage and price."""
        self.requests += 1
        self.input += int(usage.get("input_tokens", 0))
        self.written += int(usage.get("cache_creation_input_tokens", 0))
        self.read += int(usage.get("cache_read_input_tokens", 0))
        self.output += int(usage.get("output_tokens", 0))
        self.dollars += dollars


@dataclass
class Run:
    """What one configuration cost, and how good its context stayed."""

    bills: dict[str, Bill] = field(default_factory=dict)
    versions: int = 0
    cold_turns: int = 0
    identifiers_kept: float | None = None
    locomo_hits: float | None = None

    @property
    def dollars(self) -> float:
        """Total price of every request."""
        return sum(bill.dollars for bill in self.bills.values())

    def total(self, name: str) -> int:
        """A token column summed over every kind of request."""
        return sum(int(getattr(bill, name)) for bill in self.bills.values())


class VirtualClock:
    """The fake server's cache clock, advanced by the script's pauses."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _kind(request: Any) -> str:
    if request.is_compaction:
        return "compaction"
    return "summary" if request.is_summary else "chat"


def usage_of(raw: dict[str, Any] | None) -> Any:
    """A response's ``usage`` as the app's :class:`~tui_chat.core.models.Usage` (1-hour writes
    and fast mode included), for :func:`tui_chat.llm.models.cost_usd`."""
    from tui_chat.core.models import Usage

    usage: dict[str, Any] = raw or {}
    return Usage(
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),
        cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens", 0)),
        cache_read_input_tokens=int(usage.get("cache_read_input_tokens", 0)),
        cache_creation_1h_input_tokens=int(
            (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        ),
        speed="fast" if usage.get("speed") == "fast" else "",
    )


def _price(request: Any) -> float:
    from tui_chat.llm.models import cost_usd, model_info

    return cost_usd(model_info(str(request.body.get("model", ""))), usage_of(request.usage))


def _check_baseline(chats: Sequence[Any], turns: Script) -> None:
    """Refuse a baseline that cut, dropped or summarized anything."""
    for i, request in enumerate(chats):
        messages = request.body["messages"]
        if len(messages) != 2 * i + 1:
            raise RuntimeError(
                f"baseline turn {i + 1} sent {len(messages)} messages, not {2 * i + 1}"
            )
        for j in range(0, len(messages), 2):
            if turns.user[j // 2] not in _text(messages[j]):
                raise RuntimeError(f"baseline turn {i + 1} changed user message {j // 2 + 1}")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


@asynccontextmanager
async def replay_service(
    replies: Sequence[str],
    clock: VirtualClock,
    db: Path,
    stamps: Any = None,
    model: str = CHAT_MODEL,
) -> AsyncIterator[Any]:
    """The fake server on the replay's cache clock, answering each chat request with the
    next of ``replies``, and a ``ChatService`` on ``db`` talking to it; yields the server
    (its ``message_requests`` stay readable afterwards) and the service. ``stamps``: the
    store's clock (:class:`tui_chat.core.clock.Clock`; the system's by default)."""
    from tests.fakes.fake_anthropic import FakeAnthropic
    from tui_chat.config import Config
    from tui_chat.engine.service import ChatService

    answers = iter(replies)
    with FakeAnthropic() as server:
        server.clock = clock
        server.reply_text = lambda _body: next(answers)
        server.words_per_chunk = ONE_DELTA
        config = Config(
            db_path=db,
            api_key="sk-ant-bench-0000",
            base_url=server.base_url,
            max_retries=0,
            model=model,
        )
        if stamps is None:
            service = await ChatService.open(config, db)
        else:
            service = await ChatService.open(config, db, clock=stamps)
        try:
            yield server, service
        finally:
            await service.close()


async def replay(settings: dict[str, str], turns: Script, work: Path, baseline: bool) -> Run:
    """Replay the script under ``settings`` and bill every request the server saw."""
    from benchmarks.locomo import request_text
    from tui_chat.core.identifiers import retention

    clock = VirtualClock()
    run = Run()
    db = work / f"cost-{len(list(work.iterdir()))}.db"
    async with replay_service(turns.replies, clock, db) as (server, service):
        conversation = await service.conversations.new("cost")
        for key, value in settings.items():
            await service.conversations.set_setting(conversation.id, key, value)
        for text, pause in zip(turns.user, turns.pauses, strict=True):
            clock.now += pause
            outcome = await service.send(conversation.id, text)
            if outcome.error is not None:
                raise RuntimeError(f"send failed: {outcome.error}")
            await service.finish_background()
        run.versions = len(
            [
                s
                for s in await service.summaries.versions(conversation.id)
                if s.status == "completed"
            ]
        )
        final = await service.requests.context(conversation.id, "What did we decide so far?")
        kept, total = retention(turns.user + turns.replies, request_text(final.request))
        run.identifiers_kept = 100.0 * kept / total if total else None
    chats = [r for r in server.message_requests if _kind(r) == "chat"]
    for request in server.message_requests:
        run.bills.setdefault(_kind(request), Bill()).add(request.usage or {}, _price(request))
    run.cold_turns = sum(1 for r in chats if not (r.usage or {}).get("cache_read_input_tokens"))
    if baseline:
        _check_baseline(chats, turns)
        if len(chats) != len(server.message_requests):
            raise RuntimeError("the baseline made summary or compaction calls")
    return run


async def locomo_hit_rate(settings: dict[str, str], work: Path) -> float | None:
    """Evidence-in-request % on one LoCoMo conversation at a 4k usable window, compacted
    with the same preset and summarizer through the fake server."""
    from benchmarks.locomo import context_window_for, export_file, is_hit, load_dialogue
    from tests.fakes.fake_anthropic import FakeAnthropic
    from tui_chat.config import Config
    from tui_chat.engine.service import ChatService, CompactionError

    path = LOCOMO_DIR / f"{QUALITY_CONVERSATION}.json"
    if not path.exists():
        return None
    dialogue = load_dialogue(path)
    texts = {t.dia_id: t.original for t in dialogue.turns}
    with FakeAnthropic() as server:
        server.words_per_chunk = ONE_DELTA
        db = work / f"quality-{len(list(work.iterdir()))}.db"
        config = Config(
            db_path=db, api_key="sk-ant-bench-0000", base_url=server.base_url, max_retries=0
        )
        service = await ChatService.open(config, db)
        try:
            conversation = await service.transfer.import_file(
                export_file(dialogue, db.with_suffix(".json"))
            )
            cid = conversation.id
            for key, value in settings.items():
                if key != "context_window":
                    await service.conversations.set_setting(cid, key, value)
            await service.conversations.set_setting(
                cid, "context_window", str(context_window_for(QUALITY_WINDOW))
            )
            with_summary = True
            while with_summary:
                try:
                    await service.summaries.compact(cid)
                except CompactionError:
                    with_summary = False
            hits = 0
            for question in dialogue.questions:
                built = await service.requests.context(cid, question.text)
                hits += is_hit(built.request, (texts[e] for e in question.evidence))
        finally:
            await service.close()
    return 100.0 * hits / len(dialogue.questions) if dialogue.questions else None


def configurations(
    presets: Sequence[str], summarizers: Sequence[str], other_trigger: bool = True
) -> dict[str, dict[str, str]]:
    """Settings of every configuration: the baseline, then each preset with each summarizer
    (and, with ``other_trigger``, the default preset with the other of the ``cost`` and
    ``tokens`` triggers too)."""
    from tui_chat.core.presets import DEFAULT_PRESET, PRESETS

    configs = {"baseline": {"preset": "window", "summarizer": "extractive"}}
    for preset in presets:
        for summarizer in summarizers:
            configs[f"{preset} + {summarizer}"] = {"preset": preset, "summarizer": summarizer}
            if preset == DEFAULT_PRESET and other_trigger:
                other = "tokens" if PRESETS[preset].trigger == "cost" else "cost"
                configs[f"{preset} ({other} trigger) + {summarizer}"] = {
                    "preset": preset,
                    "summarizer": summarizer,
                    "trigger": other,
                }
    return configs


@dataclass(frozen=True)
class Job:
    """One configuration to measure (what a worker process needs)."""

    settings: dict[str, str]
    turns: int
    baseline: bool
    locomo: bool
    """Also measure the LoCoMo evidence rate of these settings."""


def measure(job: Job) -> Run:
    """Replay the script under one configuration (and its LoCoMo rate, if asked)."""
    turns = script(job.turns)
    with tempfile.TemporaryDirectory() as tmp:
        run = asyncio.run(replay(job.settings, turns, Path(tmp), job.baseline))
        if job.locomo:
            run.locomo_hits = asyncio.run(locomo_hit_rate(job.settings, Path(tmp)))
    return run


def _note(run: Run, turns: int) -> str:
    parts = [
        f"{kind} {bill.requests} req ${bill.dollars:.2f}"
        for kind, bill in sorted(run.bills.items())
    ]
    quality = [
        f"ids in request {run.identifiers_kept:.0f}%" if run.identifiers_kept is not None else "",
        f"LoCoMo {run.locomo_hits:.1f}%" if run.locomo_hits is not None else "",
    ]
    return (
        f"{turns} turns, {run.versions} versions, {run.cold_turns} turns with no cache read; "
        f"in {run.total('input') / 1e3:,.0f}k, write {run.total('written') / 1e3:,.0f}k, "
        f"read {run.total('read') / 1e3:,.0f}k, out {run.total('output') / 1e3:,.0f}k; "
        + "; ".join(parts)
        + ("; " + ", ".join(q for q in quality if q) if any(quality) else "")
    )


def run(options: Options) -> list[Row]:
    """Every cost figure, with the quality of the same configuration beside it."""
    from tui_chat.core.presets import DEFAULT_PRESET, PRESETS

    count = QUICK_TURNS if options.quick else TURNS
    turns = script(count)
    presets = [DEFAULT_PRESET] if options.quick else list(PRESETS)
    configs = configurations(presets, SUMMARIZERS, other_trigger=not options.quick)
    # A configuration with the baseline's very settings (``window + extractive``) is the
    # baseline's replay: it runs once, checked as the baseline, with the LoCoMo rate beside it.
    twins = [n for n, s in configs.items() if n != "baseline" and s == configs["baseline"]]
    jobs = {
        name: Job(
            settings,
            count,
            baseline=name == "baseline",
            locomo=(name != "baseline" or bool(twins)) and not options.quick,
        )
        for name, settings in configs.items()
        if name not in twins
    }
    runs = dict(zip(jobs, parallel_map(measure, jobs.values(), options.jobs), strict=True))
    for twin in twins:
        runs[twin] = runs["baseline"]
    runs["baseline"] = replace(runs["baseline"], locomo_hits=None)
    runs = {name: runs[name] for name in configs}
    base = runs["baseline"]
    rows = [
        row(
            GROUP,
            "baseline (full history, nothing cut or summarized)",
            base.dollars,
            "$",
            ratio=1.0,
            note=_note(base, len(turns.user)),
        ),
    ]
    for name, result in runs.items():
        if name == "baseline":
            continue
        rows.append(
            row(
                GROUP,
                f"{name}",
                result.dollars,
                "$",
                ratio=result.dollars / base.dollars,
                note=("the baseline's replay (same settings); " if name in twins else "")
                + _note(result, len(turns.user)),
            )
        )
    default = runs.get(f"{DEFAULT_PRESET} + claude")
    if default is None:
        rows.append(missing(GROUP, "default preset + claude below the baseline", "%", "not run"))
    else:
        rows.append(
            row(
                GROUP,
                f"{DEFAULT_PRESET} (default) + claude below the baseline, dollars",
                100 * (1 - default.dollars / base.dollars),
                "%",
                ge=TARGET_REDUCTION,
            )
        )
    if not LOCOMO_DIR.exists():
        rows.append(missing(GROUP, "LoCoMo quality beside the cost", "%", "../shared not found"))
    return rows
