"""One retention figure per version: the identifiers of the covered messages
found in what the request actually sends for the version (summary + ledger), and the same
figure in ``summaries``, ``summary`` (text and ``--json``) and the engine's versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import coding
from tests.integration.test_cli import js, run
from tests.seam import engine_of, open_service
from tui_chat.config import Config
from tui_chat.core import ledger
from tui_chat.core.sent_memory import sent_memory
from tui_chat.engine.build import window_for
from tui_chat.engine.service import ChatService

WINDOW = "8000"
"""Small enough that the ledger cannot carry every identifier: the figure is not all-or-none."""


async def _compacted(service: ChatService, folder: Path) -> str:
    source = coding.export_file(coding.generate(turns=40), folder / "coding.json")
    conversation = await service.transfer.import_file(source)
    cid = conversation.id
    await service.conversations.set_setting(cid, "summarizer", "extractive")
    await service.conversations.set_setting(cid, "context_window", WINDOW)
    await service.summaries.compact(cid)
    return cid


async def test_the_figure_is_what_the_request_sends_and_every_view_shows_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chat.db"
    service = await open_service(Config(db_path=db, api_key=None), db)
    try:
        cid = await _compacted(service, tmp_path)
        active = await engine_of(service).store.summaries.active(cid)
        assert active is not None
        await service.messages.pin(active.covers_to_message_id - 3)  # pins rank the ledger
        figure = await service.summaries.retention(cid, active)
        kept, total = sum(figure.kept.values()), sum(figure.total.values())
        assert 0 < kept < total and figure.total.get("ticket") and figure.total.get("line")

        # What the next request really carries for the version holds exactly those.
        built = await service.requests.context(cid, "What should we do next?")
        memory = coding.memory_text(built.request)
        conversation = await service.conversations.get(cid)
        policy = service.conversations.policy_for(conversation)
        usable = window_for(service.catalog.info(conversation.model), policy).usable
        pinned = {m.id for _, m in await engine_of(service).store.anchors.pinned(cid)}
        assert sent_memory(active, policy, usable, engine_of(service).counter, pinned) in memory
        covered = await engine_of(service).store.messages.texts(
            cid, up_to_id=active.covers_to_message_id
        )
        assert ledger.retention(covered, memory) == figure

        # The versions the engine hands the timeline, the inspector and the CLI carry it.
        listed = {s.id: s for s in await service.summaries.versions(cid)}[active.id]
        one = await service.summaries.version(cid, active.version)
        for version in (listed, one):
            assert (version.identifiers_kept, version.identifiers_total) == (kept, total)
    finally:
        await service.close()


@pytest.mark.slow  # real tui-chat processes
def test_summary_text_json_and_summaries_agree(isolated_env: Path, tmp_path: Path) -> None:
    source = coding.export_file(coding.generate(turns=40), tmp_path / "coding.json")
    cid = str(js(run(isolated_env, "import", str(source), "--json"))["id"])
    for key, value in (("summarizer", "extractive"), ("context_window", WINDOW)):
        assert run(isolated_env, "set", cid, key, value, key=None).returncode == 0
    compacted = js(run(isolated_env, "compact", cid, "--json", key=None))
    version = str(compacted["version"])
    data = js(run(isolated_env, "summary", cid, version, "--json", key=None))
    kept, total = data["retention"]["kept"], data["retention"]["total"]
    assert 0 < kept < total
    assert (data["identifiers_kept"], data["identifiers_total"]) == (kept, total)
    assert (compacted["identifiers_kept"], compacted["identifiers_total"]) == (kept, total)
    listing = js(run(isolated_env, "summaries", cid, "--json", key=None))
    row = next(s for s in listing if s["version"] == compacted["version"])
    assert (row["identifiers_kept"], row["identifiers_total"]) == (kept, total)
    text = run(isolated_env, "summary", cid, version, key=None).stdout
    assert f"identifiers kept {kept}/{total} (summary + ledger as sent)" in text
    assert f"identifiers kept (summary + ledger): {kept}/{total}" in text
    lines = run(isolated_env, "summaries", cid, key=None).stdout
    assert f"ids {kept}/{total}" in lines


def test_figures_of_many_versions_keep_pairs_and_only_the_last_answers_whole() -> None:
    from tui_chat.core.ledger import Retention
    from tui_chat.engine.conversations import KeptFigures

    kept = KeptFigures()
    for n in range(20):
        kept.put((n,), Retention({"path": n}, {"path": 20}, [("path", f"p{n}")] * (20 - n)))
    assert len(kept.full) == KeptFigures.FULL and len(kept.figures) == 20
    assert kept.figures[(0,)] == (0, 20) and kept.get((0,)) is None
    assert kept.get((19,)) is not None
    kept.clear()
    assert not kept.figures and not kept.full


async def test_a_retention_figure_leaves_the_request_builds_ledger_cache_alone(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chat.db"
    service = await open_service(Config(db_path=db, api_key=None), db)
    try:
        cid = await _compacted(service, tmp_path)
        await service.requests.context(cid, "What next?")
        before = ledger._render.cache_info()
        await service.summaries.versions(cid)
        after = ledger._render.cache_info()
        assert (after.hits, after.misses) == (before.hits, before.misses)
    finally:
        await service.close()
