"""Start-up does only what the first frame needs; checked without timing.

Imports: each check runs in a fresh interpreter (this test process has imported everything)
and reads ``sys.modules``. The screens the user opens later, the palette's commands, the CLI's
subcommand handlers and the SDK load when first used; a top-level import of any of them fails
here. The garbage collector: ``tui-chat`` starts with it off and the app turns it back on.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.mcp_fixtures import mcp_json
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ready, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.app import ChatApp

LATER_SCREENS = {
    "tui_chat.tui.screens.context_preview",
    "tui_chat.tui.screens.file_picker",
    "tui_chat.tui.screens.help",
    "tui_chat.tui.screens.inspector",
    "tui_chat.tui.screens.prompt",
    "tui_chat.tui.screens.search",
    "tui_chat.tui.screens.settings",
}
"""Screens opened by an action: none is needed to draw the chat."""

NOT_AT_START = LATER_SCREENS | {
    "tui_chat.tui.commands",  # the palette's provider, loaded when the palette opens
    "tui_chat.cli.commands",  # the subcommands' handlers: the TUI never runs them
    "anthropic",  # the SDK: imported by the first request
    "httpx",
    "mcp",  # the MCP SDK: imported (in a thread) when a configured server starts
}
"""Modules a started app has not imported before the user does anything."""

ROOT = Path(__file__).resolve().parents[2]


def _loaded_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """``sys.modules`` of a fresh interpreter after running ``code``."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return set(json.loads(result.stdout.splitlines()[-1]))


@pytest.mark.slow  # a real process
def test_the_check_sees_a_lazy_module_once_it_is_imported() -> None:
    loaded = _loaded_after("import tui_chat.tui.app\nimport tui_chat.tui.screens.settings")
    assert "tui_chat.tui.screens.settings" in loaded


@pytest.mark.slow  # a real process
def test_importing_the_cli_and_constructing_the_app_loads_no_later_module() -> None:
    loaded = _loaded_after(
        """
        import tui_chat.cli
        from tui_chat.config import load_config
        from tui_chat.tui.app import ChatApp
        ChatApp(load_config())
        """
    )
    assert "tui_chat.tui.screens.main" in loaded  # what the first frame needs is there
    assert not loaded & NOT_AT_START, sorted(loaded & NOT_AT_START)
    assert "tui_chat.engine.service" not in loaded  # the engine opens in on_load


SDK = {"anthropic", "httpx", "mcp"}
"""Imported once the first frame is drawn, in a thread (``ChatApp._warm_up``), so the first
send does not spend a second of CPU importing it on the event loop."""


@pytest.mark.slow  # a real process
async def test_a_started_app_has_loaded_no_later_module(
    service: ChatService, tmp_path: Path
) -> None:
    """The app shows a conversation with messages and fills every panel (the gauge, the
    timeline, the list), with an API key set: none of the later modules is loaded when the
    first frame is drawn, and only the SDK (the warm-up's, after that frame) once settled."""
    await seed_demo(service, tmp_path)
    # A server configured: its SDK is imported after the first frame, never before.
    (Path(os.environ["TUI_CHAT_HOME"]) / "config" / "mcp.json").write_text(mcp_json(t="tools"))
    loaded = _loaded_after(
        """
        import asyncio, json, sys
        from tui_chat.config import load_config
        from tui_chat.tui.app import ChatApp

        from textual.app import App
        from tui_chat.tui.screens.main import MainScreen

        at_first_frame: list[str] = []
        display = App._display

        def noted(self: App, screen: object, renderable: object) -> None:
            if not at_first_frame and isinstance(screen, MainScreen) and renderable is not None:
                at_first_frame.extend(sys.modules)  # what the first frame needed, nothing later
            display(self, screen, renderable)

        App._display = noted

        async def start() -> None:
            app = ChatApp(load_config())
            async with app.run_test(size=(120, 36)) as pilot:
                for _ in range(1000):
                    screen = app.main_screen
                    if screen.conversation is not None and screen.timeline.summaries:
                        break
                    await pilot.pause(0.01)
                else:
                    raise SystemExit("the app never showed the conversation and its panels")
                assert screen.chat.views, "no message was shown"
                await app.workers.wait_for_complete()
                await pilot.pause()

        asyncio.run(start())
        assert at_first_frame, "no frame was displayed"
        noted_first = {"at first frame:" + name for name in at_first_frame}
        print(json.dumps(sorted(noted_first | set(sys.modules))))
        raise SystemExit(0)
        """,
        # A key: nothing may reach for the API (the address answers nothing).
        env={
            "ANTHROPIC_API_KEY": "sk-ant-test-key-0000",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
    )
    first_frame = {n.removeprefix("at first frame:") for n in loaded if n.startswith("at ")}
    settled = {name for name in loaded if not name.startswith("at ")}
    assert "tui_chat.engine.service" in first_frame
    assert not first_frame & NOT_AT_START, sorted(first_frame & NOT_AT_START)
    assert not settled & (NOT_AT_START - SDK), sorted(settled & (NOT_AT_START - SDK))
    assert "anthropic" in settled  # the warm-up imported it


async def test_the_app_turns_the_garbage_collector_back_on_once_drawn(service: ChatService) -> None:
    gc.disable()  # as cli.main does before the TUI starts
    try:
        async with make_app(service).run_test(size=(120, 36)) as pilot:
            await ready(pilot)
            await pilot.pause()
            assert gc.isenabled()
    finally:
        gc.enable()


async def test_the_app_opens_the_engine_itself_and_shows_the_chat(
    service: ChatService, tmp_path: Path
) -> None:
    """As ``tui-chat`` starts from a shell: the app opens the engine and finds the conversation
    before its screen is composed, then shows it. The show once ran before the screen had
    composed its chat pane (NoMatches '#chat': the app did not start) when the engine's reads
    took fewer turns of the event loop."""
    await seed_demo(service, tmp_path)
    app = ChatApp(service.config, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.main_screen.conversation is not None)
        await until(pilot, lambda: bool(app.main_screen.chat.views))
        assert app.main_screen.focused is app.main_screen.composer


HEAVY = {"tiktoken", "anthropic", "pydantic", "numpy", "wordllama", "pypdf", "mcp", "httpx"}
"""Packages that cost tens or hundreds of milliseconds to import: none before the first frame."""


@pytest.mark.slow  # a real process
async def test_nothing_heavy_is_imported_before_the_first_frame_is_displayed(
    service: ChatService, tmp_path: Path
) -> None:
    """``sys.modules`` when the first frame of the main screen is handed to the terminal
    (Textual's ``App._display``), with a key set and the fallback timer of "after the next
    frame" at a millisecond (a loaded machine's frame can come later than that timer): no
    heavy package. Once settled, the warm-up has imported the SDK (the check sees an import).
    Failed before: tiktoken at every start (the token counter's check imported it)."""
    await seed_demo(service, tmp_path)
    loaded = _loaded_after(
        f"""
        import asyncio, sys
        from textual.app import App
        from tui_chat.config import load_config
        from tui_chat.tui import after_frame
        from tui_chat.tui.app import ChatApp
        from tui_chat.tui.screens.main import MainScreen

        after_frame.FRAME_WAIT = 0.001
        heavy = {sorted(HEAVY)!r}
        first: list[str] = []
        display = App._display

        def noted(self: App, screen: object, renderable: object) -> None:
            if not first and isinstance(screen, MainScreen) and renderable is not None:
                first.append("frame")
                first.extend(m for m in sys.modules if m.split(".")[0] in heavy)
            display(self, screen, renderable)

        App._display = noted

        async def start() -> None:
            app = ChatApp(load_config())
            async with app.run_test(size=(120, 36)) as pilot:
                for _ in range(2000):
                    if "anthropic" in sys.modules and app.main_screen.chat.views:
                        break
                    await pilot.pause(0.01)

        asyncio.run(start())
        assert first, "no frame was displayed"
        sys.modules.update({{"at first frame:" + name: sys for name in first}})
        """,
        env={
            "ANTHROPIC_API_KEY": "sk-ant-test-key-0000",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
    )
    at_first = {name.removeprefix("at first frame:") for name in loaded if name.startswith("at ")}
    assert "frame" in at_first
    assert not at_first - {"frame"}, sorted(at_first)
    assert "anthropic" in loaded  # the warm-up imported it, after the frame
