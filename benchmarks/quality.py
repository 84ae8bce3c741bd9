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
TARGET_HIT_RATE = 75.0
QUICK_CONVERSATIONS = ("conv-30",)
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
        questions.append(Question(qa["question"], evidence, int(qa.get("category", 0))))
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


@dataclass
class Tally:
    """Hits over questions for one configuration."""

    hits: int = 0
    total: int = 0
    request_tokens: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Hit rate in percent."""
        return 100.0 * self.hits / self.total if self.total else 0.0


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


async def _ask_all(
    service: Any, cid: str, questions: Sequence[Question], texts: dict[str, str], tally: Tally
) -> None:
    for question in questions:
        built = await service.context(cid, question.text)
        tally.total += 1
        tally.request_tokens.append(built.breakdown.input_tokens)
        if is_hit(built.request, (texts[e] for e in question.evidence)):
            tally.hits += 1


async def evaluate(
    dialogue: Dialogue,
    presets: Sequence[str],
    windows: Sequence[int],
    work: Path,
    tallies: dict[tuple[str, int, bool], Tally],
    stats: dict[str, PresetStats],
) -> None:
    """Run every configuration on one dialogue, adding to ``tallies`` and ``stats``."""
    from tui_chat.core.identifiers import retention

    source = export_file(dialogue, work / f"{dialogue.name}.json")
    texts = {t.dia_id: t.original for t in dialogue.turns}
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
                await service.set_setting(cid, "context_window", str(context_window_for(usable)))
                if preset == "truncation":
                    await service.set_setting(cid, "recall", "off")
                    tally = tallies.setdefault((preset, usable, False), Tally())
                    await _ask_all(service, cid, dialogue.questions, texts, tally)
                    continue
                versions = await _compact_all(service, cid)
                for recall in (False, True):
                    await service.set_setting(cid, "recall", "on" if recall else "off")
                    tally = tallies.setdefault((preset, usable, recall), Tally())
                    await _ask_all(service, cid, dialogue.questions, texts, tally)
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


def run(options: Options) -> list[Row]:
    """Every quality figure."""
    from tui_chat.core.presets import PRESETS

    paths = sorted(LOCOMO_DIR.glob("*.json"))
    if options.quick:
        paths = [p for p in paths if p.stem in QUICK_CONVERSATIONS]
    dialogues = [load_dialogue(p) for p in paths]
    presets = list(PRESETS)
    tallies: dict[tuple[str, int, bool], Tally] = {}
    stats: dict[str, PresetStats] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dialogue in dialogues:
            asyncio.run(evaluate(dialogue, presets, WINDOWS, Path(tmp), tallies, stats))
    asked = sum(len(d.questions) for d in dialogues)
    skipped = sum(d.skipped for d in dialogues)
    names = ", ".join(d.name for d in dialogues)
    rows: list[Row] = []
    for usable in WINDOWS:
        label = f"{usable // 1000}k"
        base = tallies[("truncation", usable, False)].rate
        rows.append(
            row(
                GROUP,
                f"evidence in request, {label} window, truncation (baseline)",
                base,
                "%",
                note=f"{asked} questions ({names}; {skipped} without usable evidence left out)",
            )
        )
        for preset in presets:
            for recall in (False, True):
                tally = tallies[(preset, usable, recall)]
                target = TARGET_HIT_RATE if recall and usable == TARGET_WINDOW else None
                rows.append(
                    row(
                        GROUP,
                        f"evidence in request, {label} window, {preset}, "
                        f"recall {'on' if recall else 'off'}",
                        tally.rate,
                        "%",
                        ge=target,
                        ratio=tally.rate / base if base else None,
                        note=f"mean request {sum(tally.request_tokens) / tally.total:,.0f} tokens",
                    )
                )
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
