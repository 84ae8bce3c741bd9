"""The screenshot of a reply with thinking and a web search (docs/tui.md, "Thinking").

Usage::

    python screenshots/thinking_web.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets one conversation with thinking and web search on; its
replies come from the test server (``tests/fakes/fake_anthropic.py``), so the search results are
that server's made-up pages. The app runs headless at 120x36, the reply's thinking is opened
with ``t`` in navigation mode, and ``thinking-web.svg`` (and a PNG copy when ``cairosvg`` is
importable) is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screenshots._run import main, shoot, until_gauge


async def _seed(service: Any) -> str:
    conversation = await service.conversations.new("Textual layouts")
    for key in ("thinking", "web_search"):
        await service.conversations.set_setting(conversation.id, key, "on")
    await service.send(conversation.id, "How do Textual widgets talk to each other?")
    await service.send(conversation.id, "Search for textual grid layout")
    return str(conversation.id)


async def _scene(pilot: Any) -> None:
    from tui_chat.tui.widgets.chat_pane import ChatPane

    await until_gauge(pilot)
    await pilot.press("f5", "t")
    assert pilot.app.main_screen.query_one(ChatPane).selected is not None


async def generate(out: Path) -> list[Path]:
    """Run the app over a thinking + search conversation and save the screenshot."""
    reply = "Start in the app's main loop: every widget posts messages upward."
    return await shoot(out, "thinking-web", _seed, _scene, reply_text=reply)


if __name__ == "__main__":
    raise SystemExit(main(__doc__, generate, None))
