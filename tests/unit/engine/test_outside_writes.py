"""Another process writing the database: "database is locked" never reaches
the user — a write of this process while one of its reads is between steps waits for the read
instead of failing — and the TUI sees what another process wrote."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.seam import engine_of
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


async def test_a_write_while_a_read_is_between_steps_waits_instead_of_failing(
    make_service: Make, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = await make_service(api_key=None)
    for title in ("one", "two", "three", "four"):
        conversation = await service.conversations.new(title)
    connection = engine_of(service).store.connection
    begins = 0
    execute = connection.execute

    def counting(sql: str, *args: Any) -> Any:
        nonlocal begins
        begins += sql == "BEGIN IMMEDIATE"
        return execute(sql, *args)

    monkeypatch.setattr(connection, "execute", counting)
    # A read of this process stops between two steps (its statement holds a snapshot)...
    reading = await execute("SELECT id FROM conversations")
    assert await reading.fetchone() is not None
    # ...another process commits...
    other = sqlite3.connect(isolated_env / "engine.db")
    other.execute("UPDATE conversations SET title = 'renamed elsewhere' WHERE title = 'one'")
    other.commit()
    other.close()
    # ...and this process writes meanwhile (the composer's draft): SQLite refuses that BEGIN
    # at once ("database is locked"), without waiting. It must wait for the read instead.
    writing = asyncio.ensure_future(service.drafts.set(conversation.id, "typing on"))

    async def refused_once() -> None:
        while begins < 2 and not writing.done():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(refused_once(), 30)
    await reading.close()
    await writing
    assert await service.drafts.get(conversation.id) == "typing on"
