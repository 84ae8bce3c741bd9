"""The test harness itself: a Pilot waits for the screen as long as a loaded machine needs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.app import App

from tests.conftest import SCREEN_WAIT


async def test_a_pilot_waits_for_the_screen_far_longer_than_textuals_30_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pilot.press``/``pause`` wait for every widget to drain its queue; Textual fails that
    wait after 30 s (``WaitForScreenTimeout``), which a loaded machine exceeded. The bound the
    tests run with is ``SCREEN_WAIT``: only a real hang ends a test."""
    bounds: list[float | None] = []
    wait = asyncio.wait

    async def recorded(tasks: Any, *, timeout: float | None = None, **kwargs: Any) -> Any:
        bounds.append(timeout)
        return await wait(tasks, timeout=timeout, **kwargs)

    async with App[None]().run_test() as pilot:
        monkeypatch.setattr(asyncio, "wait", recorded)
        await pilot.press("x")
        await pilot.pause()
        monkeypatch.undo()
    assert bounds and set(bounds) == {SCREEN_WAIT}
    assert SCREEN_WAIT >= 600
