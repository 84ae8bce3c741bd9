"""Work queued for "after the next frame" while a prompt is on top.

Textual hands an after-refresh callback to the screen that is current when the callback's
message is handled; a prompt taken off the stack around its next frame can leave with it
queued. The panels' refresh waited for such a frame without a bound and hung (a full suite
run stopped for good in ``test_export_over_an_existing_file_asks_and_replaces_only_on_yes``:
its last worker was ``_panels_after_frame``), and the footer, waiting to publish its keys,
would never have been refreshed again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import on_screen, ready, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.prompt import TextPrompt


async def test_panels_and_keys_refresh_when_the_prompt_leaves_with_their_frame(
    service: ChatService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = await seed_demo(service, tmp_path, summaries=False)
    app = make_app(service, demo.id, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        main = await ready(pilot)
        await pilot.press("ctrl+s")
        await on_screen(pilot, TextPrompt)
        prompt = app.screen
        await until(pilot, lambda: prompt.focused is not None and not main._bindings_due)
        # What Textual does when the prompt leaves first: the callbacks it holds never run.
        dropped: list[Callable[[], object]] = []
        monkeypatch.setattr(prompt, "_invoke_later", lambda callback, _: dropped.append(callback))
        main.refresh_panels_later()
        main.refresh_bindings()
        panels = [w for w in app.workers if w.group == "panels"]
        assert panels
        await until(
            pilot,
            lambda: len(dropped) >= 2 and all(w.is_finished for w in panels),
            state=lambda: (dropped, [(w.name, w.state) for w in app.workers]),
        )
        await until(pilot, lambda: not main._bindings_due)
