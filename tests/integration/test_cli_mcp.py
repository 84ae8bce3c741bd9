"""``tui-chat mcp list`` and ``send`` with MCP tools: real processes, real MCP servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.mcp_fixtures import SERVERS, mcp_json
from tests.integration.test_cli import KEY, js, run

pytestmark = pytest.mark.slow  # real processes


def _config(home: Path, text: str) -> None:
    (home / "config").mkdir(exist_ok=True)
    (home / "config" / "mcp.json").write_text(text)


def _results(home: Path, fake: FakeAnthropic) -> list[dict[str, object]]:
    shown = js(run(home, "show", "last", "--json", fake=fake))
    return [b for m in shown["messages"] for b in m["content"] if b["type"] == "tool_result"]


def test_mcp_list_shows_each_server_its_state_tools_and_cost(isolated_env: Path) -> None:
    _config(isolated_env, mcp_json(t="tools", broken="fail"))
    listed = js(run(isolated_env, "mcp", "list", "--json"))
    servers = {s["name"]: s for s in listed["servers"]}
    assert servers["t"]["state"] == "ready" and servers["t"]["tokens"] > 0
    assert "t__echo" in [tool["api_name"] for tool in servers["t"]["tools"]]
    assert servers["broken"]["state"] == "failed"
    assert "cannot open the database /nowhere/db" in servers["broken"]["error"]
    text = run(isolated_env, "mcp", "list")
    assert text.returncode == 0
    assert "t  ready" in text.stdout and "broken  failed" in text.stdout
    assert "t__add" in text.stdout


def test_a_malformed_mcp_json_is_named_by_line_and_the_chat_still_works(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    _config(isolated_env, '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}')
    listed = run(isolated_env, "mcp", "list")
    assert listed.returncode == 1 and "mcp.json:3: invalid JSON" in listed.stderr
    sent = run(isolated_env, "send", "--new", "hello", fake=fake_anthropic)
    assert sent.returncode == 0 and "Reply to: hello" in sent.stdout
    assert "mcp.json:3" in sent.stderr


def test_send_runs_no_tool_without_allow_tools(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    _config(isolated_env, mcp_json(t="tools"))
    fake_anthropic.push_tool_use("t__env", {})
    fake_anthropic.push_reply("It needs approval.")
    sent = run(isolated_env, "send", "--new", "show me the env", fake=fake_anthropic)
    assert sent.returncode == 0, sent.stderr
    assert "It needs approval." in sent.stdout
    (result,) = _results(isolated_env, fake_anthropic)
    assert result["is_error"] is True and "needs a person's approval" in json.dumps(result)


def test_send_allow_tools_runs_the_call_and_the_child_never_sees_the_key(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    _config(isolated_env, mcp_json(t="tools"))
    fake_anthropic.push_tool_use("t__env", {})
    fake_anthropic.push_reply("Here it is.")
    sent = run(isolated_env, "send", "--new", "--allow-tools", "env?", fake=fake_anthropic)
    assert sent.returncode == 0, sent.stderr
    assert "[tool t__env {}]" in sent.stderr and "Here it is." in sent.stdout
    (result,) = _results(isolated_env, fake_anthropic)
    assert not result.get("is_error")
    env = json.loads(result["content"][0]["text"])  # type: ignore[index]
    assert "PATH" in env and "TUI_CHAT_HOME" not in env
    assert KEY not in json.dumps(env) and "ANTHROPIC_API_KEY" not in env
    assert fake_anthropic.message_requests[-1].body["messages"][-1]["content"][0]["type"] == (
        "tool_result"
    )


def _pids_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_no_server_outlives_a_killed_tui_chat(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    entry = {"command": sys.executable, "args": [str(SERVERS), "stubborn", marker]}
    _config(isolated_env, json.dumps({"mcpServers": {"t": entry}}))
    fake_anthropic.push_tool_use("t__slow", {"seconds": 600})
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(TUI_CHAT_HOME=str(isolated_env), **fake_anthropic.env(KEY))
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_chat", "send", "--new", "--allow-tools", "wait"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    servers: list[int] = []
    try:
        for line in process.stderr:  # the call is running: its server is up
            if "[tool t__slow" in line:
                break
        servers = _pids_with(marker)
        assert servers and all(_alive(pid) for pid in servers)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in servers) and time.monotonic() < deadline:
            time.sleep(0.05)  # the kernel's kill of the orphan is the state waited for
        assert not any(_alive(pid) for pid in servers)
    finally:
        process.kill()
        process.wait(30)
        for pid in servers:  # a failed run leaves none behind either
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
