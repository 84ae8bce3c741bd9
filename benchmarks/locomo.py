"""LoCoMo (Maharana et al., ACL 2024) as tui-chat conversations, and the measures read off a
request: whether evidence turns are inside it, and the tallies of hits per configuration (the
retrieval probes to compare with are in ``benchmarks/probes.py``).

Each LoCoMo conversation is imported with speaker A as the user and speaker B as the assistant;
every session's date opens its first message and is each message's ``created_at``; a shared
photo is kept as its caption after the text (``[shares a photo: …]``). Questions without
evidence, or whose evidence names a turn the conversation does not have, are left out and
counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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
    from tui_chat.engine.build import window_for
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


def answer_in(haystack: str, answer: str | None) -> bool | None:
    """Whether the answer string is in the (normalised) request text, ignoring case."""
    if not answer:
        return None
    return normalise(answer).casefold() in haystack.casefold()


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

    @property
    def tokens_per_hit(self) -> float | None:
        """Request tokens spent per question with its evidence in the request."""
        return sum(self.request_tokens) / self.hits if self.hits else None

    def category_size(self, category: int) -> int:
        """Questions of one category."""
        return self.by_category.get(category, [0, 0])[1]

    def merge(self, other: Tally) -> None:
        """Add another tally's questions (of another conversation) to this one."""
        self.hits += other.hits
        self.total += other.total
        self.answers += other.answers
        self.answerable += other.answerable
        self.request_tokens += other.request_tokens
        for category, (hits, total) in other.by_category.items():
            cell = self.by_category.setdefault(category, [0, 0])
            cell[0] += hits
            cell[1] += total

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

    def merge(self, other: PresetStats) -> None:
        """Add another conversation's figures after this one's."""
        self.reductions += other.reductions
        self.kept += other.kept
        self.total += other.total
        self.versions += other.versions
