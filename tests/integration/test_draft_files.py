"""Files alone are a message, and files belong to the draft."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tests.seam import engine_of
from tui_chat.engine.files import read_attachment
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


@pytest.mark.slow  # real tui-chat processes
def test_cli_sends_a_pdf_with_no_typed_text(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    doc = tmp_path / "doc.pdf"
    doc.write_bytes(sample_files.pdf(2))  # more than 1,000 tokens: the size check runs
    result = run(isolated_env, "send", "--new", "--attach", str(doc), "", fake=fake_anthropic)
    assert result.returncode == 0, result.stderr
    content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
    assert [block["type"] for block in content] == ["document"]


async def test_draft_files_are_kept_across_a_restart_and_a_deleted_conversation(
    make_service: Make, tmp_path: Path
) -> None:
    service = await make_service()
    kept = await service.conversations.new("kept")
    gone = await service.conversations.new("gone")
    (tmp_path / "a.png").write_bytes(sample_files.png(40, 30))
    (tmp_path / "b.pdf").write_bytes(sample_files.pdf(1))
    files = [read_attachment(tmp_path / "a.png"), read_attachment(tmp_path / "b.pdf")]
    await service.drafts.set_files(kept.id, files)
    await service.drafts.set_files(gone.id, files[:1])
    assert await service.drafts.get(kept.id) == ""  # files alone are a draft
    await service.drafts.set(kept.id, "about these")
    await service.conversations.delete(gone.id)  # its files are still the other draft's
    await service.close()
    reopened = await make_service()
    assert [f.name for f in await reopened.drafts.files(kept.id)] == ["a.png", "b.pdf"]
    assert [f.sha256 for f in await reopened.drafts.files(kept.id)] == [f.sha256 for f in files]
    assert await reopened.drafts.get(kept.id) == "about these"
    # Blank text keeps the draft while files are attached; no files and no text: no row.
    await reopened.drafts.set(kept.id, "")
    assert len(await reopened.drafts.files(kept.id)) == 2
    await reopened.drafts.set_files(kept.id, [])
    async with engine_of(reopened).store.connection.execute(
        "SELECT count(*) FROM drafts"
    ) as cursor:
        row = await cursor.fetchone()
    assert row is not None and row[0] == 0
