"""Migration 6: each version keeps what its summary call cost and the server's block as
received; models that refused on-demand compaction are remembered."""

from __future__ import annotations

from pathlib import Path

from tests.unit.store.test_store import add, result
from tui_chat.core.models import SummaryCall
from tui_chat.store.repository import Store
from tui_chat.store.summaries import SummaryStart

BLOCK = {"type": "compaction", "content": "Summary — «kept»", "signature": "sig_0f", "extra": [1]}


async def test_call_cost_and_block_round_trip(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "t.db")
    try:
        conv = await store.conversations.create(title="t", model="claude-sonnet-4-6")
        last = [await add(store, conv.id, r, f"m{i}") for i, r in enumerate(["user", "assistant"])]
        call = SummaryCall("claude-sonnet-4-6", 120, 30_000, 0, 900, 0.02385)
        for block in (BLOCK, None):
            row = await store.summaries.begin(
                SummaryStart(
                    conv.id,
                    parent_id=None,
                    strategy="running",
                    covers_to_message_id=last[-1],
                    trigger="manual",
                    owner="me",
                    lease_seconds=60,
                )
            )
            done, _ = await store.summaries.complete(
                row.id,
                result(call=call if block else None, compaction_block=block),
                owner="me",
            )
            again = await store.summaries.get(done.id)
            assert again.compaction_block == block
            assert again.call == (call if block else None)
        assert list(BLOCK) == list(
            (await store.summaries.versions(conv.id))[-1].compaction_block or {}
        )
    finally:
        await store.close()


async def test_unsupported_models_are_remembered(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "t.db")
    try:
        support = store.compaction_support
        assert await support.unsupported("claude-haiku-4-5") is None
        await support.remember("claude-haiku-4-5", "400: not supported")
        await support.remember("claude-haiku-4-5", "400: still not supported")
        assert await support.unsupported("claude-haiku-4-5") == "400: still not supported"
        assert await support.unsupported("claude-sonnet-4-6") is None
        await support.forget("claude-haiku-4-5")
        assert await support.unsupported("claude-haiku-4-5") is None
    finally:
        await store.close()
