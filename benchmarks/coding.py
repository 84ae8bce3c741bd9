"""A generated 200-turn coding session, and how many of its identifiers the request keeps.

The session is deterministic (one seed): a developer and an assistant work through a
Python service — files, functions and classes, commits, error codes and exceptions, package
versions, URLs, timings and sizes, colleagues' names and quoted messages, and what the
developer types about them: ticket keys (``OPS-214``) and line references (``line 1234``,
``lines 10-20``, ``L42``, ``src/app/db.py:120``). Each turn brings a
few new identifiers and mentions some earlier ones again, as a real session does; replies
carry about a thousand tokens of explanation (English-like filler from
:class:`benchmarks.datagen.TextMaker`), so the whole session is larger than a 200k window.

Retention: the session is imported, compacted with the offline summarizer as ``tui-chat
compact`` would (everything due), and the next request is built. Every identifier of the
messages the active summary covers is looked for in that request's memory block (summary and
identifier ledger) with :func:`tui_chat.core.ledger.retention`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import open_offline

TURNS = 200
SEED = 7

_DIRS = ("src/app", "src/app/api", "src/app/db", "tests", "scripts", "docs", "src/app/workers")
_STEMS = (
    "billing", "invoice", "ledger", "session", "cache", "router", "schema", "retry", "auth",
    "export", "queue", "report", "audit", "search", "upload", "quota", "tenant", "webhook",
)  # fmt: skip
_PEOPLE = (
    "Priya Natarajan", "Marcus Webb", "Elena Petrova", "Tomás Ortega", "Hana Kim",
    "Samuel Okafor", "Ingrid Larsen", "Wei Chen",
)  # fmt: skip
_PACKAGES = ("sqlalchemy", "pydantic", "httpx", "fastapi", "celery", "redis", "alembic")
_EXC = ("ValueError", "KeyError", "IntegrityError", "TimeoutError", "PermissionError")
_UNITS = ("ms", "MB", "seconds", "requests", "rows", "%", "KB", "minutes")


@dataclass(frozen=True)
class Session:
    """The generated messages, alternating user / assistant, with their times."""

    messages: list[tuple[str, str, str]]
    """``(role, text, created_at)``."""


def _identifier(rng: random.Random, kind: str, n: int) -> str:
    stem = rng.choice(_STEMS)
    if kind == "path":
        return f"{rng.choice(_DIRS)}/{stem}_{n}.py"
    if kind == "func":
        return f"{rng.choice(('load', 'save', 'parse', 'build', 'check'))}_{stem}_{n}()"
    if kind == "class":
        return f"{stem.capitalize()}{rng.choice(('Service', 'Repo', 'Client', 'Worker'))}{n}"
    if kind == "hash":
        return f"{rng.getrandbits(28):07x}a{n % 10}"
    if kind == "error":
        return rng.choice((f"E{1000 + n}", f"ERR_{stem.upper()}_{n}", rng.choice(_EXC)))
    if kind == "version":
        return f"{rng.choice(_PACKAGES)} {rng.randint(1, 4)}.{rng.randint(0, 20)}.{n % 10}"
    if kind == "url":
        return f"https://git.example.com/team/{stem}/issues/{100 + n}"
    if kind == "number":
        return f"{rng.randint(12, 9_000)} {rng.choice(_UNITS)}"
    if kind == "quote":
        return f'"{stem} job {n} failed after retry"'
    return rng.choice(_PEOPLE)


_KINDS = ("path", "func", "class", "hash", "error", "version", "url", "number", "quote", "person")
_PROJECTS = ("OPS", "BILL", "PLAT", "API", "SEC")
_TYPED = (
    "This is {ticket}; the traceback ends at {line}.",
    "{ticket} tracks it. The assertion fires at {line}.",
    "Same as {ticket}? Look at {line} first.",
    "I opened {ticket} for this, the bad branch is {line}.",
)


def _ticket(rng: random.Random, tickets: list[str]) -> str:
    """A ticket key: a new one, or one the developer named before (as people come back)."""
    if tickets and rng.random() < 0.55:
        return rng.choice(tickets)
    key = f"{rng.choice(_PROJECTS)}-{rng.randint(20, 4_999)}"
    tickets.append(key)
    return key


def _line(rng: random.Random, paths: list[str]) -> str:
    """A line reference as people write one."""
    number = rng.randint(10, 2_400)
    form = rng.randrange(4)
    if form == 0 and paths:
        return f"{rng.choice(paths)}:{number}"
    if form == 1:
        return f"line {number}" + (f" of {rng.choice(paths)}" if paths else "")
    if form == 2:
        return f"lines {number}-{number + rng.randint(3, 40)}"
    return f"L{number}"


def generate(turns: int = TURNS, seed: int = SEED) -> Session:
    """Build the session.

    Args:
        turns: Exchanges (a user message and a reply each).
        seed: Random seed.

    Returns:
        The messages in order.
    """
    from benchmarks.datagen import TextMaker

    rng = random.Random(seed)
    prose = TextMaker(random.Random(seed + 1))
    typed = random.Random(seed + 2)  # its own stream: the other identifiers stay as they were
    tickets: list[str] = []
    seen: list[str] = []
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    messages: list[tuple[str, str, str]] = []
    for turn in range(turns):
        new = [_identifier(rng, rng.choice(_KINDS), turn * 10 + i) for i in range(3)]
        old = rng.sample(seen, min(len(seen), 2))
        seen.extend(new)
        paths = [x for x in seen if x.endswith(".py")]
        user = (
            f"Next step: {new[0]} is involved. When I run the tests I see {new[1]} — "
            f"we touched {old[0] if old else 'nothing'} earlier. "
            + typed.choice(_TYPED).format(
                ticket=_ticket(typed, tickets), line=_line(typed, paths[-12:])
            )
            + " Can you look at the failing case and say what to change?"
        )
        reply = (
            f"Looking at it: the problem sits in {new[0]}, which calls into "
            f"{old[-1] if old else new[2]}. I changed the check so that {new[2]} is handled "
            f"before the write, and {new[1]} no longer shows up. "
            "The rest of the module stays as it is; run the suite again to confirm. "
            + " ".join(
                rng.choice(
                    (
                        "The change is small and keeps the public interface.",
                        "Tests cover the new branch now.",
                        "I left a comment explaining why the order matters.",
                        "Nothing else in the call graph depends on it.",
                    )
                )
                for _ in range(rng.randint(2, 5))
            )
            + "\n\n"
            + "\n\n".join(prose.paragraph(rng.randint(4, 8)) for _ in range(rng.randint(4, 8)))
        )
        moment = start + timedelta(minutes=7 * turn)
        messages.append(("user", user, moment.isoformat()))
        messages.append(("assistant", reply, (moment + timedelta(minutes=1)).isoformat()))
    return Session(messages)


def export_file(session: Session, target: Path) -> Path:
    """The session as tui-chat's JSON export."""
    data = {
        "format": "tui-chat",
        "version": 1,
        "conversation": {"title": "Coding session", "system": "You are a coding assistant."},
        "messages": [
            {"role": role, "content": text, "created_at": created}
            for role, text, created in session.messages
        ],
    }
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def memory_text(request: dict[str, Any]) -> str:
    """The text of a request's system blocks (base prompt and memory block)."""
    system = request.get("system") or []
    if isinstance(system, str):
        return system
    return "\n".join(str(block.get("text", "")) for block in system)


async def measure(
    preset: str | None, context_window: int | None, work: Path, budget: int | None = None
) -> Any:
    """Import, compact everything due, build the next request and measure retention.

    Args:
        preset: Preset to set (``None``: the default).
        context_window: Window override (``None``: the model's own).
        budget: Working budget override (``None``: the preset's).
        work: Scratch directory.

    Returns:
        The :class:`tui_chat.core.ledger.Retention` of the covered identifiers.
    """
    from tui_chat.core import ledger
    from tui_chat.engine.service import CompactionError

    db = work / f"coding-{preset}-{context_window}-{budget}.db"
    service, store = await open_offline(db)
    try:
        conversation = await service.transfer.import_file(
            export_file(generate(), work / "coding.json")
        )
        cid = conversation.id
        if preset is not None:
            await service.conversations.set_setting(cid, "preset", preset)
        await service.conversations.set_setting(cid, "summarizer", "extractive")
        if context_window is not None:
            await service.conversations.set_setting(cid, "context_window", str(context_window))
        if budget is not None:
            await service.conversations.set_setting(cid, "budget", str(budget))
        with contextlib.suppress(CompactionError):  # nothing due: retention of nothing
            await service.summaries.compact(cid)
        built = await service.requests.context(cid, "What should we do next?")
        active = await store.summaries.active(cid)
        if active is None:
            return ledger.retention([], "")
        covered = await store.messages.history(cid, up_to_id=active.covers_to_message_id)
        return ledger.retention([m.text for m in covered], memory_text(built.request))
    finally:
        await service.close()


def run_measure(preset: str | None, context_window: int | None, budget: int | None = None) -> Any:
    """:func:`measure` in a fresh event loop and scratch directory."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(measure(preset, context_window, Path(tmp), budget))
