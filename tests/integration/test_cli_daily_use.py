"""What a daily user of the command line reads: the list by families of branches, the budget
warning saying what the next send does, the features of every model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
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


def test_models_names_every_feature_of_each_model_or_says_none_is_known(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    shown = run(isolated_env, "models", fake=fake_anthropic)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line for line in shown.stdout.splitlines()[1:]}
    listed = js(run(isolated_env, "models", "--json", fake=fake_anthropic))["models"]
    listed = {r["id"]: r for r in listed}
    sonnet = listed["claude-sonnet-4-6"]["features"]
    assert "citations" in sonnet  # not among the picker's few
    assert lines["claude-sonnet-4-6"].endswith(" · " + ", ".join(sonnet))
    assert lines["gateway-llama"].endswith("no features listed by the endpoint")
    assert lines["claude-opus-4-6"].endswith("features unknown (not on the endpoint's list)")


def test_a_failed_prompt_is_left_out_of_the_summary_as_of_requests(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    (isolated_env / "config").mkdir(parents=True, exist_ok=True)  # the 529 is not retried
    (isolated_env / "config" / "config.toml").write_text("[api]\nmax_retries = 0\n")
    assert run(isolated_env, "send", "--new", "first question", fake=fake_anthropic).returncode == 0
    fake_anthropic.push_error(529, error_type="overloaded_error", message="Overloaded")
    failed = run(isolated_env, "send", "doomed prompt", fake=fake_anthropic)
    assert failed.returncode == 1
    for text in ("third question", "fourth question"):
        assert run(isolated_env, "send", text, fake=fake_anthropic).returncode == 0
    assert "doomed prompt" not in json.dumps(fake_anthropic.bodies[-1])  # out of requests
    conv = js(run(isolated_env, "list", "--json"))[0]["id"]
    assert run(isolated_env, "set", conv, "keep_recent", "2").returncode == 0
    sent = len(fake_anthropic.bodies)
    version = js(run(isolated_env, "compact", conv, "--json", fake=fake_anthropic))
    summary_calls = fake_anthropic.bodies[sent:]
    assert summary_calls and version["status"] == "completed"
    assert all("doomed prompt" not in json.dumps(body) for body in summary_calls)
    assert "third question" in json.dumps(summary_calls[-1])  # the span was summarised
    shown = js(run(isolated_env, "summary", conv, str(version["version"]), "--json"))
    assert "doomed prompt" not in shown["text"]


def test_an_imported_copys_usage_is_shown_apart_not_counted_as_new_spend(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    assert run(isolated_env, "send", "--new", "first question", fake=fake_anthropic).returncode == 0
    for text in ("second question", "third question"):
        assert run(isolated_env, "send", text, fake=fake_anthropic).returncode == 0
    conv = js(run(isolated_env, "list", "--json"))[0]["id"]
    assert run(isolated_env, "set", conv, "keep_recent", "2").returncode == 0
    assert run(isolated_env, "compact", conv, fake=fake_anthropic).returncode == 0
    before = js(run(isolated_env, "usage", "--json"))
    assert before["total_usd"] > 0 and before["imported"]["usd"] == 0
    exported = tmp_path / "copy.json"
    assert run(isolated_env, "export", conv, "-o", str(exported)).returncode == 0
    assert run(isolated_env, "import", str(exported)).returncode == 0
    after = js(run(isolated_env, "usage", "--json"))
    assert after["total_usd"] == before["total_usd"]  # before: the copy's spend added again
    assert after["imported"]["usd"] == before["total_usd"]
    calls = sum(r["summary_calls"] for r in before["rows"])
    assert after["imported"]["summary_calls"] == calls
    text = run(isolated_env, "usage").stdout
    assert "imported copies: $" in text and "not counted above" in text
    # What is sent in the copy after its import is new spend.
    copy = next(c["id"] for c in js(run(isolated_env, "list", "--json")) if c["id"] != conv)
    assert run(isolated_env, "send", "-c", copy, "more", fake=fake_anthropic).returncode == 0
    assert js(run(isolated_env, "usage", "--json"))["total_usd"] > after["total_usd"]
