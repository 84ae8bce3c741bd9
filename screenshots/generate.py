"""Generate the README screenshots from a seeded demo database, through the real app.

Usage::

    python screenshots/generate.py [--out screenshots]

A temporary ``TUI_CHAT_HOME`` gets the demo conversation of ``tests/tui/seed.py`` (imported,
compacted offline into three summary versions, one message pinned) through the engine; the
app then runs headless at 120x36 and saves one SVG per view with ``App.save_screenshot``.
PNG copies are written too when ``cairosvg`` is importable, and a headless Chromium's picture
of the conversation's HTML export when Chromium is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE = (120, 36)
DRAFT = "what was the rollback plan for the cutover?"

Step = Callable[[Any], Awaitable[None]]


async def _keys(pilot: Any, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _main(pilot: Any) -> None:
    pilot.app.main_screen.composer.load_text(DRAFT)
    await pilot.pause(0.5)


async def _timeline(pilot: Any) -> None:
    await _keys(pilot, "ctrl+t")


async def _inspector(pilot: Any) -> None:
    await _keys(pilot, "enter")


async def _diff(pilot: Any) -> None:
    await _keys(pilot, "escape", "down", "enter", "d")


async def _context(pilot: Any) -> None:
    await _keys(pilot, "escape", "ctrl+t", "ctrl+o")


async def _search(pilot: Any) -> None:
    # The search screen is awaited by a worker until it closes: do not wait for workers.
    await _keys(pilot, "escape")
    await pilot.press("ctrl+f", *"setval", "enter")
    await pilot.pause(0.5)


async def _help(pilot: Any) -> None:
    await pilot.press("escape")
    await _keys(pilot, "f1")


SHOTS: list[tuple[str, Step]] = [
    ("main", _main),
    ("timeline", _timeline),
    ("inspector", _inspector),
    ("inspector-diff", _diff),
    ("context-preview", _context),
    ("search", _search),
    ("help", _help),
]
"""(file stem, what to do before the shot), in order: each step starts where the last ended."""


async def generate(out: Path) -> list[Path]:
    """Seed a demo database, run the app and save every screenshot; returns the files."""
    from tests.tui.seed import seed_demo
    from tui_chat.config import load_config
    from tui_chat.engine.service import ChatService
    from tui_chat.tui.app import ChatApp

    written: list[Path] = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["TUI_CHAT_HOME"] = home
        for name in [n for n in os.environ if n.startswith("ANTHROPIC_")]:
            del os.environ[name]
        # Summaries are made offline (no key) so the demo needs no network.
        service = await ChatService.open(load_config())
        try:
            conversation = await seed_demo(service, Path(home))
            page = Path(home) / "export.html"
            await service.transfer.export_to(conversation.id, page)
        finally:
            await service.close()
        written += browser_shot(page, out / "html-export.png")
        # The app gets a placeholder key so the no-key banner stays out of the pictures.
        os.environ["ANTHROPIC_API_KEY"] = "sk-ant-demo-placeholder"
        os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
        app = ChatApp(load_config(), conversation_ref=conversation.id, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            while app.main_screen.gauge.breakdown is None:
                await pilot.pause(0.05)
            for stem, step in SHOTS:
                await step(pilot)
                written.append(Path(app.save_screenshot(f"{stem}.svg", str(out))))
    return written


def browser_shot(page: Path, png: Path) -> list[Path]:
    """A headless Chromium's picture of the HTML export (none without Chromium)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed: the HTML export's picture skipped", file=sys.stderr)
        return []
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    subprocess.run(
        [browser, *flags, f"--screenshot={png}", "--window-size=1000,1200", page.as_uri()],
        capture_output=True,
        check=True,
        timeout=120,
    )
    return [png]


def to_png(svgs: list[Path]) -> list[Path]:
    """PNG copies of the SVGs when ``cairosvg`` is importable (otherwise none)."""
    try:
        import cairosvg  # type: ignore[import-untyped]
    except ImportError:
        print("cairosvg is not installed: PNG copies skipped", file=sys.stderr)
        return []
    pngs = []
    for svg in svgs:
        png = svg.with_suffix(".png")
        cairosvg.svg2png(url=str(svg), write_to=str(png), output_width=1600)
        pngs.append(png)
    return pngs


def main(argv: list[str] | None = None) -> int:
    """Generate the screenshots; prints the files written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    shots = asyncio.run(generate(args.out))
    svgs = [path for path in shots if path.suffix == ".svg"]
    for path in [*shots, *to_png(svgs)]:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
