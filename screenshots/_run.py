"""What every own-conversation screenshot does around its scene (``branches.py``,
``recall_cites.py``, ``thinking_web.py``): a temporary ``TUI_CHAT_HOME`` and the test server
(``tests/fakes/fake_anthropic.py``), the conversation seeded through the engine, the app run
headless at 120x36 on it, the scene played, and the SVG (and a PNG copy when ``cairosvg`` is
importable) saved; ``main`` is each script's command line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZE = (120, 36)

Seed = Callable[[Any], Awaitable[str]]
"""Writes the scene's conversation through a ``ChatService``; returns the one to open."""
Scene = Callable[[Any], Awaitable[None]]
"""Brings the app (through its Pilot) to what the picture shows."""


async def shoot(
    out: Path,
    stem: str,
    seed: Seed,
    scene: Scene,
    *,
    reply_text: str | None = None,
    settle: bool = True,
) -> list[Path]:
    """Seed a fresh home, run the app on the seeded conversation, play ``scene`` and save
    ``<stem>.svg`` (and its PNG) in ``out``; returns the files. ``settle``: wait for the app's
    workers first (not while the scene holds a reply, e.g. on an approval prompt)."""
    from screenshots.generate import to_png
    from tests.fakes.fake_anthropic import FakeAnthropic
    from tui_chat.config import load_config
    from tui_chat.engine.service import ChatService
    from tui_chat.tui.app import ChatApp

    with tempfile.TemporaryDirectory() as home, FakeAnthropic() as fake:
        os.environ["TUI_CHAT_HOME"] = home
        os.environ.update(fake.env("sk-ant-demo-placeholder"))
        if reply_text is not None:
            fake.reply_text = reply_text
        service = await ChatService.open(load_config())
        try:
            shown = await seed(service)
        finally:
            await service.close()
        app = ChatApp(load_config(), conversation_ref=shown, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await scene(pilot)
            if settle:
                await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            svg = Path(app.save_screenshot(f"{stem}.svg", str(out)))
    return [svg, *to_png([svg])]


async def until_gauge(pilot: Any) -> None:
    """Let the app run until the gauge has its first figures (the chat is loaded)."""
    while pilot.app.main_screen.gauge.breakdown is None:
        await pilot.pause(0.05)


def main(
    doc: str, generate: Callable[[Path], Awaitable[list[Path]]], argv: list[str] | None
) -> int:
    """A screenshot script's command line: ``--out``; prints the files written."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    for path in asyncio.run(generate(args.out)):
        print(path)
    return 0
