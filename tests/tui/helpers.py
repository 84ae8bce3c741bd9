"""Small helpers for Pilot tests: wait for conditions, read widgets."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen
from textual.worker import WorkerCancelled, WorkerFailed

from tests.notified import raised
from tui_chat.tui.app import ChatApp
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.chat_pane import ChatPane

ChatPilot = Pilot[None]
ScreenT = TypeVar("ScreenT", bound=Screen[Any])

SETTLE_LIMIT = 300.0
"""Seconds :func:`settle` waits for the workers before it fails: not a timing (no test waits
it out), a bound on a hang, so a stuck worker fails its test with its name instead of
stopping the suite."""


async def until(
    pilot: ChatPilot,
    condition: Callable[[], bool],
    rounds: int = 5_000,
    *,
    state: Callable[[], object] | None = None,
) -> None:
    """Let the app run until ``condition()`` holds (fails the test if it never does).

    Each round is one ``pilot.pause()``: the screen handles what is pending and the process
    goes idle (a frame at least). The bound is a number of rounds, not a time; but work the
    app hands to a thread (the database, Markdown parsing) does not hold a round back, so on a
    loaded machine many idle rounds can pass while it runs: 600 were not enough at load ~8
    (deleting a branch, then opening its sibling), hence 5,000. Only a failing wait is longer.
    ``state`` (optional) says what the app was in when the wait fails.
    """
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause()
    if not condition():
        seen = "" if state is None else f"; the app's state: {state()!r}"
        raise AssertionError(f"condition never became true in {rounds} rounds{seen}")


async def on_screen(pilot: ChatPilot, kind: type[ScreenT]) -> ScreenT:
    """Wait until the app's top screen is a ``kind`` with its widgets composed and mounted, and
    return it: a pushed screen is on top before its own queue has composed it (a query made
    then found none of its widgets, on a loaded machine)."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def from_palette(pilot: ChatPilot, command: str) -> None:
    """Run ``command`` from the command palette: open it, type the name, wait until the
    palette's search has put that command first, press enter."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await on_screen(pilot, CommandPalette)
    palette = app.screen
    await pilot.press(*command)

    def first_hit() -> str:
        hits = palette.query_one(CommandList)
        option = hits.highlighted_option
        return "" if option is None else str(option.prompt).split("\n")[0]

    await until(pilot, lambda: command.lower() in first_hit().lower())
    await pilot.press("enter")
    await until(pilot, lambda: app.screen is not palette)


def main_screen(app: ChatApp) -> MainScreen:
    """The main screen of a running app."""
    return app.main_screen


def chat(app: ChatApp) -> ChatPane:
    """The chat pane."""
    return app.main_screen.chat


async def ready(pilot: ChatPilot) -> MainScreen:
    """Wait until the app shows a conversation and start-up has filled the panels.

    Start-up fills the gauge, the timeline and the list a moment after the first frame (in
    that order): keys pressed before then (``ctrl+b``, ``down``, ``enter``) found an empty
    list on a loaded machine. The list knows the open conversation once it has been filled.
    """
    app = pilot.app
    assert isinstance(app, ChatApp)

    def shown() -> bool:
        screen = app.main_screen
        return (
            screen.conversation is not None
            and screen.breakdown is not None
            and screen.conversations.current_id == screen.conversation_id
        )

    await until(pilot, shown)
    await pilot.pause()
    return app.main_screen


async def open_timeline(pilot: ChatPilot) -> None:
    """``ctrl+t``, then wait until the timeline's list has the focus and a card per version
    (the versions are read after the first frame: keys pressed before reach an empty list)."""
    app = pilot.app
    assert isinstance(app, ChatApp)
    timeline = app.main_screen.timeline
    await pilot.press("ctrl+t")
    await until(
        pilot,
        lambda: (
            app.focused is timeline.list_view
            and len(timeline.summaries) > 0
            and len(timeline.list_view.children) == len(timeline.summaries)
            and timeline.highlighted is not None
        ),
        state=lambda: (app.focused, len(timeline.summaries), len(timeline.list_view.children)),
    )


async def settle(pilot: ChatPilot) -> None:
    """Let every worker finish and the screen catch up.

    A worker the app cancels meanwhile (a gauge count replaced by a newer one) is not waited
    for; the second round waits for what replaced it. A worker that failed has finished: the
    app reports its failure (``exit_on_error=False``), which the test checks on screen; one
    still listed when the wait begins (it is let go a moment after it ends) is not raised.
    """
    workers = pilot.app.workers
    for _ in range(2):
        try:
            await asyncio.wait_for(workers.wait_for_complete(), SETTLE_LIMIT)
        except (WorkerCancelled, WorkerFailed):
            pass
        except TimeoutError:  # a hang: say which worker, instead of waiting for ever
            running = [(w.name, w.state.name) for w in workers if not w.is_finished]
            raise AssertionError(
                f"workers still running after {SETTLE_LIMIT} s: {running}"
            ) from None
        await pilot.pause()


def notifications(app: ChatApp) -> list[str]:
    """Texts of the notifications the app has raised, oldest first: expired ones too (Textual
    drops one when its seconds have passed, which a loaded machine's waits outlast)."""
    return [n.message for n in raised(app)]
