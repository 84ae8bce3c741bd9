"""Generate the screenshots of the README and docs/ from a seeded demo database, through
the real app.

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

FAKE: list[Any] = []
"""The local fake Anthropic server the app talks to (the streaming scene queues its reply)."""

PROJECT = {
    "app/__init__.py": "",
    "app/models.py": "class Item: ...\n",
    "app/routes.py": "",
    "app/schema.sql": "",
    "migrations/env.py": "",
    "scripts/copy_data.py": "",
    "requirements.txt": "psycopg[binary]==3.2.1\n",
}
"""The demo project the @path scene completes in (the demo conversation's files)."""

WL_PASTE = """#!/bin/sh
here="${0%/*}"
case "$1" in
  --list-types) printf 'image/png\\n' ;;
  --type) /bin/cat "$here/clip.png" ;;
  *) exit 2 ;;
esac
"""
"""A stand-in ``wl-paste`` whose clipboard holds a PNG (the paste scene)."""


async def _keys(pilot: Any, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _until(pilot: Any, condition: Callable[[], object], what: str) -> None:
    """Let the app run until ``condition()`` holds (a scene that never gets there fails)."""
    for _ in range(1200):
        if condition():
            return
        await pilot.pause(0.05)
    raise RuntimeError(f"screenshot scene: {what} never happened")


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


async def _to_main(pilot: Any) -> None:
    """Close whatever is open: the issue-20 scenes start from the chat."""
    for _ in range(4):
        if pilot.app.screen is pilot.app.main_screen:
            break
        await _keys(pilot, "escape")
    screen = pilot.app.main_screen
    screen.composer.load_text("")
    screen.composer.focus()
    while screen.tray.pending:  # backspace at the start removes the last attached file
        await _keys(pilot, "backspace")
    await pilot.pause()


async def _paste_image(pilot: Any) -> None:
    """ctrl+v with a PNG on the (stand-in) clipboard: the image is a chip over the composer."""
    await _to_main(pilot)
    pilot.app.main_screen.composer.load_text("what does this schema diagram get wrong?")
    await _keys(pilot, "ctrl+v")
    await _until(pilot, lambda: pilot.app.main_screen.tray.pending, "the pasted image")
    await pilot.pause(0.3)


async def _path_completion(pilot: Any) -> None:
    """@ in the composer: the paths under the working directory in a dropdown."""
    await _to_main(pilot)
    await pilot.press(*"compare @app/")
    from tui_chat.tui.widgets.path_completions import PathCompletions

    dropdown = pilot.app.main_screen.query_one(PathCompletions)
    await _until(pilot, lambda: dropdown.display, "the @path dropdown")
    await pilot.pause(0.3)


async def _usage(pilot: Any) -> None:
    """The usage screen (f8): cost per day and model, summaries included, bars."""
    await _to_main(pilot)
    await _keys(pilot, "f8")
    from tui_chat.tui.screens.usage import UsageScreen

    await _until(
        pilot,
        lambda: isinstance(pilot.app.screen, UsageScreen) and pilot.app.screen.report,
        "the usage report",
    )
    await pilot.pause(0.3)


async def _follow_marker(pilot: Any) -> None:
    """A reply streams while the user reads above: the view stays, a marker says more came."""
    await _to_main(pilot)
    fake = FAKE[0]
    text = "\n\n".join(
        f"Step {n}: " + "check the row counts and the sequences " * 4 for n in range(40)
    )
    fake.push_hang(600, after_chunks=60, text=text, words_per_chunk=12)
    screen = pilot.app.main_screen
    screen.composer.load_text("walk me through the cutover checklist once more")
    await pilot.press("enter")
    chat = screen.chat
    await _until(
        pilot,
        lambda: screen.streaming_id is not None and chat.max_scroll_y > chat.size.height,
        "a long streaming reply",
    )
    await pilot.press("f5", "pageup", "pageup")
    from tui_chat.engine import events
    from tui_chat.tui import messages
    from tui_chat.tui.widgets.follow_marker import FollowMarker

    marker = screen.query_one(FollowMarker)
    while not marker.display:
        more = messages.ReplyDelta(events.ReplyDelta(screen.streaming_id, "\n\nmore " * 20))
        screen.post_message(more)
        await pilot.pause(0.1)
    await pilot.pause(0.3)


SHOTS: list[tuple[str, Step]] = [
    ("main", _main),
    ("timeline", _timeline),
    ("inspector", _inspector),
    ("inspector-diff", _diff),
    ("context-preview", _context),
    ("search", _search),
    ("help", _help),
    ("paste-image", _paste_image),
    ("path-completion", _path_completion),
    ("usage", _usage),
    ("follow-marker", _follow_marker),  # last: it sends a prompt and leaves a reply streaming
]
"""(file stem, what to do before the shot), in order: each step starts where the last ended."""

OWN_CONVERSATION = ("thinking-web", "recall-cites", "branches", "tool-call")
"""Scenes made in a conversation of their own (thinking opened with a web search and
its results, ``screenshots/thinking_web.py``; a reply citing recalled messages with its
chips, ``screenshots/recall_cites.py``; the branches of one conversation,
``screenshots/branches.py``; an MCP tool call waiting for approval,
``screenshots/tool_call.py``), after the demo's."""


def _stage(home: Path) -> None:
    """The demo project as the working directory, a PNG on a stand-in clipboard."""
    from tests.fakes import sample_files

    project = home / "inventory"
    for name, text in PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    os.chdir(project)
    tools = home / "bin"
    tools.mkdir()
    (tools / "wl-paste").write_text(WL_PASTE)
    (tools / "wl-paste").chmod(0o755)
    (tools / "clip.png").write_bytes(sample_files.png(640, 480))
    os.environ["PATH"] = f"{tools}{os.pathsep}{os.environ['PATH']}"
    os.environ["WAYLAND_DISPLAY"] = "wayland-demo"


async def seed_usage(service: Any) -> None:
    """Replies of two models and a summary call through the fake server (the usage screen's
    demo; :func:`date_usage` dates them)."""
    for model, prompts in (("claude-sonnet-4-6", 6), ("claude-haiku-4-5", 3)):
        conversation = await service.conversations.new(title=f"usage demo {model}", model=model)
        for n in range(prompts):
            await service.send(conversation.id, f"question {n} about the migration " * 40)
        if model == "claude-sonnet-4-6":
            await service.summaries.compact(conversation.id)


def date_usage(db: Path) -> None:
    """Spread the usage demo over a week of March 2026 (once the engine is closed)."""
    import sqlite3

    with sqlite3.connect(db) as con:
        for table in ("messages", "summaries"):
            con.execute(
                f"UPDATE {table} SET created_at = printf('2026-03-%02dT10:00:00+00:00', "
                "8 + rowid % 7) WHERE conversation_id IN "
                "(SELECT id FROM conversations WHERE title LIKE 'usage demo%')"
            )


async def generate(out: Path, only: set[str] | None = None) -> list[Path]:
    """Seed a demo database, run the app and save every screenshot (``only``: those stems);
    returns the files."""
    from tests.fakes.fake_anthropic import FakeAnthropic
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
        if only is None or "html-export" in only:
            written += browser_shot(page, out / "html-export.png")
        _stage(Path(home))
        # The app talks to a local fake server (no network); its key keeps the no-key banner
        # out of the pictures.
        with FakeAnthropic() as fake:
            FAKE[:] = [fake]
            os.environ.update(fake.env("sk-ant-demo-placeholder"))
            service = await ChatService.open(load_config())
            try:
                await seed_usage(service)
            finally:
                await service.close()
            date_usage(service.db_path)
            app = ChatApp(load_config(), conversation_ref=conversation.id, cursor_blink=False)
            async with app.run_test(size=SIZE) as pilot:
                await _until(pilot, lambda: app.main_screen.gauge.breakdown, "the gauge")
                for stem, step in SHOTS:
                    if only is None or stem in only:
                        print(f"scene {stem}", file=sys.stderr)
                        await step(pilot)
                        written.append(Path(app.save_screenshot(f"{stem}.svg", str(out))))
    os.chdir(ROOT)  # the demo's working directory went with its home
    for stem in OWN_CONVERSATION:
        if only is None or stem in only:
            print(f"scene {stem}", file=sys.stderr)
            module = __import__(f"screenshots.{stem.replace('-', '_')}", fromlist=["generate"])
            written += [p for p in await module.generate(out) if p.suffix == ".svg"]
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
    parser.add_argument("--only", help="comma-separated stems to make (default: every one)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    shots = asyncio.run(generate(args.out.resolve(), only))
    svgs = [path for path in shots if path.suffix == ".svg"]
    for path in [*shots, *to_png(svgs)]:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
