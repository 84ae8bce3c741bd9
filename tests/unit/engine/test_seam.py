"""The test seam: a service handed out with its store, worker and the clock its store reads.

Every row the store stamps and every lease expiry it checks reads the clock it was opened
with (``Store.open(clock=…)``), so a test sets the time instead of patching ``utc_now`` in
each repository module or waiting for a lease to run out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.seam import Engine, TestClock, engine_of
from tui_chat.core.models import ContentBlock
from tui_chat.store.repository import Store
from tui_chat.store.summaries import SummaryStart

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


async def test_the_store_stamps_rows_with_its_clock(tmp_path: Path) -> None:
    clock = TestClock(start=START, tick=timedelta(seconds=1))
    store = await Store.open(tmp_path / "c.db", clock=clock)
    try:
        conversation = await store.conversations.create(title="t", model="m", system_prompt="")
        content: list[ContentBlock] = [{"type": "text", "text": "hello"}]
        message = await store.messages.add(
            conversation.id, role="user", content=content, text="hello", token_count=3
        )
        await store.anchors.pin(message.id, "kept")
        (anchor, _), *_ = await store.anchors.pinned(conversation.id)
        stamps = [conversation.created_at, message.created_at, anchor.pinned_at]
        assert all(datetime.fromisoformat(s) >= START for s in stamps)
        assert all(datetime.fromisoformat(s) < START + timedelta(minutes=1) for s in stamps)
        assert stamps == sorted(stamps) and len(set(stamps)) == 3  # a tick per stamp
        assert store.clock is clock
    finally:
        await store.close()


async def test_make_engine_hands_out_the_parts_and_the_clock(
    make_engine: Callable[..., Awaitable[Engine]],
) -> None:
    engine = await make_engine(api_key=None)
    assert engine_of(engine.service) is engine and engine.store.clock is engine.clock
    cid = (await engine.service.conversations.new("t")).id
    content: list[ContentBlock] = [{"type": "text", "text": "first"}]
    first = await engine.store.messages.add(
        cid, role="user", content=content, text="first", token_count=3
    )
    start = SummaryStart(cid, None, "running", first.id, "auto", "gone", lease_seconds=60.0)
    version = await engine.store.summaries.begin(start)
    assert await engine.store.summaries.take_over_expired(cid, owner="me", lease_seconds=60) is None
    engine.clock.advance(61)  # past the lease, without waiting for it
    taken = await engine.store.summaries.take_over_expired(cid, owner="me", lease_seconds=60)
    assert taken is not None and taken.id == version.id and taken.lease_owner == "me"
    await engine.worker.wait()  # the worker is the service's own: nothing of it runs here


def test_no_store_module_reads_the_system_clock() -> None:
    """Every store module reads the time from the store's clock: a new one calling
    ``utc_now()`` or ``time.time()`` would stamp rows a test cannot set."""
    import ast

    package = Path(__file__).resolve().parents[3] / "tui_chat" / "store"
    found: list[str] = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("utc_now", "time.time"):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert not found, found
