"""Requests recorded before a refactor are byte-identical after it.

Each case replays a session message by message into a store under one configuration (every
preset, the seed-000 single user message, a small window that makes turns give way), builds
the request a send would make after each prompt (``service.requests.context`` with the prompt
stored), folds what is due with the offline summarizer every few turns, pins a message early
on, and previews a draft at a third, two thirds and the end. Each request's canonical JSON
(the request and its breakdown) is hashed with SHA-256; the hashes, never the text, are kept in
``tests/integration/recorded_requests.json`` (the LoCoMo conversations are not copied into the
repository).
The test builds them again and names the first case and step that differ.

Sessions: the generated coding session (``benchmarks/coding.py``) and, when
``../shared/data/locomo`` exists, the dev LoCoMo conversations (otherwise those cases skip).
Three coding cases run in the fast tier (:data:`FAST`); the other cases are marked ``slow``.

To record again after an *intended* change of what is sent (its own commit, saying why)::

    python -m tests.integration.test_recorded_requests          # every case
    python -m tests.integration.test_recorded_requests coding   # the cases whose name contains
    "coding"
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchmarks.common import LOCOMO_DIR
from tests.seam import engine_of, open_service
from tui_chat.config import Config
from tui_chat.core.models import ContentBlock
from tui_chat.core.presets import PRESETS
from tui_chat.core.request import BuiltRequest
from tui_chat.engine.service import CompactionError

FIXTURE = Path(__file__).with_name("recorded_requests.json")
LOCOMO = ("conv-26", "conv-30", "conv-41")
FOLD_EVERY = 6
"""Turns between two manual compactions (everything due, offline summarizer)."""
PIN_AT = 3
"""The message pinned (by position) once the replay reaches it."""
DRAFT = "Could you remind me what we settled on about the earlier points?"
"""A draft previewed at the checkpoints (no date words: recall's ranking reads the clock)."""

CONFIGS: dict[str, dict[str, str]] = {
    **{name: {"preset": name} for name in PRESETS},
    "single": {"single_user_message": "true"},
    "small": {"context_window": "12000"},
}
"""Configurations replayed: each preset, the seed-000 layout, a window turns give way in."""


@dataclass(frozen=True)
class Session:
    """Prompts and replies, alternating, with the time each was written."""

    name: str
    system: str
    messages: list[tuple[str, str, str]]
    """``(role, text, created_at)``, a user message first."""


@functools.cache
def coding_session() -> Session:
    from benchmarks.coding import generate

    # The first 60 turns: past every preset's first folds, within the test's time.
    return Session("coding", "You are a coding assistant.", generate().messages[:120])


def locomo_session(name: str) -> Session:
    from benchmarks.sessions import locomo_session as chat

    made = chat(LOCOMO_DIR / f"{name}.json")
    moment = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
    messages: list[tuple[str, str, str]] = []
    for prompt, reply, gap in zip(made.user, made.replies, made.gaps, strict=True):
        moment += timedelta(seconds=gap)
        messages.append(("user", prompt, moment.isoformat()))
        messages.append(("assistant", reply, (moment + timedelta(seconds=20)).isoformat()))
    return Session(name, made.system, messages)


def cases() -> Iterator[tuple[str, str]]:
    """``(session, configuration)`` of every case."""
    for session in ("coding", *LOCOMO):
        for config in CONFIGS:
            yield session, config


def digest(built: BuiltRequest) -> str:
    """SHA-256 of the request and its breakdown as canonical JSON (16 hex digits kept)."""
    data = {"request": built.request, "breakdown": built.breakdown.to_dict()}
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


async def replay(
    session: Session, settings: dict[str, str], work: Path, every: int = 1
) -> list[str | None]:
    """The hashes of every request the replay builds, in order; with ``every`` above 1 only
    every ``every``-th prompt's request is built (``None`` in its place otherwise: the store,
    the pins and the folds are the same, only fewer requests are checked)."""
    db = work / "recorded.db"
    db.unlink(missing_ok=True)
    service = await open_service(Config(db_path=db, api_key=None), db)
    hashes: list[str | None] = []
    try:
        conversation = await service.conversations.new("replay", system=session.system)
        cid = conversation.id
        for key, value in {**settings, "summarizer": "extractive"}.items():
            await service.conversations.set_setting(cid, key, value)
        prompts = sum(1 for role, _, _ in session.messages if role == "user")
        checks = {prompts // 3, 2 * prompts // 3, prompts}
        turn = 0
        for index, (role, text, created_at) in enumerate(session.messages):
            content: list[ContentBlock] = [{"type": "text", "text": text}]
            message = await engine_of(service).store.messages.add(
                cid,
                role="user" if role == "user" else "assistant",
                content=content,
                text=text,
                token_count=engine_of(service).counter.count_message("user", content),
                created_at=created_at,
            )
            if index == PIN_AT:
                await service.messages.pin(message.id, "kept")
            if role == "user":
                turn += 1
                if turn % every and turn not in checks:
                    hashes.append(None)
                    continue
                hashes.append(digest(await service.requests.context(cid)))  # what the send sends
                continue
            if turn in checks:
                hashes.append(digest(await service.requests.context(cid, DRAFT)))
            if turn % FOLD_EVERY == 0:
                with contextlib.suppress(CompactionError):  # nothing due yet
                    await service.summaries.compact(cid)
    finally:
        await service.close()
    return hashes


def session_named(name: str) -> Session:
    return coding_session() if name == "coding" else locomo_session(name)


def record(case: tuple[str, str], every: int = 1) -> list[str | None]:
    session, config = case
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(replay(session_named(session), CONFIGS[config], Path(tmp), every))


def case_name(case: tuple[str, str]) -> str:
    return f"{case[0]}/{case[1]}"


def _available(case: tuple[str, str]) -> bool:
    return case[0] == "coding" or (LOCOMO_DIR / f"{case[0]}.json").exists()


FAST = {("coding", "adaptive")}
"""The fast tier's case (the default preset on the coding session), so a change to any request
fails in seconds; the other replays are long and marked ``slow``."""
LOCOMO_EVERY = 3
"""The LoCoMo replays check every third prompt's request (and every draft preview): the
messages, pins and folds are all replayed, and building every request took most of the
suite's three minutes here. The coding session checks every request."""


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=case_name(case), marks=() if case in FAST else pytest.mark.slow)
        for case in cases()
    ],
)
def test_requests_are_byte_identical_to_the_recorded_ones(case: tuple[str, str]) -> None:
    if not _available(case):
        pytest.skip(f"{LOCOMO_DIR} is not here (the LoCoMo cases need ../shared)")
    recorded: dict[str, list[str]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    name = case_name(case)
    assert name in recorded, f"{name} was never recorded: python -m {__name__}"
    now = record(case, 1 if case[0] == "coding" else LOCOMO_EVERY)
    for step, (was, got) in enumerate(zip(recorded[name], now, strict=False)):
        assert got is None or was == got, f"{name}: request {step} differs from the recorded one"
    assert len(now) == len(recorded[name]), f"{name}: {len(now)} requests built"


def main(argv: list[str]) -> None:
    """Record the cases whose name contains any of ``argv`` (all without arguments)."""
    made: dict[str, list[str | None]] = {}
    for case in cases():
        name = case_name(case)
        if argv and not any(word in name for word in argv):
            continue
        if not _available(case):
            print(f"{name}: skipped ({LOCOMO_DIR} is not here)")
            continue
        made[name] = record(case)
        print(f"{name}: {len(made[name])} requests")
    # Read only now: another recording may have written other cases meanwhile.
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
    recorded.update(made)
    FIXTURE.write_text(json.dumps(recorded, indent=0, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
