"""The README screenshot of a reply with thinking and a web search (issue 19 items 1-2).

Usage::

    python screenshots/thinking_web.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets one conversation with thinking and web search on; its
replies come from the test server (``tests/fakes/fake_anthropic.py``), so the search results are
that server's made-up pages. The app runs headless at 120x36, the reply's thinking is opened
with ``t`` in navigation mode, and ``thinking-web.svg`` (and a PNG copy when ``cairosvg`` is
importable) is written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE = (120, 36)


async def generate(out: Path) -> list[Path]:
    """Run the app over a thinking + search conversation and save the screenshot."""
    from screenshots.generate import to_png
    from tests.fakes.fake_anthropic import FakeAnthropic
    from tui_chat.config import load_config
    from tui_chat.engine.service import ChatService
    from tui_chat.tui.app import ChatApp
    from tui_chat.tui.widgets.chat_pane import ChatPane

    with tempfile.TemporaryDirectory() as home, FakeAnthropic() as fake:
        os.environ["TUI_CHAT_HOME"] = home
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-demo-placeholder"
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
        fake.reply_text = "Start in the app's main loop: every widget posts messages upward."
        service = await ChatService.open(load_config())
        try:
            conversation = await service.new_conversation("Textual layouts")
            for key in ("thinking", "web_search"):
                await service.set_setting(conversation.id, key, "on")
            await service.send(conversation.id, "How do Textual widgets talk to each other?")
            await service.send(conversation.id, "Search for textual grid layout")
        finally:
            await service.close()
        app = ChatApp(load_config(), conversation_ref=conversation.id, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            while app.main_screen.gauge.breakdown is None:
                await pilot.pause(0.05)
            await pilot.press("f5", "t")
            pane = app.main_screen.query_one(ChatPane)
            assert pane.selected is not None
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            svg = Path(app.save_screenshot("thinking-web.svg", str(out)))
    return [svg, *to_png([svg])]


def main(argv: list[str] | None = None) -> int:
    """Write the screenshot and print its path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    for path in asyncio.run(generate(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
