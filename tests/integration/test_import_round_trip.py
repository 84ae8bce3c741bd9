"""Import restores what export wrote: a JSON export imported back is the same
conversation — messages as stored, pins, every summary version with the one in force, where a
fork came from — and the same file imported again is refused unless forced."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tui_chat.engine.service import ChatService

pytestmark = pytest.mark.slow  # real processes

Make = Callable[..., Awaitable[ChatService]]


async def _picture(service: ChatService, cid: str) -> dict[str, Any]:
    """Everything the conversation is, with its own ids replaced by positions."""
    conversation = await service.conversations.get(cid)
    messages = await service.messages.history(cid)
    position = {m.id: i for i, m in enumerate(messages)}
    pinned = await service.messages.pinned_ids(cid)
    summaries = await service.summaries.versions(cid)
    versions = {s.id: s.version for s in summaries}
    fork = await service.branches.parent(cid)

    def ledger(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**e, "ids": [position[i] for i in e.get("ids", [])]} for e in entries]

    return {
        "conversation": (
            conversation.title,
            conversation.model,
            conversation.system_prompt,
            conversation.settings,
        ),
        "messages": [
            (
                m.role,
                m.content,
                m.text,
                m.turn,
                m.token_count,
                m.status,
                m.model,
                m.usage,
                m.stop_reason,
                m.error,
                m.created_at,
            )
            for m in messages
        ],
        "pins": sorted(position[i] for i in pinned),
        "summaries": [
            (
                s.version,
                versions.get(s.parent_id) if s.parent_id else None,
                position[s.covers_to_message_id],
                s.status,
                s.strategy,
                s.text,
                s.segments,
                s.fields,
                s.covered_messages,
                s.source_tokens,
                s.summary_tokens,
                s.trigger,
                s.instructions,
                s.summarizer,
                s.identifiers_kept,
                s.identifiers_total,
                s.error,
                s.call,
                s.compaction_block,
                ledger(s.ledger),
                s.created_at,
                s.completed_at,
            )
            for s in summaries
        ],
        "active": versions.get(conversation.active_summary_id or 0),
        "fork": (fork.parent_id, fork.parent_message_id) if fork else None,
    }


async def test_a_json_export_imported_back_is_the_same_conversation(
    make_service: Make, fake_anthropic: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    service = await make_service()
    origin = await service.conversations.new("origin")
    for key, value in (("preset", "window"), ("keep_recent", "2"), ("summarizer", "offline")):
        await service.conversations.set_setting(origin.id, key, value)
    for i in range(1, 9):
        outcome = await service.send(origin.id, f"Turn {i}: build {i} uses port {8000 + i}.")
        assert outcome.error is None
        await service.finish_background()
        if i in (4, 6, 8):
            await service.summaries.compact(origin.id, "keep the ports" if i == 6 else None)
    history = await service.messages.history(origin.id)
    await service.messages.pin(history[2].id, "the port of build 2")
    fork = await service.branches.fork(origin.id, history[-3].id)
    await service.messages.pin((await service.messages.history(fork.id))[0].id)
    summaries = await service.summaries.versions(fork.id)
    assert len(summaries) >= 2
    await service.summaries.activate(fork.id, summaries[0].version)  # not the newest in force
    before = await _picture(service, fork.id)
    assert before["active"] == summaries[0].version and before["fork"] is not None

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run(isolated_env, "--db", str(isolated_env / "engine.db"), *args)

    exported = tmp_path / "fork.json"
    done = cli("export", fork.id, "-o", str(exported))  # .json: the JSON export
    assert done.returncode == 0, done.stderr
    imported = cli("import", str(exported), "--json")
    assert imported.returncode == 0, imported.stderr
    copy_id = json.loads(imported.stdout)["id"]
    assert copy_id != fork.id
    assert await _picture(service, copy_id) == before

    # The same file again: said, and nothing is copied; --force makes a copy on purpose.
    count = len(await service.conversations.list())
    again = cli("import", str(exported))
    assert again.returncode == 1
    assert "already imported" in again.stderr and copy_id in again.stderr
    assert "--force" in again.stderr
    assert len(await service.conversations.list()) == count
    forced = cli("import", str(exported), "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert await _picture(service, json.loads(forced.stdout)["id"]) == before
    assert len(await service.conversations.list()) == count + 1
