"""Issue 23, item 7 (part): ``show --json`` reads and writes a page of messages at a time —
the same JSON as before, without ever holding the whole conversation (memory flat in its
length)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.helpers import run_main
from tui_chat.cli import commands, render
from tui_chat.engine.service import ChatService


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

    async def no_whole_history(self: ChatService, conversation_id: str) -> None:
        raise AssertionError("show --json read the whole history at once")

    monkeypatch.setattr(ChatService, "history", no_whole_history)
    monkeypatch.setattr(commands, "SHOW_PAGE", 3)  # 1, 7, 12: one page, a part page, full pages
    paged = run_main(capsys, "show", "last", "--json")
    assert paged.code == 0, paged.err
    data = json.loads(paged.out)
    assert [m["text"] for m in data["messages"]] == [f"message {i} «é»" for i in range(count)]
    assert data["conversation"]["title"] == f"{count} messages"
    # Byte for byte what printing the whole object at once prints.
    assert paged.out == render.json_text(data) + "\n"
