"""Bulk writes in batches: all or nothing across batches, progress, pins found by position."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_chat.core.tokens import get_counter
from tui_chat.engine.transfer.transfer import import_conversation
from tui_chat.store.messages import BATCH
from tui_chat.store.repository import Store


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    s = await Store.open(tmp_path / "t.db")
    yield s  # type: ignore[misc]
    await s.close()


def _rows(count: int, fail_at: int | None = None) -> Iterator[dict[str, Any]]:
    for n in range(count):
        if n == fail_at:
            raise ValueError(f"bad row {n}")
        text = f"message {n}"
        yield {
            "role": "user" if n % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": text}],
            "text": text,
            "token_count": 3,
        }


async def test_rows_are_written_in_batches_with_progress(store: Store) -> None:
    conversation = await store.conversations.create(title="t", model="m")
    seen: list[int] = []
    count = BATCH * 2 + 7
    written = await store.messages.add_many(conversation.id, _rows(count), progress=seen.append)
    assert written == count
    assert seen == [BATCH, BATCH * 2, count]
    ids = await store.messages.ids(conversation.id)
    assert len(ids) == count and ids == sorted(ids)
    turns = [m.turn for m in await store.messages.history(conversation.id, limit=4)]
    assert turns == [1, 1, 2, 2]


async def test_a_failure_after_some_batches_writes_nothing(store: Store) -> None:
    conversation = await store.conversations.create(title="t", model="m")
    with pytest.raises(ValueError, match="bad row"):
        await store.messages.add_many(conversation.id, _rows(BATCH * 3, fail_at=BATCH * 2 + 1))
    assert await store.messages.ids(conversation.id) == []
    [info] = await store.conversations.all()
    assert (info.message_count, info.token_count) == (0, 0)


async def test_import_pins_the_right_messages_and_reports_progress(
    store: Store, tmp_path: Path
) -> None:
    count = BATCH + 10
    messages: list[dict[str, Any]] = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"}
        for n in range(count)
    ]
    source = tmp_path / "ours.json"
    # Our own export format carries pins: one in the first batch, one in the second.
    source.write_text(
        json.dumps(
            {
                "format": "tui-chat",
                "version": 1,
                "conversation": {"title": "pinned", "model": "m", "system": ""},
                "messages": [
                    {
                        **m,
                        "content": [{"type": "text", "text": m["content"]}],
                        **({"pinned": True, "pin_note": f"pin {n}"} if n in (3, BATCH + 4) else {}),
                    }
                    for n, m in enumerate(messages)
                ],
            }
        )
    )
    seen: list[int] = []
    made = await import_conversation(
        store, source, default_model="m", counter=get_counter(), progress=seen.append
    )
    assert seen[-1] == count
    pinned = await store.anchors.pinned(made.id)
    texts = sorted(message.text for _, message in pinned)
    assert texts == sorted(["message 3", f"message {BATCH + 4}"])
