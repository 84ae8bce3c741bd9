"""Real MCP servers (the SDK's server side) started, listed, called and stopped by the engine."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.fakes.mcp_fixtures import mcp_http_url, stdio  # noqa: F401  (fixture)
from tui_chat.core.tokens import get_counter
from tui_chat.core.tools import ServerSpec
from tui_chat.engine.tools import ToolServers


def _text(block: dict[str, Any]) -> str:
    return "".join(part["text"] for part in block["content"] if part["type"] == "text")


async def _started(*specs: ServerSpec) -> ToolServers:
    servers = ToolServers(specs, get_counter())
    await servers.wait_started()
    return servers


async def _call(servers: ToolServers, name: str, **arguments: Any) -> dict[str, Any]:
    return await servers.call(
        {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}
    )


async def test_a_child_gets_a_minimal_environment_and_its_own_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-passed")
    monkeypatch.setenv("USERS_OTHER_SECRET", "nope")
    monkeypatch.setenv("LANG", "C.UTF-8")
    servers = await _started(stdio("t", env={"OWN_TOKEN": "abc"}))
    try:
        env = json.loads(_text(await _call(servers, "t__env")))
    finally:
        await servers.stop()
    assert env["OWN_TOKEN"] == "abc"
    assert env["PATH"] == os.environ["PATH"] and env["LANG"] == "C.UTF-8"
    assert "ANTHROPIC_API_KEY" not in env and "USERS_OTHER_SECRET" not in env
    assert "sk-ant-never-passed" not in json.dumps(env)


async def test_tools_are_namespaced_so_two_servers_never_collide() -> None:
    servers = await _started(stdio("one"), stdio("two"))
    try:
        names = [d["name"] for d in servers.definitions()]
        assert "one__echo" in names and "two__echo" in names
        assert len(names) == len(set(names))
        assert _text(await _call(servers, "two__add", a=2, b=40)) == "42"
        left = [d["name"] for d in servers.definitions(frozenset({"one"}))]
        assert left and all(name.startswith("two__") for name in left)
        reports = {r.name: r for r in servers.reports()}
        assert reports["one"].state == "ready" and reports["one"].tokens > 0
    finally:
        await servers.stop()


async def test_a_failing_server_is_shown_with_its_stderr_and_the_others_work() -> None:
    servers = await _started(stdio("bad", "fail"), stdio("good"))
    try:
        bad = next(r for r in servers.reports() if r.name == "bad")
        assert bad.state == "failed"
        assert bad.error and "cannot open the database /nowhere/db" in bad.error
        assert _text(await _call(servers, "good__echo", text="hi")) == "hi"
        assert all(not d["name"].startswith("bad__") for d in servers.definitions())
    finally:
        await servers.stop()


async def test_a_server_that_never_answers_times_out_at_start() -> None:
    servers = await _started(stdio("hang", "hang", start_timeout=1.0))
    try:
        (report,) = servers.reports()
        assert report.state == "failed" and "did not start within 1 s" in (report.error or "")
    finally:
        await servers.stop()


async def test_a_missing_command_fails_with_a_reason() -> None:
    spec = ServerSpec("gone", "stdio", command="/nonexistent/mcp-server")
    servers = await _started(spec)
    (report,) = servers.reports()
    assert report.state == "failed" and "nonexistent" in (report.error or "")
    await servers.stop()


async def test_garbage_crash_timeout_big_and_escapes_each_get_a_clear_answer() -> None:
    # Only the slow call meets the 1 s call timeout: the big answer goes to a server with the
    # default one (on a loaded machine a megabyte's round trip can take over a second).
    servers = await _started(
        stdio("g", "garbage"), stdio("t", call_timeout=1.0), stdio("b"), stdio("c")
    )
    try:
        assert _text(await _call(servers, "g__echo", text="still fine")) == "still fine"
        slow = await _call(servers, "t__slow", seconds=30)
        assert slow["is_error"] and "no answer within 1 s" in _text(slow)
        big = await _call(servers, "b__big", size=1_000_000)
        assert len(_text(big)) == 1_000_000 and not big.get("is_error")
        escapes = await _call(servers, "b__escapes")
        assert "\x1b[31m" in _text(escapes)  # stored as received; shown inert
        crash = await _call(servers, "c__crash")
        assert crash["is_error"] and "crashing now" in _text(crash)
        failed = await _call(servers, "b__fails")
        assert failed["is_error"]
        unknown = await _call(servers, "nobody__echo")
        assert unknown["is_error"] and "no running server" in _text(unknown)
    finally:
        await servers.stop()


async def test_a_streamable_http_server_on_localhost(mcp_http_url: str) -> None:  # noqa: F811
    spec = ServerSpec("web", "http", url=mcp_http_url, headers={"X-Test": "1"})
    servers = await _started(spec)
    try:
        (report,) = servers.reports()
        assert report.state == "ready", report.error
        assert _text(await _call(servers, "web__add", a=1, b=2)) == "3"
    finally:
        await servers.stop()
