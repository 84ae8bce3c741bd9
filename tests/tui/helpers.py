"""Small helpers for Pilot tests: wait for conditions, read widgets."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from tui_chat.tui.app import ChatApp
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.chat_pane import ChatPane

ChatPilot = Pilot[None]


async def until(pilot: ChatPilot, condition: Callable[[], bool], rounds: int = 400) -> None:
    """Let the app run until ``condition()`` holds (fails the test if it never does)."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition never became true")


def main_screen(app: ChatApp) -> MainScreen:
    """The main screen of a running app."""
    return app.main_screen


def chat(app: ChatApp) -> ChatPane:
    """The chat pane."""
    return app.main_screen.chat


async def ready(pilot: ChatPilot) -> MainScreen:
    """Wait until the app shows a conversation."""
    app = pilot.app
    assert isinstance(app, ChatApp)
    await until(pilot, lambda: app.main_screen.conversation is not None)
    await pilot.pause()
    return app.main_screen


async def settle(pilot: ChatPilot) -> None:
    """Let every worker finish and the screen catch up.

    A worker the app cancels meanwhile (a gauge count replaced by a newer one) is not waited
    for; the second round waits for what replaced it.
    """
    for _ in range(2):
        with contextlib.suppress(WorkerCancelled):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def notifications(app: ChatApp) -> list[str]:
    """Texts of the notifications currently shown."""
    return [n.message for n in app._notifications]
