"""What a daily user of the command line reads: the list by families of branches, the budget
warning saying what the next send does, the features of every model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli import js, run

pytestmark = pytest.mark.slow  # real tui-chat processes


def _import(home: Path, folder: Path, title: str, turns: int, words: int = 3) -> str:
    messages = [
        {"role": ("user", "assistant")[i % 2], "content": f"{title} message {i} " + "word " * words}
        for i in range(2 * turns)
    ]
    path = folder / f"{title}.json"
    path.write_text(json.dumps({"title": title, "messages": messages}))
    return str(js(run(home, "import", str(path), "--json"))["id"])


def test_list_shows_a_line_per_family_and_branches_shows_every_branch(
    isolated_env: Path, tmp_path: Path
) -> None:
    root = _import(isolated_env, tmp_path, "Harbour", 2)
    other = _import(isolated_env, tmp_path, "Lighthouse", 1)
    first = js(run(isolated_env, "show", root, "--json"))["messages"][1]["id"]
    for _ in range(2):
        assert run(isolated_env, "fork", root, "--at", str(first)).returncode == 0
    listed = run(isolated_env, "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert len(lines) == 2, lines  # before: a line for each of the four conversations
    harbour = next(line for line in lines if "Harbour" in line)
    assert harbour.endswith("⑂3")
    assert not any("⑂" in line for line in lines if other[:8] in line)
    every = run(isolated_env, "list", "--branches").stdout.strip().splitlines()
    assert len(every) == 4 and not any("⑂" in line for line in every)
    assert len(js(run(isolated_env, "list", "--json"))) == 4  # JSON: every branch


def test_the_budget_warning_says_the_next_send_summarises_the_oldest_turns(
    isolated_env: Path, tmp_path: Path
) -> None:
    conv = _import(isolated_env, tmp_path, "Long", 40, words=450)  # about 38k tokens
    assert run(isolated_env, "set", conv, "budget", "30000").returncode == 0
    warnings = js(run(isolated_env, "context", conv, "--json"))["breakdown"]["warnings"]
    turns = [w for w in warnings if "oldest turn(s)" in w]
    assert turns, warnings
    assert "will be summarised at the next send" in turns[0]
    assert "left out to fit" not in turns[0]  # before: said they were left out
