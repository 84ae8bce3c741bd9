"""Small helpers for Pilot tests: wait for conditions, read widgets."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from tui_chat.tui.app import ChatApp
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.widgets.chat_pane import ChatPane

ChatPilot = Pilot[None]

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


async def from_palette(pilot: ChatPilot, command: str) -> None:
    """Run ``command`` from the command palette: open it, type the name, wait until the
    palette's search has put that command first, press enter."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
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
    """Wait until the app shows a conversation."""
    app = pilot.app
    assert isinstance(app, ChatApp)
    await until(pilot, lambda: app.main_screen.conversation is not None)
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
    for; the second round waits for what replaced it.
    """
    workers = pilot.app.workers
    for _ in range(2):
        try:
            await asyncio.wait_for(workers.wait_for_complete(), SETTLE_LIMIT)
        except WorkerCancelled:
            pass
        except TimeoutError:  # a hang: say which worker, instead of waiting for ever
            running = [(w.name, w.state.name) for w in workers if not w.is_finished]
            raise AssertionError(
                f"workers still running after {SETTLE_LIMIT} s: {running}"
            ) from None
        await pilot.pause()


def notifications(app: ChatApp) -> list[str]:
    """Texts of the notifications currently shown."""
    return [n.message for n in app._notifications]
