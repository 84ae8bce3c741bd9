"""A deterministic demo conversation, stored through the engine (tests and screenshots).

Messages are imported with fixed ``created_at`` times, then compacted into several summary
versions with the offline summarizer, and one message is pinned — everything through
:class:`~tui_chat.engine.service.ChatService`, as a user would.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui_chat.core.models import Conversation
from tui_chat.engine.service import ChatService

START = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
"""When the demo conversation starts."""

TURNS: list[tuple[str, str]] = [
    (
        "We're moving our Flask inventory app from SQLite to PostgreSQL 16. "
        "The models live in `app/models.py` and migrations in `migrations/`. Where do I start?",
        "Start by freezing the schema: run `flask db upgrade` so `migrations/` matches "
        "`app/models.py`, then take a backup with `sqlite3 inventory.db .dump > backup.sql`.\n\n"
        "1. Add `psycopg[binary]==3.2.1` to `requirements.txt`.\n"
        "2. Point `SQLALCHEMY_DATABASE_URI` at `postgresql+psycopg://inv@localhost:5432/inventory`.\n"
        "3. Run the migrations against the empty database before copying any data.",
    ),
    (
        "Decision: we keep Alembic and do NOT switch to raw SQL migrations. "
        "Our `Item.sku` column is TEXT in SQLite; what type in Postgres?",
        "Use `VARCHAR(32)` with a unique index — SKUs are at most 24 characters today, so 32 "
        "leaves room. In `app/models.py`:\n\n"
        "```python\n"
        "sku = db.Column(db.String(32), unique=True, nullable=False, index=True)\n"
        "```\n\n"
        'Generate the revision with `flask db migrate -m "sku varchar"` and review it.',
    ),
    (
        "The copy script fails on `stock_movements` with "
        '`invalid input syntax for type timestamp: "1710403200"`.',
        "SQLite stored those as Unix epochs. Convert while copying: "
        "`to_timestamp(1710403200)` in SQL, or in Python "
        "`datetime.fromtimestamp(value, tz=UTC)`. Patch `scripts/copy_data.py` line 88 to "
        "convert `created_at` and `moved_at` for that table only.",
    ),
    (
        "Fixed. Now 41,872 rows copied. How do I check nothing was lost?",
        "Compare counts and checksums per table:\n\n"
        "```sql\nSELECT count(*), md5(string_agg(sku || qty, ',' ORDER BY id)) FROM items;\n```\n\n"
        "Run the same aggregate in SQLite with `group_concat`; the counts must match exactly "
        "(41,872) and the checksums too once the epoch columns are excluded.",
    ),
    (
        "Counts match. Sequences are wrong though: inserting a new item gives a duplicate key.",
        "After a bulk copy the sequences still start at 1. Reset each one:\n\n"
        "```sql\nSELECT setval('items_id_seq', (SELECT max(id) FROM items));\n```\n\n"
        "Do the same for `stock_movements_id_seq` and `suppliers_id_seq`.",
    ),
    (
        "Please remember: production cutover is Saturday 02:00 UTC, maintenance window 45 "
        "minutes, rollback plan is restoring `backup.sql`.",
        "Noted: cutover Saturday 02:00 UTC, a 45-minute window, rollback = restore "
        "`backup.sql` into SQLite and redeploy the previous image `inventory:1.14.2`.",
    ),
    (
        "What connection pool settings for gunicorn with 4 workers?",
        "With 4 sync workers use `pool_size=5, max_overflow=5` per worker: at most 40 "
        "connections, under Postgres' default `max_connections=100`. Set "
        '`SQLALCHEMY_ENGINE_OPTIONS = {"pool_pre_ping": True, "pool_size": 5}`.',
    ),
    (
        "The `/reports/monthly` endpoint got slower: 2.4 s instead of 300 ms.",
        "SQLite's query planner forgave the missing index. Add one on "
        "`stock_movements(item_id, moved_at)` and check with `EXPLAIN ANALYZE`; expect an "
        "index scan and well under 100 ms for a month of data.",
    ),
    (
        "Index added, 85 ms now. Anything else before Saturday?",
        "Three things: run `VACUUM ANALYZE` after the final copy, rehearse the cutover once "
        "on staging with a fresh dump, and put the `pg_dump` backup job in cron at 03:30 UTC.",
    ),
    (
        "Rehearsal on staging took 31 minutes. Is that enough margin?",
        "Yes: 31 of 45 minutes leaves 14 minutes for the checks. Keep the checksum query "
        "ready and decide go/no-go at 02:35 UTC at the latest.",
    ),
    (
        "Write me the go/no-go checklist.",
        "**Go/no-go at 02:35 UTC**\n\n"
        "- [ ] counts and checksums match for `items`, `stock_movements`, `suppliers`\n"
        "- [ ] sequences reset (`setval`)\n"
        "- [ ] `/reports/monthly` under 200 ms\n"
        "- [ ] `pg_dump` cron job installed\n\n"
        "Any unchecked box at 02:35 → roll back to `backup.sql` and `inventory:1.14.2`.",
    ),
    (
        "Thanks. One last thing: how do we monitor slow queries after cutover?",
        "Enable `pg_stat_statements` and set `log_min_duration_statement = 250` in "
        "`postgresql.conf`; review the top 10 by total time every morning for the first week.",
    ),
]
"""(user, assistant) text of each turn."""

PINNED_TURN = 5
"""Index of the turn whose user message (the cutover plan) is pinned."""


def export_file(path: Path, turns: list[tuple[str, str]] = TURNS) -> Path:
    """Write the demo as a tui-chat JSON export with fixed times; returns ``path``."""
    messages = []
    moment = START
    for index, (user, assistant) in enumerate(turns):
        for role, text in (("user", user), ("assistant", assistant)):
            messages.append(
                {
                    "role": role,
                    "content": [{"type": "text", "text": text}],
                    "created_at": moment.isoformat(timespec="microseconds"),
                    "status": "complete",
                    "pinned": role == "user" and index == PINNED_TURN,
                    "pin_note": "cutover plan",
                }
            )
            moment += timedelta(minutes=3)
    data = {
        "format": "tui-chat",
        "version": 1,
        "conversation": {
            "title": "Flask inventory: SQLite → PostgreSQL",
            "system": "You are a senior backend engineer. Be concise and exact.",
            "model": "claude-sonnet-4-5",
            "settings": {"preset": "window"},
        },
        "messages": messages,
    }
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


async def seed_demo(
    service: ChatService, folder: Path, *, summaries: bool = True, turns: int = len(TURNS)
) -> Conversation:
    """Import the demo conversation and (optionally) compact it into three versions.

    v1 covers the older half, v2 continues from v1 over more turns (all but the last sixth of
    the messages), v3 regenerates v2 with instructions and is the one in force.

    Args:
        service: An open engine (no API key needed: the offline summarizer is used).
        folder: Where to write the import file.
        summaries: Create the summary versions.
        turns: How many of the demo's turns to import (at least 6, so the pinned one is in):
            a test that only needs the conversation's shape (versions, a pin, more than a
            screenful) takes fewer, and every screen it opens lays out fewer messages.
    """
    assert PINNED_TURN < turns <= len(TURNS)
    path = export_file(folder / "demo.json", TURNS[:turns])
    conversation = await service.transfer.import_file(path)
    if summaries:
        messages = 2 * turns
        await service.conversations.set_setting(conversation.id, "keep_recent", str(messages // 2))
        await service.summaries.compact(conversation.id)
        await service.conversations.set_setting(conversation.id, "keep_recent", str(messages // 6))
        await service.summaries.compact(conversation.id)
        await service.summaries.regenerate(
            conversation.id, 2, "keep every command, file path and number exactly"
        )
    return await service.conversations.resolve(conversation.id)
