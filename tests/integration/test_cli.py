"""The headless CLI end to end: real processes, real SDK, the local test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.cli_runner import ZYGOTE

pytestmark = pytest.mark.slow  # real processes

KEY = "sk-ant-cli-test-SECRETMARKER-1234"


def run(
    home: Path,
    *args: str,
    fake: FakeAnthropic | None = None,
    key: str | None = KEY,
    stdin: str | None = None,
    fresh: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``tui-chat ARGS`` in its own process: a fork of a process that imported the CLI once
    (:mod:`tests.integration.cli_runner`), or with ``fresh`` a new ``python -m tui_chat``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TUI_CHAT_HOME"] = str(home)
    if key:
        env["ANTHROPIC_API_KEY"] = key
    if fake is not None:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
    if not fresh:
        return ZYGOTE.run(list(args), env, stdin, timeout=120)
    return subprocess.run(
        [sys.executable, "-m", "tui_chat", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def js(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_send_new_streams_and_show_last_json(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    # A new ``python -m tui_chat``: start-up as a person's command has it.
    result = run(isolated_env, "send", "--new", "hello", fake=fake_anthropic, fresh=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Reply to: hello"
    shown = js(run(isolated_env, "show", "last", "--json"))
    messages = shown["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["text"] == "hello" and messages[0]["token_count"] > 0
    assert messages[1]["status"] == "complete" and messages[1]["usage"]["input_tokens"] > 0
    headers = fake_anthropic.message_requests[-1].headers
    assert KEY in (
        headers.get("x-api-key", ""),
        headers.get("authorization", "").removeprefix("Bearer "),
    )


def test_dropped_stream_is_stored_incomplete(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_drop(after_chunks=2, text="partial words keep coming and then stop")
    result = run(isolated_env, "send", "--new", "go", fake=fake_anthropic)
    assert result.returncode == 1
    assert "saved" in result.stderr and "incomplete" in result.stderr
    messages = js(run(isolated_env, "show", "last", "--json"))["messages"]
    assert messages[0]["text"] == "go"
    assert messages[1]["status"] == "incomplete" and messages[1]["text"]


def test_stdin_message_and_json_output(isolated_env: Path, fake_anthropic: FakeAnthropic) -> None:
    data = js(
        run(isolated_env, "send", "--new", "--json", "-", fake=fake_anthropic, stdin="from stdin")
    )
    assert data["user"]["text"] == "from stdin"
    assert data["reply"]["text"] == "Reply to: from stdin" and data["error"] is None


def test_no_key_keeps_message_and_exits_1(isolated_env: Path) -> None:
    result = run(isolated_env, "send", "--new", "offline", key=None)
    assert result.returncode == 1 and "ANTHROPIC_API_KEY" in result.stderr
    assert (
        js(run(isolated_env, "show", "last", "--json", key=None))["messages"][0]["text"]
        == "offline"
    )


def test_list_search_set_context_export_import(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    run(isolated_env, "send", "--new", "we chose PostgreSQL for storage", fake=fake_anthropic)
    listed = js(run(isolated_env, "list", "--json"))
    assert listed[0]["messages"] == 2 and listed[0]["tokens"] > 0
    cid = listed[0]["id"]
    hits = js(run(isolated_env, "search", "postgresql", "--json"))
    assert hits and hits[0]["conversation_id"] == cid
    for query in ['"', "NEAR(", "*", "-x"]:
        assert run(isolated_env, "search", "--", query).returncode == 0
    assert run(isolated_env, "set", cid[:6], "preset", "turns").returncode == 0
    bad = run(isolated_env, "set", cid, "compression_rate", "0.9")
    assert bad.returncode == 1 and "between 0.1 and 0.5" in bad.stderr
    ctx = js(run(isolated_env, "context", cid, "--message", "next?", "--json"))
    assert set(ctx["request"]) >= {"model", "system", "messages", "max_tokens"}
    assert set(ctx["breakdown"]) >= {"window", "max_output", "input_tokens", "sections"}
    assert ctx["request"]["messages"][-1]["content"][-1]["text"] == "next?"
    out = tmp_path / "c.json"
    assert run(isolated_env, "export", cid, "--format", "json", "-o", str(out)).returncode == 0
    md = run(isolated_env, "export", cid, "--format", "md")
    assert "PostgreSQL" in md.stdout
    imported = js(run(isolated_env, "import", str(out), "--json"))
    assert imported["messages"] == 2 and imported["id"] != cid


def test_import_anthropic_list_with_tool_blocks(isolated_env: Path, tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(
        json.dumps(
            {
                "title": "weather",
                "system": "be brief",
                "messages": [
                    {"role": "user", "content": "weather in Paris?"},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "tu1",
                                "name": "get_weather",
                                "input": {"city": "Paris"},
                            }
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "tu1", "content": "18C"}
                        ],
                    },
                    {"role": "assistant", "content": [{"type": "text", "text": "18C and sunny"}]},
                ],
            }
        )
    )
    data = js(run(isolated_env, "import", str(path), "--json", key=None))
    shown = js(run(isolated_env, "show", data["id"], "--json", key=None))
    assert [m["turn"] for m in shown["messages"]] == [1, 1, 1, 1]
    assert shown["conversation"]["system"] == "be brief"


@pytest.mark.parametrize(
    "payload",
    [
        "{not json",
        "[]",
        '{"messages": []}',
        '{"messages": [{"role": "system", "content": "x"}]}',
        '{"messages": [{"role": "user", "content": 5}]}',
        "NESTED",
    ],
    ids=["truncated", "list", "empty", "bad-role", "bad-content", "deeply-nested"],
)
def test_bad_imports_fail_clearly_and_import_nothing(
    isolated_env: Path, tmp_path: Path, payload: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[" * 100_000 + "]" * 100_000 if payload == "NESTED" else payload)
    result = run(isolated_env, "import", str(path), key=None)
    assert result.returncode == 1
    assert result.stderr.startswith("tui-chat: ") and "bad.json" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert js(run(isolated_env, "list", "--json", key=None)) == []


def test_compact_summaries_rollback_regenerate_pin(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    run(isolated_env, "send", "--new", "first: file src/main.py", fake=fake_anthropic)
    cid = js(run(isolated_env, "list", "--json"))[0]["id"]
    run(isolated_env, "set", cid, "preset", "turns")
    for i in range(2, 5):
        assert (
            run(
                isolated_env, "send", "-c", cid, f"turn {i} value {i * 11}", fake=fake_anthropic
            ).returncode
            == 0
        )
    versions = js(run(isolated_env, "summaries", cid, "--json"))
    assert versions, "the one-shot send finished the due compaction before exiting"
    keys = {
        "version",
        "active",
        "status",
        "covers_to_message_id",
        "source_tokens",
        "summary_tokens",
        "summarizer",
        "identifiers_kept",
        "identifiers_total",
        "parent_version",
    }
    assert keys <= set(versions[0])
    v1 = versions[-1]["version"]
    regen = js(
        run(
            isolated_env,
            "regenerate",
            cid,
            str(v1),
            "--instructions",
            "keep numbers",
            "--json",
            fake=fake_anthropic,
        )
    )
    assert regen["version"] > v1
    assert run(isolated_env, "rollback", cid, str(v1)).returncode == 0
    active = [v for v in js(run(isolated_env, "summaries", cid, "--json")) if v["active"]]
    assert active[0]["version"] == v1
    mid = js(run(isolated_env, "show", cid, "--json"))["messages"][0]["id"]
    assert run(isolated_env, "pin", str(mid), "--note", "key file").returncode == 0
    assert js(run(isolated_env, "show", cid, "--json"))["messages"][0]["pinned"] is True
    assert run(isolated_env, "unpin", str(mid)).returncode == 0
    assert run(isolated_env, "unpin", str(mid)).returncode == 1


def test_doctor_and_backup_never_show_the_key(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    run(isolated_env, "send", "--new", "hi", fake=fake_anthropic)
    doctor = run(isolated_env, "doctor", "--json", fake=fake_anthropic)
    report = js(doctor)
    assert report["api_key"] == "set" and report["integrity"] == "ok"
    assert report["tokenizer"].startswith("ok")
    assert KEY not in doctor.stdout + doctor.stderr
    target = tmp_path / "b.db"
    assert run(isolated_env, "backup", str(target)).returncode == 0
    assert target.exists() and KEY.encode() not in target.read_bytes()


def test_usage_errors_exit_2(isolated_env: Path) -> None:
    assert run(isolated_env, "frobnicate").returncode == 2
    assert run(isolated_env, "show", "nope").returncode == 1
