"""A recount after a pause in typing: one call per pause however many keys, the last one's."""

from __future__ import annotations

from textual.app import App

from tui_chat.tui.debounce import Debounce


class _Host(App[None]):
    pass


async def test_a_burst_of_pokes_calls_once_after_the_pause() -> None:
    calls: list[int] = []
    async with _Host().run_test() as pilot:
        debounce = Debounce(pilot.app, 0.01, lambda: calls.append(len(calls)))
        timers = set()
        for _ in range(50):
            debounce.poke()
            timers.add(id(debounce.timer))
        assert debounce.waiting
        assert len(timers) == 1  # one timer for the burst, not one a poke
        for _ in range(10_000):
            if calls:
                break
            await pilot.pause()
        assert calls == [0]
        assert not debounce.waiting


async def test_a_cancelled_call_does_not_run_and_a_later_poke_asks_again() -> None:
    calls: list[str] = []
    async with _Host().run_test() as pilot:
        debounce = Debounce(pilot.app, 0.01, lambda: calls.append("due"))
        debounce.poke()
        debounce.cancel()
        assert not debounce.waiting
        debounce.poke()
        for _ in range(10_000):
            if calls:
                break
            await pilot.pause()
        assert calls == ["due"]
