"""A damaged or changed server-compaction block.

Malformed JSON in ``summaries.compaction_block`` no longer crashes whatever reads the version
(the TUI at start, ``show``, ``versions``): the version is read as its text summary and
``doctor`` names it with the way out. A block whose text was changed (its signature no longer
matches, a 400 "invalid signature" on every send) gets an error naming the summary version and
the exact roll back; after it the conversation sends again.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_summary_cost import Make, open_chat, talk
from tests.reliability.helpers import execute, rows
from tests.seam import engine_of
from tui_chat.engine.service import ChatService


async def _server_version(make_service: Make) -> tuple[ChatService, str, int, int]:
    """A conversation with a text version then a server-compaction version in force."""
    service, cid = await open_chat(
        make_service, preset="window", summarizer="extractive", keep_recent="2"
    )
    await talk(service, cid, range(1, 5))
    text_version = await service.summaries.compact(cid)
    await service.conversations.set_setting(cid, "summarizer", "server")
    await talk(service, cid, range(5, 8))
    server_version = await service.summaries.compact(cid)
    assert server_version.compaction_block is not None
    return service, cid, text_version.version, server_version.version


async def test_malformed_block_json_is_read_as_text_and_reported_by_doctor(
    make_service: Make, fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    service, cid, _, version = await _server_version(make_service)
    db = Path(service.db_path)
    execute(
        db,
        'UPDATE summaries SET compaction_block = \'{"type": "compaction", "content": \' '
        "WHERE conversation_id = ? AND version = ?",
        (cid, version),
    )
    active = await engine_of(service).store.summaries.active(cid)
    assert active is not None and active.compaction_block is None
    assert active.text  # sent as its text summary
    report = await service.maintenance.doctor()
    assert str(report["summaries"]).startswith("1 damaged compaction block")
    assert f"{cid} version {version} (in force): not valid JSON" in str(report["summaries"])
    assert "tui-chat rollback" in str(report["summaries"])
    outcome = await service.send(cid, "still there?")
    assert outcome.error is None, outcome.error
    first = fake_anthropic.message_requests[-1].body["messages"][0]
    assert "compaction" not in json.dumps(first)


async def test_a_changed_block_names_the_version_and_the_roll_back(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service, cid, text_version, version = await _server_version(make_service)
    db = Path(service.db_path)
    raw = rows(
        db,
        "SELECT compaction_block FROM summaries WHERE conversation_id = ? AND version = ?",
        (cid, version),
    )[0]["compaction_block"]
    block = json.loads(raw)
    block["content"] += " (edited)"
    execute(
        db,
        "UPDATE summaries SET compaction_block = ? WHERE conversation_id = ? AND version = ?",
        (json.dumps(block), cid, version),
    )
    outcome = await service.send(cid, "does this send?")
    assert outcome.error is not None and outcome.error.status == 400
    assert f"summary version {version}" in outcome.error.message
    assert f"tui-chat rollback {cid} {text_version}" in outcome.error.hint
    assert "probably a bug" not in outcome.error.hint
    await service.summaries.activate(cid, text_version)
    retried = await service.retry(cid)
    assert retried.error is None, retried.error
