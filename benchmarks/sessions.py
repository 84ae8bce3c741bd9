"""Sessions that look like use: what the default costs and keeps at the model's real window.

Each session is replayed as a chat through ``ChatService.send`` against
``tests/fakes/fake_anthropic.py`` (prompt caching with TTLs, every request billed at its model's
prices, 1-hour writes at 2x), once per pattern and configuration:

- **Sessions.** Each dev LoCoMo conversation as a chat: speaker A's lines are the prompts,
  speaker B's the replies (runs of one speaker joined), sessions at their real dates. The
  generated 200-turn coding session (``benchmarks/coding.py``). The scripted 200-turn session
  of ``benchmarks/cost.py``. The generated long session (``benchmarks/long_session.py``): 648
  exchanges over 18 days, over four times the default budget, with planted facts that later
  prompts come back to.
- **Patterns.** ``warm``: every prompt follows its reply at once (the cache never expires).
  ``paused``: the pause model of ``cost.py`` before each prompt (75 % about 50 s, 25 % 5-60
  min) and, for LoCoMo, the real gap (days) before a session's first prompt.
- **Configurations.** Sending everything (the ``window`` preset on the 1M-token window:
  nothing is ever folded), the default preset and each seed preset, as a user gets them (the
  ``claude`` summarizer: the fake server's deterministic summary, billed).
- **Quality beside the bill.** LoCoMo: at a third, two thirds and the end of the replay, each
  question whose evidence lies in earlier turns is put as a draft (``service.requests.context``):
  a hit when every evidence turn is in the request. The long session: each planted fact,
  asked the same way, a hit when its sentence is in the request. Coding and scripted sessions:
  identifiers of the whole session found in the final request.

The stored times follow the replay's clock (``created_at`` of each message), so the cache
lifetime is chosen from the pauses the conversation really had. ``--quick``: the first 60
turns of one LoCoMo chat and 40 scripted turns, warm and paused, sending everything against
the default.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import LOCOMO_DIR, Options, Row, missing, parallel_map, row
from benchmarks.cost import Bill, VirtualClock, _kind, _price, pause_seconds, replay_service

GROUP = "sessions"
LOCOMO = ("conv-26", "conv-30", "conv-41")
QUICK_TURNS = (60, 40)
"""Turns of the LoCoMo chat and of the scripted session in a quick run."""
WARM_GAP = 5.0
"""Seconds before each prompt in the warm pattern."""
PATTERNS = ("warm", "paused")
TARGET_EVIDENCE_UNDER_BUDGET = 99.0
LONG_SAVING = 50.0
"""A session over 4x the budget must cost at least this much less than sending everything."""


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    after: int
    """Index of the prompt from which every evidence turn has been sent."""


@dataclass(frozen=True)
class Session:
    """Prompts, replies, the pause before each prompt (``paused``) and what to check."""

    name: str
    user: list[str]
    replies: list[str]
    gaps: list[float]
    questions: list[Question] = field(default_factory=list)
    system: str = ""


def locomo_session(path: Path, turns: int | None = None) -> Session:
    """One LoCoMo conversation as a chat (speaker A prompts, speaker B replies)."""
    from benchmarks.locomo import load_dialogue, normalise

    dialogue = load_dialogue(path)
    pairs: list[tuple[list[str], list[str], str]] = []  # (prompt parts, reply parts, first time)
    where: dict[str, int] = {}
    for turn in dialogue.turns:
        if (turn.role == "user" and (not pairs or pairs[-1][1])) or not pairs:
            pairs.append(([], [], turn.created_at))
        prompt, reply, _ = pairs[-1]
        (prompt if turn.role == "user" else reply).append(turn.text)
        where[turn.dia_id] = len(pairs) - 1
    pairs = [p for p in pairs if p[0] and p[1]] if turns is None else pairs[:turns]
    pairs = [p for p in pairs if p[0] and p[1]]
    rng = random.Random(len(pairs))
    gaps: list[float] = []
    previous: datetime | None = None
    for _, _, stamp in pairs:
        moment = datetime.fromisoformat(stamp)
        real = (moment - previous).total_seconds() if previous is not None else 0.0
        gaps.append(real if real > 3_600 else pause_seconds(rng))
        previous = moment
    texts = {t.dia_id: normalise(t.original) for t in dialogue.turns}
    questions = [
        Question(q.text, tuple(texts[e] for e in q.evidence), max(where[e] for e in q.evidence))
        for q in dialogue.questions
        if all(where.get(e, len(pairs)) < len(pairs) for e in q.evidence)
    ]
    return Session(
        dialogue.name,
        ["\n".join(p[0]) for p in pairs],
        ["\n".join(p[1]) for p in pairs],
        gaps,
        questions,
        system=f"A long-running chat between {dialogue.speaker_a} (the user) and "
        f"{dialogue.speaker_b} (the assistant).",
    )


def coding_session() -> Session:
    """The generated 200-turn coding session, with the pause model."""
    from benchmarks.coding import generate

    messages = generate().messages
    user = [text for role, text, _ in messages if role == "user"]
    replies = [text for role, text, _ in messages if role == "assistant"]
    rng = random.Random(11)
    return Session("coding", user, replies, [pause_seconds(rng) for _ in user])


def long_session() -> Session:
    """The generated multi-day session over 4x the budget (``benchmarks/long_session.py``):
    each planted fact is a question, its sentence the evidence."""
    from benchmarks.long_session import generate, question

    made = generate()
    questions = [Question(question(f), (f.sentence,), f.turn) for f in made.facts]
    return Session(
        "long",
        made.user,
        made.replies,
        made.gaps,
        questions,
        system="A long-running work chat between a user and an assistant.",
    )


def scripted_session(turns: int) -> Session:
    """The scripted session of the cost group (its own pauses)."""
    from benchmarks.cost import script

    made = script(turns)
    return Session("scripted", made.user, made.replies, made.pauses)


class _ReplayStamps:
    """The store's clock in a replay: rows are stamped with the replay's time, as they would
    be in real use (the pauses the cache lifetime is chosen from are the replay's); lease
    expiries keep the system's time."""

    START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock

    def now(self) -> str:
        return (self.START + timedelta(seconds=self._clock.now)).isoformat()

    def time(self) -> float:
        import time

        return time.time()


@dataclass
class Result:
    """One replay's bill and how much of the past its requests kept."""

    bills: dict[str, Bill] = field(default_factory=dict)
    hits: int = 0
    asked: int = 0
    identifiers: float | None = None
    versions: int = 0
    peak: int = 0
    """Largest chat request, in tokens."""

    @property
    def dollars(self) -> float:
        return sum(b.dollars for b in self.bills.values())

    @property
    def evidence(self) -> float | None:
        return 100.0 * self.hits / self.asked if self.asked else None


async def replay(settings: dict[str, str], session: Session, pattern: str, work: Path) -> Result:
    """Replay ``session`` under ``settings`` with ``pattern``'s pauses; bill every request."""
    from benchmarks.locomo import request_text
    from tui_chat.core.identifiers import retention

    clock = VirtualClock()
    result = Result()
    checks = {len(session.user) // 3, 2 * len(session.user) // 3, len(session.user)}
    db = work / f"{session.name}-{pattern}-{len(list(work.iterdir()))}.db"
    stamps = _ReplayStamps(clock)
    async with replay_service(session.replies, clock, db, stamps) as (server, service):
        conversation = await service.conversations.new(session.name, system=session.system)
        cid = conversation.id
        for key, value in settings.items():
            await service.conversations.set_setting(cid, key, value)
        for index, (text, gap) in enumerate(zip(session.user, session.gaps, strict=True)):
            clock.now += gap if pattern == "paused" else WARM_GAP
            outcome = await service.send(cid, text)
            if outcome.error is not None:
                raise RuntimeError(f"send failed: {outcome.error}")
            await service.finish_background()
            clock.now += 10.0  # the reply is read
            if index + 1 in checks:
                for question in session.questions:
                    if question.after < index:
                        built = await service.requests.context(cid, question.text)
                        haystack = request_text(built.request)
                        result.asked += 1
                        result.hits += all(e in haystack for e in question.evidence)
        result.versions = len(
            [s for s in await service.summaries.versions(cid) if s.status == "completed"]
        )
        if not session.questions:
            final = await service.requests.context(cid, "What did we decide so far?")
            kept, total = retention(session.user + session.replies, request_text(final.request))
            result.identifiers = 100.0 * kept / total if total else None
    for request in server.message_requests:
        result.bills.setdefault(_kind(request), Bill()).add(request.usage or {}, _price(request))
        if _kind(request) == "chat" and request.usage:
            used = sum(
                int(request.usage.get(k, 0))
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
            result.peak = max(result.peak, used)
    return result


DEFAULT_OVERRIDES: dict[str, Any] = {}
"""Settings added to the default's (research: ``--settings '{"budget": "64000"}'``)."""

BASELINE = {
    "preset": "window",
    "context_window": "1000000",
    "summarizer": "claude",
    "cache_ttl": "5m",
}


def configurations(quick: bool) -> dict[str, dict[str, str]]:
    """Sending everything, the default, and (full run) each seed preset."""
    from tui_chat.core.presets import DEFAULT_PRESET, PRESETS

    configs = {"everything": BASELINE, "default": {"summarizer": "claude", **DEFAULT_OVERRIDES}}
    if not quick:
        for name in PRESETS:
            if name != DEFAULT_PRESET:
                configs[name] = {"preset": name, "summarizer": "claude"}
    return configs


@dataclass(frozen=True)
class Job:
    name: str
    turns: int | None
    pattern: str
    config: str
    settings: dict[str, str]


def make_session(name: str, turns: int | None) -> Session:
    """A session by name: a LoCoMo conversation, ``coding`` or ``scripted``."""
    if name == "coding":
        return coding_session()
    if name == "long":
        return long_session()
    if name == "scripted":
        return scripted_session(turns or 200)
    return locomo_session(LOCOMO_DIR / f"{name}.json", turns)


def measure(job: Job) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session(job.name, job.turns)
        return asyncio.run(replay(job.settings, session, job.pattern, Path(tmp)))


def sessions(quick: bool, only: Sequence[str] = ()) -> dict[str, int | None]:
    """The sessions of a run: name and turns (``None``: all of them)."""
    made: dict[str, int | None] = {}
    if LOCOMO_DIR.exists():
        for name in LOCOMO[:1] if quick else LOCOMO:
            made[name] = QUICK_TURNS[0] if quick else None
    if not quick:
        made["coding"] = None
        made["long"] = None
    made["scripted"] = QUICK_TURNS[1] if quick else 200
    return {k: v for k, v in made.items() if not only or k in only}


def _note(result: Result, base: Result) -> str:
    parts = [
        f"{kind} {b.requests} req ${b.dollars:.2f}" for kind, b in sorted(result.bills.items())
    ]
    quality = (
        f"evidence in request {result.evidence:.1f} % ({result.asked} asked; everything "
        f"{base.evidence:.1f} %)"
        if result.evidence is not None and base.evidence is not None
        else f"identifiers in request {result.identifiers:.0f} %"
        if result.identifiers is not None
        else ""
    )
    return (
        f"{result.versions} versions; largest request {result.peak / 1e3:,.1f}k; "
        + "; ".join(parts)
        + (f"; {quality}" if quality else "")
    )


def run(options: Options, only: Sequence[str] = (), seeds: bool = True) -> list[Row]:
    """Every session, pattern and configuration against sending everything."""
    from tui_chat.core.presets import DEFAULT_BUDGET

    made = sessions(options.quick, only)
    configs = configurations(options.quick or not seeds)
    jobs = [
        Job(name, turns, pattern, config, settings)
        for name, turns in made.items()
        for pattern in PATTERNS
        for config, settings in configs.items()
    ]
    results = parallel_map(measure, jobs, options.jobs)
    by = {(j.name, j.pattern, j.config): r for j, r in zip(jobs, results, strict=True)}
    rows: list[Row] = []
    for name in made:
        for pattern in PATTERNS:
            base = by[(name, pattern, "everything")]
            rows.append(
                row(
                    GROUP,
                    f"{name} {pattern}: sending everything",
                    base.dollars,
                    "$",
                    ratio=1.0,
                    note=_note(base, base),
                )
            )
            for config in configs:
                if config == "everything":
                    continue
                result = by[(name, pattern, config)]
                long = base.peak > 4 * DEFAULT_BUDGET and config == "default"
                rows.append(
                    row(
                        GROUP,
                        f"{name} {pattern}: {config}",
                        result.dollars,
                        "$",
                        le=base.dollars * (1 - LONG_SAVING / 100)
                        if long
                        else (base.dollars if config == "default" else None),
                        ratio=result.dollars / base.dollars if base.dollars else None,
                        note=_note(result, base),
                    )
                )
                if config == "default" and result.evidence is not None:
                    under = base.peak <= DEFAULT_BUDGET
                    rows.append(
                        row(
                            GROUP,
                            f"{name} {pattern}: default, evidence in request",
                            result.evidence,
                            "%",
                            ge=TARGET_EVIDENCE_UNDER_BUDGET if under else (base.evidence or 0) - 10,
                        )
                    )
    if not LOCOMO_DIR.exists():
        rows.append(missing(GROUP, "LoCoMo chats replayed", "%", "../shared not found"))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.sessions [--quick]``: this group alone."""
    import argparse
    import json

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated session names")
    parser.add_argument("--settings", default="", help="JSON settings of the default")
    parser.add_argument("--no-seeds", action="store_true")
    args = parser.parse_args(argv)
    if args.settings:
        DEFAULT_OVERRIDES.update(json.loads(args.settings))
    options = Options(quick=args.quick, data_dir=Path(tempfile.gettempdir()), jobs=args.jobs)
    only = [n for n in args.only.split(",") if n]
    for r in run(options, only, seeds=not args.no_seeds):
        print(f"{r.figure:<55} {r.value:>10.2f} {r.unit:<2} {r.ratio or 0:>6.2f}x  {r.note}")


if __name__ == "__main__":
    main()
