"""``tui-chat compact --dry-run``: what a compact would fold and what the next request would
lose by it, printed before anything is compacted (real processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_cli import js, run
from tests.unit.engine.test_compact_preview import DRAFT, FACT, chat_export


@pytest.mark.slow  # real tui-chat processes
def test_compact_dry_run_names_what_the_draft_would_lose_and_compacts_nothing(
    isolated_env: Path, tmp_path: Path
) -> None:
    cid = js(
        run(isolated_env, "import", str(chat_export(tmp_path / "c.json")), "--json", key=None)
    )["id"]
    for key, value in (("summarizer", "extractive"), ("context_window", "4000"), ("recall", "off")):
        assert run(isolated_env, "set", cid, key, value, key=None).returncode == 0
    fact_id = next(
        m["id"]
        for m in js(run(isolated_env, "show", cid, "--json", key=None))["messages"]
        if m["text"] == FACT
    )
    text = run(isolated_env, "compact", cid, "--dry-run", "--draft", DRAFT, key=None)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.strip().splitlines()
    assert lines[0].startswith("Would fold ")
    assert lines[-1].startswith("Compacting would drop 1 message the next request needs: ")
    assert f'#{fact_id} "{FACT[:20]}' in lines[-1]
    data = js(run(isolated_env, "compact", cid, "--dry-run", "--draft", DRAFT, "--json", key=None))
    assert [m["id"] for m in data["lost"]] == [fact_id] and data["warning"] == lines[-1]
    assert js(run(isolated_env, "summaries", cid, "--json", key=None)) == []  # nothing compacted
    # Recall on: the fact comes back after the compact, and the preview says nothing of a loss.
    assert run(isolated_env, "set", cid, "recall", "on", key=None).returncode == 0
    quiet = js(run(isolated_env, "compact", cid, "--dry-run", "--draft", DRAFT, "--json", key=None))
    assert quiet["lost"] == [] and quiet["warning"] is None and quiet["messages"] > 0
