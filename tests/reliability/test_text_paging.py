"""The Markdown export and the text ``show`` read and write a page of messages at a time, as the
JSON and HTML ones do: never the whole conversation at once (memory flat in its length), and
the same text as made of the whole history at once, controls made inert the same way.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.helpers import run_main
from tui_chat.cli import commands
from tui_chat.config import load_config
from tui_chat.core.inert import inert
from tui_chat.engine.conversations import MessageLog
from tui_chat.engine.transfer import export_stream, transfer
from tui_chat.store.messages import Messages
from tui_chat.store.repository import Store

HOSTILE = "line\r\nnext \x1b[31mred\x1b[0m \x9b2J bell\x07 end\r"
"""Text whose controls the terminal output makes visible (a CRLF split between two pieces
would come out unlike the whole text's)."""


def _conversation(tmp_path: Path, count: int) -> Path:
    source = tmp_path / f"c{count}.json"
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} «é» {HOSTILE}"}
        for i in range(count)
    ]
    data = {"title": f"{count} messages", "system": "be\nbrief", "messages": messages}
    source.write_text(json.dumps(data))
    return source


class Reads:
    """Every read of a conversation's messages, with its limit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.limits: list[int | None] = []
        history = Messages.history

        async def noted(store: Messages, conversation_id: str, **kwargs: Any) -> Any:
            self.limits.append(kwargs.get("limit"))
            return await history(store, conversation_id, **kwargs)

        monkeypatch.setattr(Messages, "history", noted)

    def bounded(self, page: int) -> bool:
        """Whether every read so far took at most ``page`` messages (and there was one)."""
        return bool(self.limits) and all(n is not None and n <= page for n in self.limits)


async def _whole(db: Path) -> tuple[str, str]:
    """The oracle made of the whole history at once, the Markdown export, and the
    conversation's id."""
    store = await Store.open(db)
    try:
        conversation = await store.conversations.resolve("last")
        cid = conversation.id
        messages = await store.messages.history(cid)
    finally:
        await store.close()
    markdown = transfer.export_markdown(conversation, messages, {})
    return markdown, cid


@pytest.mark.parametrize("count", [1, 7])
def test_show_text_is_printed_a_page_at_a_time_and_is_the_same_text(
    cli_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    count: int,
) -> None:
    assert run_main(capsys, "import", str(_conversation(tmp_path, count))).code == 0
    whole = run_main(capsys, "show", "last")  # the oracle: every message in one page
    assert whole.code == 0, whole.err

    async def no_whole_history(self: MessageLog, conversation_id: str) -> None:
        raise AssertionError("show read the whole history at once")

    monkeypatch.setattr(MessageLog, "history", no_whole_history)
    monkeypatch.setattr(commands, "SHOW_PAGE", 3)  # 1, 7: one page, a part page, full pages
    reads = Reads(monkeypatch)
    paged = run_main(capsys, "show", "last")
    assert paged.code == 0, paged.err
    assert reads.bounded(3)
    assert paged.out == whole.out
    assert "\x1b" not in paged.out and "\x9b" not in paged.out  # made inert
    assert paged.out.count("\n--- #") == count


def test_the_markdown_export_is_read_a_page_at_a_time_to_stdout_and_to_a_file(
    cli_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert run_main(capsys, "import", str(_conversation(tmp_path, 7))).code == 0
    markdown, cid = asyncio.run(_whole(load_config().db_path))
    reads = Reads(monkeypatch)
    out = run_main(capsys, "export", cid)
    assert out.code == 0, out.err
    assert reads.bounded(export_stream.PAGE)
    assert out.out == inert(markdown)  # the whole text made inert at once
    reads.limits.clear()
    target = tmp_path / "out.md"
    assert run_main(capsys, "export", cid, "--output", str(target)).code == 0
    assert reads.bounded(export_stream.PAGE)
    assert target.read_bytes() == inert(markdown).encode()  # a file cats as the screen


@pytest.mark.parametrize("page", [1, 3, 1_000])
def test_the_markdown_export_written_in_pages_is_the_export(
    cli_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    page: int,
) -> None:
    assert run_main(capsys, "import", str(_conversation(tmp_path, 7))).code == 0
    db = load_config().db_path
    markdown, cid = asyncio.run(_whole(db))
    assert "> System: be\n> brief" in markdown

    async def paged() -> list[str]:
        parts: list[str] = []
        store = await Store.open(db)
        try:
            (message, *_) = await store.messages.history(cid, limit=1)
            await store.anchors.pin(message.id, "kept")
            reads.limits.clear()
            await export_stream.write_markdown_export(store, cid, parts.append, page)
            assert reads.bounded(page)
            conversation = await store.conversations.get(cid)
            whole = transfer.export_markdown(
                conversation, await store.messages.history(cid), {message.id: "kept"}
            )
        finally:
            await store.close()
        assert "".join(parts) == whole
        assert "(pinned)" in whole
        return parts

    reads = Reads(monkeypatch)
    parts = asyncio.run(paged())
    assert all(part.endswith("\n") for part in parts)  # no CRLF split between two pieces
    assert len(parts) == 1 + -(-7 // page)  # the heading, then one piece a page
