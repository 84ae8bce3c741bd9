"""Deterministic benchmark data: a large tui-chat database built with bulk SQL inserts.

The schema comes from tui-chat's own migrations (``Store.open``); rows are then written with
``executemany`` in one transaction. The full-text index is built once at the end with FTS5's
``rebuild`` (its insert triggers are dropped for the bulk insert and recreated from their own
stored SQL), which indexes exactly what the triggers would, five times faster; every other
trigger on ``messages`` fires as it would in the app. The same sizes and seed always give the
same database.

Shape (full size): 1,000 conversations and 200,000 messages; the most recently updated one
holds 100,000 messages and another exactly 1,000. Like any long conversation in the app, both
have an active summary version, covering all but their newest 800 messages: they send the
same raw tail, and recall searches 99,200 vs 200 compacted messages. The rest share what is
left. With ``ten`` set, one more conversation of that many messages has no summary (the
request builder then reads a window-sized tail). Text is English-like (Zipf-distributed
words, about 15 tokens per user message and 90 per assistant message), with code blocks in
one reply in ten.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sqlite3
from bisect import bisect
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path

from tui_chat.core.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter, get_counter
from tui_chat.store.migrations import LATEST_VERSION
from tui_chat.store.repository import Store

SEED = 20_260_101
MODEL = "claude-sonnet-4-6"
SYSTEM_PROMPT = "You are a helpful assistant."
GENERATOR_VERSION = 5
"""Bump when the generated data changes, so cached databases are rebuilt."""

COMMON_WORDS = """
the of and to in is that for it as with was on be by at this are from or have an they which
one you were all we there can been has more when will would who so no if out up what about
into them some could time these two may then do first any my now such like our over man me
even most made after also did many before must through back years where much your way well
down should because each just those people how too little state good very make world still
own see men work long get here between both life being under never day same another know while
last might us great old year off come since against go came right used take three database
query index table column server client request response token window summary model context
message reply stream cache prompt compaction version anchor recall search conversation python
function class module import error value return string number list dict file path config
setting test bench latency memory thread process async await worker event widget screen
terminal render markdown layout style button input output budget limit threshold ratio turn
segment preset policy session user assistant system history record store schema migration
""".split()  # noqa: SIM905 (a word list reads better as text)

_SYLLABLE_TEXT = (
    "ka ri to mo na se lu vi pe do ra ne ko si ta mi be lo fa gu ze ho ju wa ye qui tor "
    "vel mar ban cor dil fen gar hul jin kel lom nar pol rin sul tam vor wen yal zor"
)
SYLLABLES = tuple(_SYLLABLE_TEXT.split())


@dataclass(frozen=True)
class ScaleSpec:
    """Sizes of the scale database."""

    conversations: int = 1_000
    messages: int = 200_000
    big: int = 100_000
    """Messages of the one big conversation."""
    medium: int = 1_000
    """Messages of the 1k-message conversation (the baseline of the request-build ratio)."""
    tail: int = 800
    """Newest messages left unsummarised in both the big and the 1k-message conversation: the
    same raw tail, 200 vs 99,200 messages of compacted history behind it."""
    ten: int = 0
    """Messages of a conversation with no summary at all (0: none)."""

    @property
    def key(self) -> str:
        """A file-name fragment naming these sizes and the generator version."""
        sizes = (
            f"{self.conversations}-{self.messages}-{self.big}-{self.medium}-{self.tail}-{self.ten}"
        )
        return f"v{GENERATOR_VERSION}.{LATEST_VERSION}-{sizes}"


FULL = ScaleSpec(ten=10_000)
QUICK = ScaleSpec(conversations=200, messages=30_000, big=20_000, medium=1_000, tail=800, ten=5_000)


@dataclass(frozen=True)
class ScaleDb:
    """A generated database and the conversations the benchmarks look at."""

    path: Path
    spec: ScaleSpec
    big_id: str
    medium_id: str
    small_id: str
    """A typical (about 100-message) conversation."""
    ten_id: str | None = None
    """The conversation of ``spec.ten`` messages without a summary, if the spec has one."""


class TextMaker:
    """English-like text from a fixed vocabulary with a Zipf distribution (deterministic)."""

    def __init__(self, rng: random.Random, vocabulary: int = 20_000) -> None:
        self.rng = rng
        words = list(dict.fromkeys(COMMON_WORDS))
        seen = set(words)
        while len(words) < vocabulary:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.cumulative = list(accumulate(1 / (rank + 1) ** 1.05 for rank in range(len(words))))

    def word_at(self, fraction: float) -> str:
        """The word at a quantile of the frequency distribution (0 = most common)."""
        index = bisect(self.cumulative, fraction * self.cumulative[-1])
        return self.words[min(index, len(self.words) - 1)]

    def sentence(self, low: int = 6, high: int = 18) -> str:
        """One sentence of ``low``–``high`` words."""
        words = self.rng.choices(
            self.words, cum_weights=self.cumulative, k=self.rng.randint(low, high)
        )
        words[0] = words[0].capitalize()
        return " ".join(words) + self.rng.choice(".....?!")

    def paragraph(self, sentences: int) -> str:
        """Several sentences."""
        return " ".join(self.sentence() for _ in range(sentences))

    def code(self) -> str:
        """A short fenced code block with identifiers."""
        name = "_".join(self.rng.choices(self.words[200:2000], k=2))
        lines = [f"def {name}(value: int) -> int:"]
        for _ in range(self.rng.randint(2, 6)):
            var = self.rng.choice(self.words[200:2000])
            lines.append(f"    {var} = value * {self.rng.randint(2, 999)}  # {self.sentence(3, 6)}")
        lines.append("    return value")
        return "```python\n" + "\n".join(lines) + "\n```"

    def user_text(self) -> str:
        """A user message: one to three sentences."""
        return self.paragraph(self.rng.randint(1, 3))

    def assistant_text(self) -> str:
        """A reply: a few paragraphs, sometimes with a code block."""
        parts = [self.paragraph(self.rng.randint(2, 4)) for _ in range(self.rng.randint(1, 3))]
        if self.rng.random() < 0.1:
            parts.insert(1, self.code())
        return "\n\n".join(parts)


def _conversation_id(index: int) -> str:
    return hashlib.sha256(f"bench-{index}".encode()).hexdigest()[:12]


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def _sizes(spec: ScaleSpec, rng: random.Random) -> list[int]:
    """Message counts per conversation: [big, medium, ten?, rest…] summing to ``spec.messages``."""
    fixed = [spec.big, spec.medium] + ([spec.ten] if spec.ten else [])
    rest = spec.conversations - len(fixed)
    left = spec.messages - sum(fixed)
    if rest <= 0:
        return fixed[: spec.conversations]
    weights = [rng.uniform(0.3, 1.7) for _ in range(rest)]
    scale = left / sum(weights)
    sizes = [max(2, 2 * round(w * scale / 2)) for w in weights]
    sizes[-1] += left - sum(sizes)
    return [*fixed, *sizes]


def _count(counter: TokenCounter, text: str) -> int:
    return MESSAGE_OVERHEAD_TOKENS + counter.count(text)


def generate_scale_db(path: Path, spec: ScaleSpec = FULL, seed: int = SEED) -> ScaleDb:
    """Create the scale database at ``path`` (replacing any file there)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)

    async def create_schema() -> None:
        store = await Store.open(path)
        await store.close()

    asyncio.run(create_schema())
    rng = random.Random(seed)
    maker = TextMaker(rng)
    counter = get_counter()
    sizes = _sizes(spec, rng)
    ids = [_conversation_id(i) for i in range(len(sizes))]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    # The big conversation is the most recently updated one (the app opens it at start).
    order = [*range(1, len(sizes)), 0]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    fts_triggers = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages' "
        "AND sql LIKE '%messages_fts%'"
    ).fetchall()
    for name, _sql in fts_triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    conversation_rows = []
    big_summary_to = medium_summary_to = 0
    message_id = 0
    clock = start
    for index in order:
        count = sizes[index]
        cid = ids[index]
        created = clock
        rows = []
        first_user = ""
        for n in range(count):
            role = "user" if n % 2 == 0 else "assistant"
            text = maker.user_text() if role == "user" else maker.assistant_text()
            if n == 0:
                first_user = text
            clock += timedelta(seconds=rng.randint(5, 240))
            message_id += 1
            content = json.dumps([{"type": "text", "text": text}], ensure_ascii=False)
            rows.append(
                (
                    message_id,
                    cid,
                    role,
                    content,
                    text,
                    n // 2 + 1,
                    _count(counter, text),
                    "complete",
                    MODEL if role == "assistant" else None,
                    None,
                    "end_turn" if role == "assistant" else None,
                    _iso(clock),
                )
            )
        db.executemany(
            "INSERT INTO messages (id, conversation_id, role, content, text, turn, token_count, "
            "status, model, usage, stop_reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        if index == 0:
            big_summary_to = rows[-spec.tail - 1][0] if count > spec.tail else 0
        if index == 1:
            medium_summary_to = rows[-spec.tail - 1][0] if count > spec.tail else 0
        title = " ".join(first_user.split()[:6])
        conversation_rows.append(
            (cid, title, MODEL, SYSTEM_PROMPT, "{}", _iso(created), _iso(clock))
        )
        clock += timedelta(minutes=rng.randint(5, 600))
    db.executemany(
        "INSERT INTO conversations (id, title, model, system_prompt, settings, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        conversation_rows,
    )
    for index, covers_to in ((0, big_summary_to), (1, medium_summary_to)):
        if covers_to:
            _add_summary(db, ids[index], covers_to, maker, counter, _iso(clock))
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    for _name, sql in fts_triggers:
        db.execute(sql)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("ANALYZE")
    db.close()
    ten_id = ids[2] if spec.ten else None
    small = 3 if spec.ten else 2
    return ScaleDb(path, spec, ids[0], ids[1], ids[small % len(ids)], ten_id)


def _add_summary(
    db: sqlite3.Connection,
    conversation_id: str,
    covers_to: int,
    maker: TextMaker,
    counter: TokenCounter,
    now: str,
) -> None:
    """An active, completed summary version over the big conversation's older messages."""
    covered, source_tokens = db.execute(
        "SELECT count(*), sum(token_count) FROM messages WHERE conversation_id = ? AND id <= ?",
        (conversation_id, covers_to),
    ).fetchone()
    text = "\n".join(f"- {maker.sentence(8, 20)}" for _ in range(60))
    cursor = db.execute(
        "INSERT INTO summaries (conversation_id, version, parent_id, strategy, text, "
        "covers_to_message_id, covered_messages, source_tokens, summary_tokens, trigger, "
        "summarizer, status, created_at, completed_at) "
        "VALUES (?, 1, NULL, 'running', ?, ?, ?, ?, ?, 'auto', 'extractive', 'completed', ?, ?)",
        (conversation_id, text, covers_to, covered, source_tokens, counter.count(text), now, now),
    )
    db.execute(
        "UPDATE conversations SET active_summary_id = ? WHERE id = ?",
        (cursor.lastrowid, conversation_id),
    )


def scale_db(data_dir: Path, spec: ScaleSpec) -> ScaleDb:
    """The scale database for ``spec`` in ``data_dir``, generated on first use."""
    path = data_dir / f"scale-{spec.key}.db"
    marker = path.with_suffix(".json")
    if path.exists() and marker.exists():
        info = json.loads(marker.read_text())
        return ScaleDb(path, spec, **info)
    made = generate_scale_db(path, spec)
    ids = ("big_id", "medium_id", "small_id", "ten_id")
    marker.write_text(json.dumps({name: getattr(made, name) for name in ids}))
    return made
