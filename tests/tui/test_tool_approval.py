"""The TUI's tool calls: servers started after the first frame, the approval prompt with the
arguments shown, the calls and results as folded rows (inert), the tools screen (f9), the
standing approvals revoked in the settings screen (f3)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.mcp_fixtures import stdio
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, on_screen, ready, settle, until
from tui_chat.config import Config
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.settings import SettingsScreen
from tui_chat.tui.screens.tool_approval import ToolApproval
from tui_chat.tui.screens.tools import ToolsScreen
from tui_chat.tui.widgets.approval_list import ApprovalList
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.tool_rows import ToolRow


@pytest.fixture
async def tool_service(key_config: Config) -> AsyncIterator[ChatService]:
    """An engine talking to the fake server, with one real MCP server configured."""
    config = dataclasses.replace(key_config, mcp_servers=(stdio("t"),))
    engine = await ChatService.open(config)
    yield engine
    await engine.close()


async def _send(pilot: object, text: str) -> None:
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    composer = pilot.app.query_one(Composer)
    composer.focus()
    composer.load_text(text)
    await pilot.press("enter")


def _ready(service: ChatService) -> bool:
    return all(r.state == "ready" for r in service.tools.reports())


async def test_a_call_waits_for_approval_with_its_arguments_then_runs(
    tool_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_tool_use("t__escapes", {"why": "\x1b[2J[bold]x[/bold]"}, text="Checking.")
    fake_anthropic.push_reply("All done.")
    app = make_app(tool_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(
            pilot,
            lambda: (
                _ready(tool_service)
                and bool(screen.breakdown and screen.breakdown.sections["tools"])
            ),
        )
        await _send(pilot, "check the escapes")
        prompt = await on_screen(pilot, ToolApproval)
        shown = str(prompt.query_one("#arguments").render())
        assert "[bold]x[/bold]" in shown and "\x1b" not in shown  # inert
        await pilot.press("t")  # always this tool
        await until(pilot, lambda: any("All done." in v.body_text for v in chat(app).views))
        await settle(pilot)
        rows = [str(row.render()) for row in app.query(ToolRow)]
        assert any("t__escapes" in row for row in rows)
        assert any("result" in row and "chars" in row for row in rows)
        assert all("\x1b" not in row for row in rows)
    assert await tool_service.tools.approvals() == [("t", "escapes")]


async def test_escape_denies_and_the_model_is_told(
    tool_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.push_tool_use("t__crash", {})
    fake_anthropic.push_reply("Understood, not running it.")
    app = make_app(tool_service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await until(pilot, lambda: _ready(tool_service))
        await _send(pilot, "crash it")
        await on_screen(pilot, ToolApproval)
        await pilot.press("escape")
        await until(pilot, lambda: any("not running it" in v.body_text for v in chat(app).views))
        await settle(pilot)
    sent = fake_anthropic.message_requests[-1].body["messages"][-1]["content"][0]
    assert sent["is_error"] and "denied" in sent["content"][0]["text"]
    assert tool_service.tools.reports()[0].state == "ready"  # never crashed: never ran


async def test_f9_switches_a_server_off_and_revokes_an_approval(
    tool_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    await tool_service.tools.approve("t", "echo")
    app = make_app(tool_service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: _ready(tool_service))
        await pilot.press("f9")
        tools = await on_screen(pilot, ToolsScreen)
        await until(pilot, lambda: tools.query_one("OptionList").option_count > 2)
        await pilot.press("space")  # the first line: server t
        await until(pilot, lambda: tools.changed)
        await pilot.press("end", "delete")  # the last line: t: echo
        await until(pilot, lambda: not tools._approvals)
        await pilot.press("escape")
        await until(
            pilot, lambda: bool(screen.breakdown) and screen.breakdown.sections["tools"] == 0
        )
    conversation_id = screen.conversation_id
    assert conversation_id is not None
    assert await tool_service.tools.off(conversation_id) == frozenset({"t"})
    assert await tool_service.tools.approvals() == []


async def test_the_settings_screen_lists_the_standing_approvals_and_revokes_one(
    keyed_service: ChatService,
) -> None:
    await keyed_service.tools.approve("files", "read_file")
    await keyed_service.tools.approve("search")  # every tool of the server
    app = make_app(keyed_service)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        settings = await on_screen(pilot, SettingsScreen)
        listed = settings.query_one(ApprovalList)
        await until(pilot, lambda: listed.option_count == 2)
        lines = [str(listed.get_option_at_index(i).prompt) for i in range(2)]
        assert lines == ["files: read_file", "search: every tool"]
        listed.focus()
        await pilot.press("down", "delete")  # the server's approval
        await until(pilot, lambda: listed.approvals == [("files", "read_file")])
        assert await keyed_service.tools.approvals() == [("files", "read_file")]
        await pilot.press("r")  # the last one
        await until(pilot, lambda: not listed.approvals)
        assert "asks first" in str(listed.get_option_at_index(0).prompt)
        await pilot.press("delete")  # nothing left: nothing happens
        await pilot.press("escape")  # cancelling the settings does not bring them back
        await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
    assert await keyed_service.tools.approvals() == []
