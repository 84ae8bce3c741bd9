"""``show --json`` reads and writes a page of messages at a time — the same JSON as before, without
ever holding the whole conversation (memory flat in its length).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import run_main
from tests.seam import engine_of
from tui_chat.cli import commands, render
from tui_chat.core.attachments import refs
from tui_chat.core.models import Message
from tui_chat.engine.conversations import MessageLog
from tui_chat.store.repository import Store


async def _whole_export(store: Store, conversation_id: str) -> str:
    """The oracle: the JSON export made in memory at once, attached files once each."""
    from tui_chat.engine.transfer import restore, transfer

    conversation = await store.conversations.get(conversation_id)
    history: list[Message] = await store.messages.history(conversation_id)
    pinned = {a.message_id: a.note for a, _ in await store.anchors.pinned(conversation_id)}
    wanted: dict[str, Any] = {}
    for message in history:
        for ref in refs(message.content):
            wanted.setdefault(str(ref.get("sha256")), ref)
    data = await store.attachments.data(wanted)
    files = [
        {
            "sha256": sha,
            "media_type": str(ref.get("media_type")),
            "size": len(data[sha]),
            "data": base64.b64encode(data[sha]).decode("ascii"),
        }
        for sha, ref in wanted.items()
        if sha in data
    ]
    active = conversation.active_summary_id
    whole = {
        **transfer.export_head(conversation),
        "messages": [transfer.message_export(m, pinned) for m in history],
        "summaries": [
            restore.summary_export(s, active)
            for s in await store.summaries.versions(conversation_id)
        ],
        "fork": restore.fork_export(await store.forks.get(conversation_id)),
        "attachments": files,
    }
    return json.dumps(whole, ensure_ascii=False, indent=2)


def _conversation(tmp_path: Path, count: int) -> Path:
    source = tmp_path / f"c{count}.json"
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} «é»"}
        for i in range(count)
    ]
    source.write_text(json.dumps({"title": f"{count} messages", "messages": messages}))
    return source


@pytest.mark.parametrize("count", [1, 7, 12])
def test_show_json_is_written_a_page_at_a_time_and_is_the_same_json(
    cli_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    count: int,
) -> None:
    assert run_main(capsys, "import", str(_conversation(tmp_path, count))).code == 0

    async def no_whole_history(self: MessageLog, conversation_id: str) -> None:
        raise AssertionError("show --json read the whole history at once")

    monkeypatch.setattr(MessageLog, "history", no_whole_history)
    monkeypatch.setattr(commands, "SHOW_PAGE", 3)  # 1, 7, 12: one page, a part page, full pages
    paged = run_main(capsys, "show", "last", "--json")
    assert paged.code == 0, paged.err
    data = json.loads(paged.out)
    assert [m["text"] for m in data["messages"]] == [f"message {i} «é»" for i in range(count)]
    assert data["conversation"]["title"] == f"{count} messages"
    # Byte for byte what printing the whole object at once prints.
    assert paged.out == render.json_text(data) + "\n"


@pytest.mark.slow  # a real process
async def test_the_json_export_written_in_pieces_is_the_export(
    make_service: Any, fake_anthropic: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes import sample_files
    from tests.integration.test_summary_cost import open_chat, talk
    from tui_chat.core.attachments import describe
    from tui_chat.engine.transfer import export_stream, transfer

    monkeypatch.setattr(transfer, "utc_now", lambda: "2026-01-01T00:00:00+00:00")
    service, cid = await open_chat(
        make_service, preset="window", summarizer="extractive", keep_recent="2"
    )
    image = describe("wiring.png", sample_files.png(40, 30))
    await service.send(cid, "look at this", attachments=[image])
    await talk(service, cid, range(1, 6))
    await service.summaries.compact(cid)
    messages = await engine_of(service).store.messages.history(cid)
    await service.messages.pin(messages[2].id, "keep this")
    fork = await service.branches.fork(cid, messages[5].id)
    for conversation_id in (cid, fork.id):
        store = engine_of(service).store
        whole = await _whole_export(store, conversation_id)
        for page in (1, 3, 1_000):
            parts: list[str] = []
            await export_stream.write_json_export(store, conversation_id, parts.append, page)
            assert "".join(parts) == whole
        assert json.loads(whole)["attachments"]  # the file is in both
