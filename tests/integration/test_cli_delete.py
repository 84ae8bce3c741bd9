"""``tui-chat delete MESSAGE_ID`` (``rm``): the message leaves show, search and export, the
summary versions that covered it say they are stale, an unknown id is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli import js, run

pytestmark = pytest.mark.slow  # real tui-chat processes


def test_delete_takes_the_message_out_and_marks_the_summary_stale(
    isolated_env: Path, tmp_path: Path
) -> None:
    messages = [
        {"role": ("user", "assistant")[i % 2], "content": f"turn {i} about tides " + "w " * 40}
        for i in range(16)
    ]
    messages[0]["content"] += " zebrafish-7731"
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"title": "Deleting", "messages": messages}))
    conv = str(js(run(isolated_env, "import", str(path), "--json"))["id"])
    assert run(isolated_env, "set", conv, "summarizer", "extractive").returncode == 0
    assert run(isolated_env, "compact", conv).returncode == 0
    first = js(run(isolated_env, "show", conv, "--json"))["messages"][0]["id"]
    assert run(isolated_env, "pin", str(first)).returncode == 0

    done = run(isolated_env, "rm", str(first))

    assert done.returncode == 0, done.stderr
    assert f"deleted message #{first}" in done.stdout
    assert f"unpinned #{first}" in done.stdout
    assert "marked stale" in done.stdout and "tui-chat regenerate" in done.stdout
    shown = js(run(isolated_env, "show", conv, "--json"))["messages"]
    assert first not in [m["id"] for m in shown]
    assert "zebrafish" not in run(isolated_env, "search", "zebrafish").stdout
    assert "zebrafish" not in run(isolated_env, "export", conv).stdout
    versions = js(run(isolated_env, "summaries", conv, "--json"))
    assert versions[0]["stale"] and f"#{first}" in versions[0]["stale"]
    second = shown[0]["id"]
    deleted = js(run(isolated_env, "delete", str(second), "--json"))
    assert deleted["deleted"] == [second] and deleted["conversation_id"] == conv
    missing = run(isolated_env, "delete", str(second))
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1, missing.stderr
