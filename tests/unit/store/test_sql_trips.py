"""A read is one trip to the connection's thread (store/sql.py): a request's build reads some
twenty times, and each trip is a hand-over between two threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiosqlite

from tui_chat.store.sql import Sql


async def test_a_read_is_one_trip_to_the_connection_s_thread(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "t.db") as db:
        await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        await db.executemany("INSERT INTO t (v) VALUES (?)", [("a",), ("b",), ("c",)])
        sql = Sql(db)
        trips: list[Any] = []
        queue = db._execute

        async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
            trips.append(fn)
            return await queue(fn, *args, **kwargs)

        db._execute = counted  # type: ignore[method-assign]
        assert [tuple(r) for r in await sql.all("SELECT id, v FROM t ORDER BY id")] == [
            (1, "a"),
            (2, "b"),
            (3, "c"),
        ]
        assert len(trips) == 1
        row = await sql.one("SELECT v FROM t WHERE id = ?", (2,))
        assert row is not None and row[0] == "b"
        assert await sql.one("SELECT v FROM t WHERE id = ?", (9,)) is None
        assert len(trips) == 3
