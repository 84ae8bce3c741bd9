"""The README screenshot of an MCP tool call waiting for approval, after an earlier call's rows.

Usage::

    python screenshots/tool_call.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets an ``mcp.json`` naming the test MCP server
(``tests/fakes/mcp_servers.py``, written with the official SDK's server side) as ``files``; a
first turn runs one call through the engine (approved), and in the app a second prompt asks for
another call: the approval prompt shows its arguments over the chat, with the first call and
its result as folded rows. ``tool-call.svg`` (and a PNG copy when ``cairosvg`` is importable) is
written.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screenshots._run import main, shoot, until_gauge


def _push(**behaviour: Any) -> None:
    """Queue a reply on the test server the app talks to."""
    url = os.environ["ANTHROPIC_BASE_URL"] + "/_fake/push"
    request = urllib.request.Request(url, data=json.dumps(behaviour).encode(), method="POST")
    urllib.request.urlopen(request).read()


async def _seed(service: Any) -> str:
    from tests.fakes.mcp_fixtures import mcp_json
    from tui_chat.config import load_config
    from tui_chat.engine.service import ChatService

    config_dir = Path(os.environ["TUI_CHAT_HOME"]) / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "mcp.json").write_text(mcp_json(files="tools"))
    tooled = await ChatService.open(load_config())
    try:
        await tooled.tools.wait_started()
        conversation = await tooled.conversations.new("Release checklist")
        _push(
            kind="tool_use",
            tool_name="files__add",
            tool_input={"a": 1180, "b": 64},
            text="I'll add the two counts with the `files` server.",
        )
        _push(kind="reply", text="The release touches **1,244** files in all.")

        async def allow(call: Any) -> str:
            return "once"

        await tooled.send(conversation.id, "How many files change: 1180 plus 64?", approve=allow)
        _push(
            kind="tool_use",
            tool_name="files__echo",
            tool_input={"text": "CHANGELOG.md: 1.4.0 — 1,244 files, migration 0042"},
            text="Let me write that line back to check it.",
        )
        _push(kind="reply", text="Done.")
        return str(conversation.id)
    finally:
        await tooled.close()


async def _scene(pilot: Any) -> None:
    from tui_chat.tui.screens.tool_approval import ToolApproval

    app = pilot.app
    await until_gauge(pilot)
    while not all(r.state != "starting" for r in app.service.tools.reports()):
        await pilot.pause(0.05)
    app.main_screen.composer.load_text("Echo the changelog line back")
    await pilot.press("enter")
    while not isinstance(app.screen, ToolApproval):
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def generate(out: Path) -> list[Path]:
    """Run the app to a tool call's approval prompt and save the screenshot."""
    return await shoot(out, "tool-call", _seed, _scene, settle=False)


if __name__ == "__main__":
    raise SystemExit(main(__doc__, generate, None))
