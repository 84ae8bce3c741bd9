"""A summary reply that does not follow the format (no ``<summary>…</summary>`` tags: a plain
recap) is kept as a failed version with the reason, and the active version stays: such a
reply was activated (``tui-chat compact C`` → "v2 completed"). The summarizer is the real
model path against the standalone fake server, scripted to answer the summary request plainly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.helpers import StandaloneFake, import_conversation, run_here, write_config

pytestmark = pytest.mark.slow  # the standalone fake server

TURNS = [
    {"role": "user", "content": "where is the parser?"},
    {"role": "assistant", "content": "the parser lives in src/parser_main.py"},
    {"role": "user", "content": "and the zebra config?"},
    {"role": "assistant", "content": "zebra settings are in zebra.toml"},
] * 5


def test_a_summary_reply_without_tags_fails_and_the_active_version_stays(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    home, url = isolated_env, standalone_fake.base_url
    write_config(home)
    cid = import_conversation(home, tmp_path, TURNS, "format")
    assert run_here(home, "set", cid, "summarizer", "claude").returncode == 0
    first = run_here(home, "compact", cid, "--json", base_url=url)
    assert first.returncode == 0, first.stderr
    active = json.loads(first.stdout)
    assert active["status"] == "completed" and active["active"]
    for n in range(4):  # more to compact
        sent = run_here(home, "send", "-c", cid, f"question {n} about the parser", base_url=url)
        assert sent.returncode == 0, sent.stderr
    standalone_fake.push(
        target="summary",
        text="Here is a recap: the user asked where the parser and the zebra config are; "
        "they are in src/parser_main.py and zebra.toml.",
        times=1,
    )
    second = run_here(home, "compact", cid, "--json", base_url=url)
    versions = json.loads(run_here(home, "summaries", cid, "--json").stdout)
    newest = max(versions, key=lambda v: v["version"])
    assert newest["version"] == active["version"] + 1
    assert newest["status"] == "failed", (second.stdout, second.stderr)
    assert "<summary>" in (newest.get("error") or ""), newest
    in_force = [v for v in versions if v["active"]]
    assert [v["version"] for v in in_force] == [active["version"]]
