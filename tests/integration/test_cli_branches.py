"""``fork``, ``send --attach`` and ``compact --upto`` from the command line (real processes)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.fakes import sample_files
from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import js, run


@pytest.mark.slow  # real tui-chat processes
def test_fork_send_attach_and_compact_upto(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.files.supported = False  # inline data (the Files API: test_files_api)
    image = tmp_path / "chart.png"
    image.write_bytes(sample_files.png(64, 48))
    sent = run(
        isolated_env, "send", "--new", "--attach", str(image), "what is it?", fake=fake_anthropic
    )
    assert sent.returncode == 0, sent.stderr
    content = fake_anthropic.bodies[-1]["messages"][-1]["content"]
    assert content[0]["type"] == "image"
    assert base64.b64decode(content[0]["source"]["data"]) == image.read_bytes()
    assert run(isolated_env, "send", "second", fake=fake_anthropic).returncode == 0
    messages = js(run(isolated_env, "show", "last", "--json"))["messages"]
    conv = js(run(isolated_env, "list", "--json"))[0]["id"]

    forked = js(run(isolated_env, "fork", conv, "--at", str(messages[1]["id"]), "--json"))
    assert forked["parent_id"] == conv and forked["messages"] == 2
    plain = run(isolated_env, "fork", conv, "--at", str(messages[1]["id"]), "--title", "B")
    assert plain.returncode == 0 and len(plain.stdout.strip()) == 12
    assert len(js(run(isolated_env, "show", conv, "--json"))["messages"]) == 4
    listed = {c["id"]: c for c in js(run(isolated_env, "list", "--json"))}
    assert listed[forked["id"]]["parent_id"] == conv and listed[conv]["parent_id"] is None
    shown = js(run(isolated_env, "show", forked["id"], "--json"))["conversation"]
    assert shown["parent_message_id"] == messages[1]["id"]

    run(isolated_env, "set", conv, "summarizer", "extractive")
    version = js(run(isolated_env, "compact", conv, "--upto", str(messages[0]["id"]), "--json"))
    assert version["covers_to_message_id"] == messages[1]["id"]


@pytest.mark.slow  # real tui-chat processes
def test_a_missing_or_oversized_attachment_sends_nothing(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(sample_files.png(8, 8, filler=5 * 1024 * 1024 + 1))
    refused = run(isolated_env, "send", "--new", "--attach", str(big), "hi", fake=fake_anthropic)
    assert refused.returncode == 1
    assert "big.png" in refused.stderr and "nothing was sent" in refused.stderr
    missing = run(
        isolated_env,
        "send",
        "--new",
        "--attach",
        str(tmp_path / "x.pdf"),
        "hi",
        fake=fake_anthropic,
    )
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert fake_anthropic.bodies == []
    bad = run(isolated_env, "fork", "last", "--at", "999")
    assert bad.returncode == 1


@pytest.mark.slow  # real tui-chat processes
def test_branches_and_switch(isolated_env: Path, fake_anthropic: FakeAnthropic) -> None:
    assert run(isolated_env, "send", "--new", "first", fake=fake_anthropic).returncode == 0
    assert run(isolated_env, "send", "second", fake=fake_anthropic).returncode == 0
    conv = js(run(isolated_env, "list", "--json"))[0]["id"]
    messages = js(run(isolated_env, "show", conv, "--json"))["messages"]
    fork = js(run(isolated_env, "fork", conv, "--at", str(messages[1]["id"]), "--json"))["id"]
    sent = run(isolated_env, "send", "-c", fork, "another second", fake=fake_anthropic)
    assert sent.returncode == 0, sent.stderr
    own = js(run(isolated_env, "show", fork, "--json"))["messages"][2]["id"]

    tree = js(run(isolated_env, "branches", fork, "--json"))
    assert tree["family_id"] == conv
    assert [(b["id"], b["depth"], b["shared_messages"]) for b in tree["branches"]] == [
        (conv, 0, 0),
        (fork, 1, 2),
    ]
    assert tree["branches"][1]["diverges_at_message_id"] == own
    assert tree["branches"][1]["messages"] == 4 and tree["branches"][1]["parent_id"] == conv
    text = run(isolated_env, "branches", conv).stdout
    assert f"diverges at #{own} after 2 shared" in text and "2 branches" in text

    switched = run(isolated_env, "switch", conv, "2")
    assert switched.returncode == 0, switched.stderr
    assert f"opens branch 2 of 2: {fork}" in switched.stdout
    assert js(run(isolated_env, "branches", conv, "--json"))["shown"] == fork
    assert run(isolated_env, "switch", conv, conv[:6]).returncode == 0
    assert js(run(isolated_env, "branches", conv, "--json"))["shown"] == conv
    bad = run(isolated_env, "switch", conv, "nothing-like-it")
    assert bad.returncode == 1 and "is not one branch of this conversation" in bad.stderr

    # The context says which path is sent: this branch, where it parts from the other.
    path = js(run(isolated_env, "context", fork, "--json"))["path"]
    assert (path["branch"], path["branches"], path["shared_messages"]) == (2, 2, 2)
    assert path["divergences"] == [{"message_id": own, "version": 2, "versions": 2}]
    context = run(isolated_env, "context", fork).stdout
    assert "Path: branch 2 of 2" in context and f"‹ 2/2 › at #{own}" in context
    lone = js(run(isolated_env, "context", conv, "--json"))["path"]
    assert lone["divergences"] == [{"message_id": messages[2]["id"], "version": 1, "versions": 2}]
