"""Compaction quality, offline, on LoCoMo (Maharana et al., ACL 2024).

Each LoCoMo conversation is imported with speaker A as the user and speaker B as the assistant;
every session's date opens its first message and is each message's ``created_at``; a shared
photo is kept as its caption after the text (``[shares a photo: …]``). For every
configuration — plain truncation, and each preset compacted with the offline extractive
summarizer, recall off and on — and every usable window (2k, 4k, 8k tokens: ``context_window``
is set so that window minus reply budget is exactly that), each question is sent through
``ChatService.context(conv_id, question)``: the exact request sending it would make. A
question is a *hit* when the text of every one of its evidence turns is inside that request
(summary, pins, recalled excerpts or raw messages). Questions without evidence, or whose
evidence names a turn the conversation does not have, are left out and counted.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import LOCOMO_DIR, Options, Row, row

GROUP = "quality"
WINDOWS = (2_000, 4_000, 8_000)
TARGET_WINDOW = 4_000
TARGET_HIT_RATE = 80.0
TARGET_MARGIN = 8.0
"""Points the default preset must beat the BM25 probe by, at the same budget (issue 10)."""
QUICK_CONVERSATIONS = ("conv-30",)
RAW_WINDOW = False
"""Research switch: read a window as ``context_window`` itself (a new user's ``set
context_window 4000``) instead of as the usable part."""
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    """One LoCoMo dialogue turn as a tui-chat message."""

    dia_id: str
    role: str
    text: str
    """What is stored: the turn's text, the session date first on a session's opening turn."""
    original: str
    """The turn's own text (what a hit looks for)."""
    created_at: str


@dataclass(frozen=True)
class Question:
    """One QA item with its evidence turns."""

    text: str
    evidence: tuple[str, ...]
    category: int
    answer: str | None = None
    """The expected answer as a string (``None`` for adversarial items)."""


@dataclass
class Dialogue:
    """One LoCoMo conversation, ready to import."""

    name: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn]
    questions: list[Question]
    skipped: int = 0
    """QA items left out (no evidence, or evidence naming a missing turn)."""


def _session_date(raw: str) -> datetime:
    """``'1:56 pm on 8 May, 2023'`` as a UTC datetime."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_dialogue(path: Path) -> Dialogue:
    """Read one LoCoMo file (format in ``../shared/README.md``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    speaker_a = data["speaker_a"]
    sessions = sorted(
        (int(key.split("_")[1]) for key in data if re.fullmatch(r"session_\d+", key)),
    )
    turns: list[Turn] = []
    for number in sessions:
        raw_date = data.get(f"session_{number}_date_time", "")
        start = _session_date(raw_date)
        for index, item in enumerate(data[f"session_{number}"]):
            text = item["text"]
            stored = f"[Session {number}, {raw_date}]\n{text}" if index == 0 else text
            if item.get("blip_caption"):  # the photo the speaker shared, as LoCoMo renders it
                stored += f"\n[shares a photo: {item['blip_caption']}]"
            turns.append(
                Turn(
                    dia_id=item["dia_id"],
                    role="user" if item["speaker"] == speaker_a else "assistant",
                    text=stored,
                    original=text,
                    created_at=(start + timedelta(seconds=30 * index)).isoformat(),
                )
            )
    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    skipped = 0
    for qa in data["qa"]:
        evidence = tuple(
            f"D{s}:{t}" for item in qa.get("evidence", []) for s, t in _DIA.findall(item)
        )
        if not evidence or any(e not in known for e in evidence):
            skipped += 1
            continue
        answer = qa.get("answer")
        questions.append(
            Question(
                qa["question"],
                evidence,
                int(qa.get("category", 0)),
                None if answer is None else str(answer),
            )
        )
    return Dialogue(path.stem, speaker_a, data["speaker_b"], turns, questions, skipped)


def export_file(dialogue: Dialogue, target: Path) -> Path:
    """The dialogue as tui-chat's own JSON export (keeps each message's ``created_at``)."""
    data = {
        "format": "tui-chat",
        "version": 1,
        "conversation": {
            "title": f"LoCoMo {dialogue.name}",
            "system": (
                f"This is a long-running chat between {dialogue.speaker_a} (the user) and "
                f"{dialogue.speaker_b} (the assistant)."
            ),
        },
        "messages": [
            {"role": t.role, "content": t.text, "created_at": t.created_at} for t in dialogue.turns
        ],
    }
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return target


def context_window_for(usable: int) -> int:
    """The ``context_window`` whose usable part (window minus reply budget) is ``usable``.

    Mirrors ``assemble.window_for`` without a ``max_output`` override: the reply budget is a
    quarter of a small window (at least 256 tokens).
    """
    from tui_chat.engine.assemble import window_for
    from tui_chat.llm.models import model_info

    info = model_info("claude-sonnet-4-6")
    from tui_chat.core.policy import Policy

    for window in range(usable, usable * 2):
        if window_for(info, Policy(context_window=window)).usable == usable:
            return window
    raise ValueError(f"no context window gives a usable window of {usable}")


def normalise(text: str) -> str:
    """Whitespace-insensitive form used to look for a turn's text."""
    return " ".join(text.split())


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text a request carries (system blocks and message content)."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in ("text", "content"):
                inner = value.get(key)
                if isinstance(inner, str):
                    parts.append(inner)
                elif isinstance(inner, list):
                    walk(inner)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    system = request.get("system")
    if isinstance(system, str):
        parts.append(system)
    else:
        walk(system or [])
    walk(request.get("messages", []))
    return normalise("\n".join(parts))


def is_hit(request: dict[str, Any], evidence_texts: Iterable[str]) -> bool:
    """True when every evidence text is inside the request."""
    haystack = request_text(request)
    return all(normalise(text) in haystack for text in evidence_texts)


CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's QA categories (Maharana et al., 2024)."""


@dataclass
class Tally:
    """Hits over questions for one configuration, overall and per QA category."""

    hits: int = 0
    total: int = 0
    answers: int = 0
    """Questions whose answer string is inside the request."""
    answerable: int = 0
    """Questions with an answer string (adversarial items have none)."""
    request_tokens: list[int] = field(default_factory=list)
    by_category: dict[int, list[int]] = field(default_factory=dict)
    """Category -> ``[hits, total]``."""

    def add(self, category: int, hit: bool, answer: bool | None, tokens: int) -> None:
        """Count one question."""
        self.total += 1
        self.hits += hit
        if answer is not None:
            self.answerable += 1
            self.answers += answer
        self.request_tokens.append(tokens)
        cell = self.by_category.setdefault(category, [0, 0])
        cell[0] += hit
        cell[1] += 1

    @property
    def rate(self) -> float:
        """Hit rate in percent."""
        return 100.0 * self.hits / self.total if self.total else 0.0

    @property
    def answer_rate(self) -> float:
        """Answer-string-in-request rate in percent."""
        return 100.0 * self.answers / self.answerable if self.answerable else 0.0

    @property
    def mean_tokens(self) -> float:
        """Mean request input tokens (local count)."""
        return sum(self.request_tokens) / len(self.request_tokens) if self.request_tokens else 0.0

    def category_rate(self, category: int) -> float | None:
        """Hit rate of one category in percent (``None`` when it has no question)."""
        hits, total = self.by_category.get(category, [0, 0])
        return 100.0 * hits / total if total else None

    def categories_note(self) -> str:
        """``multi-hop 40.1, temporal …`` for a row's note."""
        parts = []
        for number, name in CATEGORIES.items():
            rate = self.category_rate(number)
            if rate is not None:
                parts.append(f"{name} {rate:.1f}")
        return ", ".join(parts)


@dataclass
class PresetStats:
    """Compression figures of one preset's final summary, per conversation."""

    reductions: list[float] = field(default_factory=list)
    kept: int = 0
    total: int = 0
    versions: list[int] = field(default_factory=list)


async def _open(db: Path) -> Any:
    from tui_chat.config import Config
    from tui_chat.engine.service import ChatService

    return await ChatService.open(Config(db_path=db, api_key=None), db)


async def _compact_all(service: Any, cid: str) -> int:
    """Compact until nothing more can be folded (as ``tui-chat compact`` repeated would)."""
    from tui_chat.engine.service import CompactionError

    versions = 0
    while True:
        try:
            await service.compact(cid)
        except CompactionError:
            return versions
        versions += 1


_TERM = re.compile(r"\w+")


class Bm25Probe:
    """Plain Okapi BM25 over single turns: the retrieval a 30-line script would do.

    Each turn is a document (its stored text, lower-cased ``\\w+`` words, no stemming, no
    stop words); the question is the query. :meth:`hits` fills a token budget with the best
    turns in rank order and stops at the first that does not fit.
    """

    def __init__(self, turns: Sequence[Turn], k1: float = 1.5, b: float = 0.75) -> None:
        from tui_chat.core.tokens import get_counter

        counter = get_counter()
        self.turns = list(turns)
        self.docs = [_TERM.findall(t.text.lower()) for t in self.turns]
        self.costs = [counter.count(t.text) for t in self.turns]
        self.k1, self.b = k1, b
        self.avg = sum(len(d) for d in self.docs) / max(1, len(self.docs))
        self.freqs: list[dict[str, int]] = []
        df: dict[str, int] = {}
        for doc in self.docs:
            tf: dict[str, int] = {}
            for term in doc:
                tf[term] = tf.get(term, 0) + 1
            self.freqs.append(tf)
            for term in tf:
                df[term] = df.get(term, 0) + 1
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self._ranks: dict[str, list[int]] = {}

    def ranking(self, query: str) -> list[int]:
        """Turn indexes, best first (cached per query)."""
        cached = self._ranks.get(query)
        if cached is not None:
            return cached
        terms = _TERM.findall(query.lower())
        scores: list[tuple[float, int]] = []
        for index, tf in enumerate(self.freqs):
            length = len(self.docs[index])
            score = 0.0
            for term in terms:
                f = tf.get(term)
                if f:
                    norm = f + self.k1 * (1 - self.b + self.b * length / self.avg)
                    score += self.idf[term] * f * (self.k1 + 1) / norm
            if score > 0:
                scores.append((-score, index))
        ranked = [index for _, index in sorted(scores)]
        self._ranks[query] = ranked
        return ranked

    def selection(self, query: str, budget: int) -> str:
        """The text of the best turns that fill ``budget`` tokens, normalised."""
        chosen: list[str] = []
        spent = 0
        for index in self.ranking(query):
            if spent + self.costs[index] > budget:
                break
            spent += self.costs[index]
            chosen.append(self.turns[index].text)
        return normalise("\n".join(chosen))


def answer_in(haystack: str, answer: str | None) -> bool | None:
    """Whether the answer string is in the (normalised) request text, ignoring case."""
    if not answer:
        return None
    return normalise(answer).casefold() in haystack.casefold()


Key = tuple[str, int, bool]
"""``(configuration, usable window, recall on)``; the probe is ``("bm25 probe", usable, …)``
measured at the budget of the configuration named in :data:`PROBE_AT`."""


async def _ask_all(
    service: Any,
    cid: str,
    dialogue: Dialogue,
    key: Key,
    tallies: dict[Key, Tally],
    probe: Bm25Probe | None = None,
) -> None:
    texts = {t.dia_id: t.original for t in dialogue.turns}
    tally = tallies.setdefault(key, Tally())
    for question in dialogue.questions:
        built = await service.context(cid, question.text)
        haystack = request_text(built.request)
        hit = all(normalise(texts[e]) in haystack for e in question.evidence)
        tokens = built.breakdown.input_tokens
        tally.add(question.category, hit, answer_in(haystack, question.answer), tokens)
        if probe is not None:
            chosen = probe.selection(question.text, tokens)
            probe_hit = all(normalise(texts[e]) in chosen for e in question.evidence)
            probe_key = (f"bm25 probe at {key[0]}", key[1], key[2])
            tallies.setdefault(probe_key, Tally()).add(
                question.category, probe_hit, answer_in(chosen, question.answer), tokens
            )


async def evaluate(
    dialogue: Dialogue,
    presets: Sequence[str],
    windows: Sequence[int],
    work: Path,
    tallies: dict[Key, Tally],
    stats: dict[str, PresetStats],
) -> None:
    """Run every configuration on one dialogue, adding to ``tallies`` and ``stats``.

    The BM25 probe is measured at the budget of every configuration with recall on (each
    question's own request size), in the same run.
    """
    from tui_chat.core.identifiers import retention

    source = export_file(dialogue, work / f"{dialogue.name}.json")
    probe = Bm25Probe(dialogue.turns)
    for preset in ("truncation", *presets):
        for usable in windows:
            db = work / f"{dialogue.name}-{preset}-{usable}.db"
            service = await _open(db)
            try:
                conversation = await service.import_file(source)
                cid = conversation.id
                chosen = "window" if preset == "truncation" else preset
                await service.set_setting(cid, "preset", chosen)
                await service.set_setting(cid, "summarizer", "extractive")
                window = usable if RAW_WINDOW else context_window_for(usable)
                await service.set_setting(cid, "context_window", str(window))
                if preset == "truncation":
                    await service.set_setting(cid, "recall", "off")
                    await _ask_all(service, cid, dialogue, (preset, usable, False), tallies, probe)
                    continue
                versions = await _compact_all(service, cid)
                for recall in (False, True):
                    await service.set_setting(cid, "recall", "on" if recall else "off")
                    await _ask_all(
                        service,
                        cid,
                        dialogue,
                        (preset, usable, recall),
                        tallies,
                        probe if recall else None,
                    )
                if usable == TARGET_WINDOW:
                    active_id = (await service.resolve(cid)).active_summary_id
                    summaries = await service.summaries(cid)
                    active = next((s for s in summaries if s.id == active_id), None)
                    entry = stats.setdefault(preset, PresetStats())
                    entry.versions.append(versions)
                    if active is not None:
                        covered = await service.store.messages.history(
                            cid, up_to_id=active.covers_to_message_id
                        )
                        tokens = sum(m.token_count for m in covered)
                        entry.reductions.append(1 - active.summary_tokens / tokens)
                        kept, total = retention([m.text for m in covered], active.text)
                        entry.kept += kept
                        entry.total += total
            finally:
                await service.close()


def measure(
    dialogues: Sequence[Dialogue], presets: Sequence[str], windows: Sequence[int]
) -> tuple[dict[Key, Tally], dict[str, PresetStats]]:
    """Every configuration on every dialogue: the tallies and the compression figures."""
    tallies: dict[Key, Tally] = {}
    stats: dict[str, PresetStats] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dialogue in dialogues:
            asyncio.run(evaluate(dialogue, presets, windows, Path(tmp), tallies, stats))
    return tallies, stats


def _hit_row(label: str, name: str, tally: Tally, base: float, target: float | None) -> Row:
    return row(
        GROUP,
        f"evidence in request, {label} window, {name}",
        tally.rate,
        "%",
        ge=target,
        ratio=tally.rate / base if base else None,
        note=f"answer in request {tally.answer_rate:.1f} %; mean request "
        f"{tally.mean_tokens:,.0f} tokens; {tally.categories_note()}",
    )


def _margin_row(label: str, preset: str, tally: Tally, probe: Tally) -> Row:
    """Points above the BM25 probe overall, and the smallest margin over the categories."""
    margins = []
    for number, name in CATEGORIES.items():
        ours, theirs = tally.category_rate(number), probe.category_rate(number)
        if ours is not None and theirs is not None:
            margins.append((ours - theirs, name))
    worst, where = min(margins) if margins else (0.0, "-")
    return row(
        GROUP,
        f"evidence in request, {label} window, {preset} minus the BM25 probe",
        tally.rate - probe.rate,
        "points",
        ge=TARGET_MARGIN,
        note=f"smallest category margin {worst:+.1f} ({where}); must not be below 0",
    )


def rows_for(
    tallies: dict[Key, Tally],
    stats: dict[str, PresetStats],
    presets: Sequence[str],
    windows: Sequence[int],
    note: str,
) -> list[Row]:
    """The printed rows: per window truncation, every preset with recall off and on, and the
    BM25 probe at each recall-on configuration's budget; then compression figures."""
    from tui_chat.core.presets import DEFAULT_PRESET

    rows: list[Row] = []
    for usable in windows:
        label = f"{usable // 1000}k"
        base = tallies[("truncation", usable, False)].rate
        truncation = tallies[("truncation", usable, False)]
        rows.append(_hit_row(label, "truncation (baseline)", truncation, 0.0, None))
        rows[-1] = Row(**{**rows[-1].__dict__, "note": f"{note}; {rows[-1].note}"})
        for preset in presets:
            for recall in (False, True):
                tally = tallies[(preset, usable, recall)]
                target = None
                if recall and usable == TARGET_WINDOW and preset == DEFAULT_PRESET:
                    target = TARGET_HIT_RATE
                name = f"{preset}, recall {'on' if recall else 'off'}"
                rows.append(_hit_row(label, name, tally, base, target))
                probe = tallies.get((f"bm25 probe at {preset}", usable, True))
                if recall and probe is not None:
                    rows.append(
                        _hit_row(label, f"BM25 turn probe at {preset}'s budget", probe, base, None)
                    )
                    if target is not None:
                        rows.append(_margin_row(label, preset, tally, probe))
    for preset in presets:
        entry = stats.get(preset, PresetStats())
        if entry.reductions:
            rows.append(
                row(
                    GROUP,
                    f"token reduction of the compacted history, {preset}",
                    100 * sum(entry.reductions) / len(entry.reductions),
                    "%",
                    note=f"summary tokens vs covered messages; versions made: "
                    f"{'/'.join(str(v) for v in entry.versions)}",
                )
            )
        if entry.total:
            rows.append(
                row(
                    GROUP,
                    f"identifier retention of the compacted history, {preset}",
                    100 * entry.kept / entry.total,
                    "%",
                    note=f"{entry.kept} of {entry.total} identifiers kept by the final summary",
                )
            )
    return rows


def run(options: Options) -> list[Row]:
    """Every quality figure."""
    from tui_chat.core.presets import PRESETS

    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if options.quick:
        paths = [p for p in paths if p.stem in QUICK_CONVERSATIONS]
    dialogues = [load_dialogue(p) for p in paths]
    presets = list(PRESETS)
    tallies, stats = measure(dialogues, presets, WINDOWS)
    asked = sum(len(d.questions) for d in dialogues)
    skipped = sum(d.skipped for d in dialogues)
    names = ", ".join(d.name for d in dialogues)
    note = f"{asked} questions ({names}; {skipped} without usable evidence left out)"
    return rows_for(tallies, stats, presets, WINDOWS, note) + coding_rows(options)


CODING_WINDOWS: tuple[int | None, ...] = (None, 200_000, 8_000)
"""Identifier retention: at the model's own window, at 200k and at 8k."""
TARGET_RETENTION = 90.0


def coding_rows(options: Options) -> list[Row]:
    """Identifier retention per kind of the default preset on the generated coding session."""
    from benchmarks import coding
    from tui_chat.core.presets import DEFAULT_PRESET

    rows: list[Row] = []
    for window in CODING_WINDOWS:
        label = "the model's window" if window is None else f"a {window // 1000}k window"
        kept = coding.run_measure(None, window)
        data = kept.to_json()
        kinds = ", ".join(
            f"{k} {100 * v['kept'] / v['total']:.0f}" for k, v in data["by_kind"].items()
        )
        rows.append(
            row(
                GROUP,
                f"identifier retention, {DEFAULT_PRESET}, {coding.TURNS}-turn coding session, "
                f"{label}",
                100 * kept.rate,
                "%",
                ge=TARGET_RETENTION if window is None else None,
                note=f"{data['kept']} of {data['total']} (summary + ledger); per kind: {kinds}",
            )
        )
        if options.quick:
            break
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Research entry point: ``python -m benchmarks.quality --presets window --windows 4000``."""
    import argparse

    parser = argparse.ArgumentParser(description="LoCoMo evidence-in-request figures")
    parser.add_argument("--presets", default="")
    parser.add_argument("--windows", default="4000")
    parser.add_argument("--conversations", default="")
    parser.add_argument("--raw-window", action="store_true")
    args = parser.parse_args(argv)
    global RAW_WINDOW
    RAW_WINDOW = args.raw_window
    from tui_chat.core.presets import PRESETS

    presets = [p for p in args.presets.split(",") if p] or list(PRESETS)
    windows = [int(w) for w in args.windows.split(",")]
    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if args.conversations:
        paths = [p for p in paths if p.stem in args.conversations.split(",")]
    dialogues = [load_dialogue(p) for p in paths]
    tallies, stats = measure(dialogues, presets, windows)
    for r in rows_for(tallies, stats, presets, windows, ""):
        value = "n/a" if r.value is None else f"{r.value:5.1f}"
        print(f"{value}  {r.figure}  | {r.note}")


if __name__ == "__main__":
    main()
