"""Past the budget: one long chat that outgrows its working budget, at the model's real window.

The three dev LoCoMo conversations become consecutive sessions of ONE chat: every session of
the three, in the order of its date (each conversation's own sessions stay in order), each line
stored as ``Name: text`` (a shared photo as its caption after it), each session's first prompt
opening with ``[Session k, <date>]``, ids made unique (``conv-26:D3:4``). Within a session the
first speaker of its conversation (LoCoMo's speaker A) writes the prompts and the other speaker's
lines are the replies (runs of one speaker joined); a session that opens with the other speaker
gets the session line alone as its prompt, one that ends on a prompt gets ``(session ends)`` as
its reply, so no line is lost and no session runs into the next.

The chat is replayed through ``ChatService.send`` against ``tests/fakes/fake_anthropic.py`` (its
deterministic summarizer: the default ``auto`` summarizer with a key), on the default model
(``config.DEFAULT_MODEL``), every message stored at its real LoCoMo time (so the gaps between
sessions are days), on the model's real window with every default setting except the working
budget, scaled so the chat is :data:`RATIO` times it.
Two cache clocks: ``warm`` (5 s before each prompt) and ``paused`` (the pause model of
``benchmarks/cost.py`` within a session, the real gap before a session's first prompt).
Sending everything (the ``window`` preset on the 1M window, nothing ever folded) replays beside
it with the same clock.

After the replay each question is put as a draft and the exact request
``service.requests.context`` builds is read: a hit when every evidence turn's text is inside
it, per LoCoMo category and per third of the chat (where its newest evidence turn lies). The
bill is every request the fake server saw, each at its model's prices (Claude's cache rules:
writes 1.25x or 2x, reads 0.1x; summary calls and their output included). The strong plain
search (``benchmarks/probes.py``'s :class:`StrongBm25Probe`) is given, for each question, the
same tokens as the default's request, and the tokens the default's dollars buy: the default's
bill per chat request less the replies' output, spent on uncached input (a search's passages
change with every prompt, so a cache seldom holds them).

``--quick``: the chat up to its first :data:`QUICK_SESSIONS` sessions, the budget scaled the
same way, the paused clock only.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import LOCOMO_DIR, Options, Row, missing, parallel_map, row
from benchmarks.cost import Bill, VirtualClock, _kind, _price, pause_seconds, replay_service
from benchmarks.locomo import CATEGORIES, Question, Tally, Turn, load_dialogue, normalise
from benchmarks.sessions import BASELINE, WARM_GAP
from tui_chat.config import DEFAULT_MODEL

GROUP = "past_budget"
CONVERSATIONS = ("conv-26", "conv-30", "conv-41")
RATIO = 1.8
"""The chat is this many times its working budget."""
QUICK_SESSIONS = 12
PATTERNS = ("warm", "paused")
TARGET_EVIDENCE = 97.0
TARGET_CATEGORY = 90.0
CATEGORY_MIN = 30
"""Categories with at least this many questions have a target of their own."""
TARGET_BILL = 0.75
THIRDS = ("early", "middle", "late")


@dataclass(frozen=True)
class Exchange:
    """One prompt and its reply, with the real time of the prompt."""

    prompt: str
    reply: str
    when: datetime
    first_of_session: bool


@dataclass
class Chat:
    """The merged chat: exchanges, every line as a probe turn, the questions."""

    exchanges: list[Exchange]
    turns: list[Turn]
    """Every line in order (``text``: as stored, ``original``: the line's own text)."""
    questions: list[tuple[Question, int]]
    """Each question with the third (0, 1, 2) its newest evidence turn lies in."""
    texts: dict[str, str]
    """Unique turn id -> the turn's own text, normalised."""
    system: str


def _line(name: str, turn: Turn) -> str:
    text = f"{name}: {turn.original}"
    caption = turn.text.partition("\n[shares a photo: ")[2]
    return text + (f"\n[shares a photo: {caption}" if caption else "")


def build_chat(sessions: int | None = None, names: Sequence[str] = ()) -> Chat:
    """The dev conversations (or ``names`` of them) as one chat (module doc), up to
    ``sessions`` sessions."""
    blocks: list[tuple[datetime, str, int, list[tuple[str, Turn]]]] = []
    questions: list[tuple[str, Question]] = []
    pairs_of: list[str] = []
    for name in names or CONVERSATIONS:
        dialogue = load_dialogue(LOCOMO_DIR / f"{name}.json")
        pairs_of.append(f"{dialogue.speaker_a} and {dialogue.speaker_b}")
        by_session: dict[int, list[tuple[str, Turn]]] = {}
        for turn in dialogue.turns:
            number = int(turn.dia_id[1:].split(":")[0])
            speaker = dialogue.speaker_a if turn.role == "user" else dialogue.speaker_b
            by_session.setdefault(number, []).append((speaker, turn))
        for number, lines in by_session.items():
            start = datetime.fromisoformat(lines[0][1].created_at)
            blocks.append((start, name, number, lines))
        questions += [(name, q) for q in dialogue.questions]
    blocks.sort(key=lambda b: (b[0], b[1], b[2]))
    blocks = blocks[:sessions] if sessions else blocks
    exchanges: list[Exchange] = []
    turns: list[Turn] = []
    for index, (start, name, _, lines) in enumerate(blocks, start=1):
        header = f"[Session {index}, {start.strftime('%-I:%M %p on %-d %B, %Y')}]"
        pairs: list[tuple[list[str], list[str], datetime]] = []
        for speaker, turn in lines:
            unique = f"{name}:{turn.dia_id}"
            text = _line(speaker, turn)
            turns.append(Turn(unique, turn.role, text, turn.original, turn.created_at))
            when = datetime.fromisoformat(turn.created_at)
            if not pairs or (turn.role == "user" and pairs[-1][1]):
                pairs.append(([], [], when))
            (pairs[-1][0] if turn.role == "user" else pairs[-1][1]).append(text)
        for number, (prompt, reply, when) in enumerate(pairs):
            lead = [header] if number == 0 else []
            exchanges.append(
                Exchange(
                    "\n".join(lead + prompt),
                    "\n".join(reply) or "(session ends)",
                    when,
                    number == 0,
                )
            )
    position = {t.dia_id: i for i, t in enumerate(turns)}
    texts = {t.dia_id: normalise(t.original) for t in turns}
    asked: list[tuple[Question, int]] = []
    for name, q in questions:
        evidence = tuple(f"{name}:{e}" for e in q.evidence)
        if all(e in position for e in evidence):
            last = max(position[e] for e in evidence)
            asked.append((Question(q.text, evidence, q.category, q.answer), 3 * last // len(turns)))
    system = "A long-running chat among friends: " + "; ".join(pairs_of) + "."
    return Chat(exchanges, turns, asked, texts, system)


def budget_for(chat: Chat) -> int:
    """The working budget the chat is :data:`RATIO` times (rounded to 1,000 tokens)."""
    from tui_chat.core.tokens import get_counter

    counter = get_counter()
    total = sum(counter.count(e.prompt) + counter.count(e.reply) for e in chat.exchanges)
    return max(1_000, round(total / RATIO / 1_000) * 1_000)


class _StoredAt:
    """The store's clock in the replay: rows are stamped with the real time of the exchange
    being replayed (``moment[0]``); lease expiries keep the system's time."""

    def __init__(self, moment: list[datetime]) -> None:
        self._moment = moment

    def now(self) -> str:
        return self._moment[0].isoformat()

    def time(self) -> float:
        import time

        return time.time()


@dataclass
class Result:
    """One replay: its bill, its folds, and what its final requests kept."""

    bills: dict[str, Bill] = field(default_factory=dict)
    folds: int = 0
    tally: Tally = field(default_factory=Tally)
    thirds: list[list[int]] = field(default_factory=lambda: [[0, 0], [0, 0], [0, 0]])
    sections: dict[str, float] = field(default_factory=dict)
    """Mean tokens per part of the questions' requests."""
    tokens: list[int] = field(default_factory=list)
    """Each question's request size (local count), in question order."""
    chats: int = 0
    turns: list[tuple[str, dict[str, Any], float, int]] = field(default_factory=list)
    """Every request the server saw: kind, usage (as the server reported it), dollars,
    recalled tokens it carried."""
    misses: list[tuple[int, str]] = field(default_factory=list)
    """With ``explain``: each missed question's category and why (:mod:`.past_budget_misses`)."""

    @property
    def dollars(self) -> float:
        return sum(b.dollars for b in self.bills.values())


async def replay(
    settings: dict[str, str],
    chat: Chat,
    pattern: str,
    work: Path,
    explain: bool = False,
    keep: str = "",
) -> Result:
    """Replay ``chat`` under ``settings`` with ``pattern``'s clock; ask every question at the
    end; bill every request (``explain``: and say why each missed question missed)."""
    from benchmarks.locomo import request_text

    clock = VirtualClock()
    result = Result()
    rng = random.Random(7)
    moment = [chat.exchanges[0].when]
    db = work / f"past-{pattern}-{len(list(work.iterdir()))}.db"
    replies = [e.reply for e in chat.exchanges]
    stamps = _StoredAt(moment)
    async with replay_service(replies, clock, db, stamps, DEFAULT_MODEL) as (server, service):
        cid = (await service.conversations.new("past budget", system=chat.system)).id
        for key, value in settings.items():
            await service.conversations.set_setting(cid, key, value)
        previous = chat.exchanges[0].when
        for exchange in chat.exchanges:
            real = (exchange.when - previous).total_seconds()
            previous = exchange.when
            if pattern == "warm":
                clock.now += WARM_GAP
            else:
                clock.now += real if exchange.first_of_session else pause_seconds(rng)
            moment[0] = exchange.when
            outcome = await service.send(cid, exchange.prompt)
            if outcome.error is not None:
                raise RuntimeError(f"send failed: {outcome.error}")
            await service.finish_background()
            clock.now += 10.0
        moment[0] = chat.exchanges[-1].when + timedelta(minutes=5)
        result.folds = len(
            [s for s in await service.summaries.versions(cid) if s.status == "completed"]
        )
        sums: dict[str, int] = {}
        for question, third in chat.questions:
            built = await service.requests.context(cid, question.text)
            haystack = request_text(built.request)
            hit = all(chat.texts[e] in haystack for e in question.evidence)
            tokens = built.breakdown.input_tokens
            result.tally.add(question.category, hit, None, tokens)
            result.tokens.append(tokens)
            result.thirds[third][0] += hit
            result.thirds[third][1] += 1
            if explain and not hit:
                from benchmarks.past_budget_misses import why_missed

                reason = await why_missed(service, cid, chat, question, haystack)
                result.misses.append((question.category, reason))
            for part, value in built.breakdown.sections.items():
                sums[part] = sums.get(part, 0) + value
        count = max(1, len(chat.questions))
        result.sections = {k: v / count for k, v in sums.items() if v}
    from benchmarks.past_budget_misses import recalled_tokens

    if keep:  # the replayed database, for looking into its requests afterwards
        import shutil

        shutil.copyfile(db, keep)

    for request in server.message_requests:
        result.bills.setdefault(_kind(request), Bill()).add(request.usage or {}, _price(request))
        usage = dict(request.usage or {})
        result.turns.append((_kind(request), usage, _price(request), recalled_tokens(request)))
    result.chats = result.bills.get("chat", Bill()).requests
    return result


@dataclass(frozen=True)
class Job:
    config: str
    pattern: str
    sessions: int | None
    names: tuple[str, ...] = ()
    explain: bool = False
    keep: str = ""
    """Where to copy the replayed database (nowhere when empty)."""


def settings_of(config: str, budget: int) -> dict[str, str]:
    """Sending everything, or every default with the scaled working budget."""
    return dict(BASELINE) if config == "everything" else {"budget": str(budget)}


def measure(job: Job) -> Result:
    chat = build_chat(job.sessions, job.names)
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_of(job.config, budget_for(chat))
        return asyncio.run(replay(settings, chat, job.pattern, Path(tmp), job.explain, job.keep))


def search_hits(chat: Chat, budgets: Sequence[int]) -> Tally:
    """The strong plain search over every line, given ``budgets[i]`` tokens for question i."""
    from benchmarks.probes import StrongBm25Probe

    probe = StrongBm25Probe(chat.turns)
    tally = Tally()
    for (question, _), budget in zip(chat.questions, budgets, strict=True):
        selection = probe.selection(question.text, budget)
        hit = all(chat.texts[e] in selection for e in question.evidence)
        tally.add(question.category, hit, None, budget)
    return tally


def dollar_tokens(result: Result, chat_model: str) -> int:
    """Input tokens per chat request the default's dollars buy uncached (module doc)."""
    from tui_chat.llm.models import model_info

    info = model_info(chat_model)
    output = sum(b.output for k, b in result.bills.items() if k == "chat")
    input_dollars = result.dollars - output * info.output_price / 1e6
    return int(input_dollars / max(1, result.chats) / (info.input_price / 1e6))


def _categories(tally: Tally) -> str:
    return tally.categories_note()


def run(options: Options, names: Sequence[str] = ()) -> list[Row]:
    """The default past its budget against sending everything and the strong search
    (``names``: a split of the dev conversations, to check what was tuned on the others)."""
    if not LOCOMO_DIR.exists():
        return [missing(GROUP, "a chat past its budget", "%", "../shared not found")]
    sessions = QUICK_SESSIONS if options.quick else None
    patterns = ("paused",) if options.quick else PATTERNS
    chat = build_chat(sessions, names)
    budget = budget_for(chat)
    jobs = [Job(c, p, sessions, tuple(names)) for p in patterns for c in ("everything", "default")]
    results = dict(
        zip(
            ((j.config, j.pattern) for j in jobs),
            parallel_map(measure, jobs, options.jobs),
            strict=True,
        )
    )
    size = f"{len(chat.exchanges)} exchanges, budget {budget:,}, {len(chat.questions)} questions"
    rows: list[Row] = []
    for pattern in patterns:
        base = results[("everything", pattern)]
        result = results[("default", pattern)]
        tally = result.tally
        parts = ", ".join(f"{k} {v / 1e3:.1f}k" for k, v in sorted(result.sections.items()))
        bills = "; ".join(
            f"{kind} {b.requests} req ${b.dollars:.2f} (in {b.input / 1e3:,.0f}k, write "
            f"{b.written / 1e3:,.0f}k, read {b.read / 1e3:,.0f}k, out {b.output / 1e3:,.0f}k)"
            for kind, b in sorted(result.bills.items())
        )
        label = f"past budget {pattern}"
        rows.append(
            row(
                GROUP,
                f"{label}: default, evidence in request",
                tally.rate,
                "%",
                ge=TARGET_EVIDENCE,
                note=f"{size}; {result.folds} folds; everything {base.tally.rate:.1f} %; "
                f"{_categories(tally)}; request {tally.mean_tokens / 1e3:.1f}k: {parts}",
            )
        )
        for number, name in CATEGORIES.items():
            if tally.category_size(number) >= CATEGORY_MIN:
                rows.append(
                    row(
                        GROUP,
                        f"{label}: default, {name} evidence",
                        tally.category_rate(number),
                        "%",
                        ge=TARGET_CATEGORY,
                        note=f"{tally.category_size(number)} questions",
                    )
                )
        thirds = ", ".join(
            f"{THIRDS[i]} {100 * h / n:.1f} % ({n})" for i, (h, n) in enumerate(result.thirds) if n
        )
        rows.append(row(GROUP, f"{label}: default, evidence by third", None, "%", note=thirds))
        rows.append(
            row(
                GROUP,
                f"{label}: default bill vs sending everything",
                result.dollars / base.dollars if base.dollars else None,
                "x",
                le=TARGET_BILL,
                note=f"${result.dollars:.2f} vs ${base.dollars:.2f}; {bills}",
            )
        )
        same_tokens = search_hits(chat, result.tokens)
        rows.append(
            row(
                GROUP,
                f"{label}: strong search, same tokens",
                same_tokens.rate,
                "%",
                ratio=None,
                note=f"{same_tokens.mean_tokens / 1e3:.1f}k a question; {_categories(same_tokens)}",
            )
        )
        spend = dollar_tokens(result, DEFAULT_MODEL)
        same_dollars = search_hits(chat, [spend] * len(chat.questions))
        rows.append(
            row(
                GROUP,
                f"{label}: strong search, same dollars",
                same_dollars.rate,
                "%",
                note=f"{spend / 1e3:.1f}k uncached a request; {_categories(same_dollars)}",
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.past_budget [--quick]``: this group alone."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--conversations", default="", help="comma-separated, e.g. conv-41")
    args = parser.parse_args(argv)
    options = Options(quick=args.quick, data_dir=Path(tempfile.gettempdir()), jobs=args.jobs)
    names = [n for n in args.conversations.split(",") if n]
    for r in run(options, names):
        value = "n/a" if r.value is None else f"{r.value:.3f}"
        print(f"{r.figure:<58} {value:>8} {r.unit:<2} {r.target or '':<8} {r.note}")


if __name__ == "__main__":
    main()
