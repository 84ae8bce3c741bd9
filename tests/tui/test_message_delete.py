"""Deleting a message in the TUI: ``d`` in navigation mode (or ``delete`` in the messages)
asks, ``y`` deletes; the chat, the gauge and its "prompt left out" warning follow at once; a
pinned message unpins; the reply being streamed is refused."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import chat, notifications, ready, settle, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.prompt import Confirm


def _left_out(screen: MainScreen) -> list[str]:
    breakdown = screen.breakdown
    return [w for w in (breakdown.warnings if breakdown else []) if "left out" in w]


def _tokens(screen: MainScreen) -> int:
    return screen.breakdown.input_tokens if screen.breakdown else 0


async def test_deleting_the_failed_prompt_ends_its_left_out_warning(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_error(529)
        await pilot.press(*"the failing prompt", "enter")
        await settle(pilot)
        await pilot.press(*"another question", "enter")
        await settle(pilot)
        await until(pilot, lambda: bool(_left_out(screen)))
        assert screen.conversation is not None
        history = await keyed_service.messages.history(screen.conversation.id)
        failed = next(m for m in history if m.text == "the failing prompt")
        pane = chat(app)
        # f5, up to the failed prompt, then d and y as fast as keys come.
        await pilot.press("f5")
        await until(pilot, lambda: pane.selected is not None)
        while pane.selected != failed.id:
            await pilot.press("k")
        await pilot.press("d", "y")
        await until(pilot, lambda: pane.view_for(failed.id) is None)
        await until(pilot, lambda: not _left_out(screen))
        ids = [m.id for m in await keyed_service.messages.history(screen.conversation.id)]
        assert failed.id not in ids
        assert any("Deleted message" in n for n in notifications(app))


async def test_the_delete_key_asks_and_n_keeps_the_message(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        screen.composer.load_text("keep me " + "harbour tide tables " * 150)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.conversation is not None
        conv = screen.conversation.id
        prompt = (await keyed_service.messages.history(conv))[0]
        await keyed_service.messages.pin(prompt.id)
        pane = chat(app)
        await pilot.press("tab")
        await until(pilot, lambda: pane.selected is not None)
        pane.selected = prompt.id
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, Confirm))
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, Confirm))
        assert prompt.id in {m.id for m in await keyed_service.messages.history(conv)}
        await until(pilot, lambda: _tokens(screen) > 0)
        tokens = _tokens(screen)
        await pilot.press("delete", "y")
        await until(pilot, lambda: pane.view_for(prompt.id) is None)
        assert prompt.id not in await keyed_service.messages.pinned_ids(conv)
        await until(
            pilot,
            lambda: 0 < _tokens(screen) < tokens,  # the gauge counts it no more
        )


async def test_the_reply_being_streamed_cannot_be_deleted(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    app = make_app(keyed_service)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        fake_anthropic.push_reply(" ".join(f"w{i}" for i in range(600)), chunk_delay=0.05)
        await pilot.press(*"stream please", "enter")
        assert screen.conversation is not None
        conv = screen.conversation.id

        async def streaming() -> bool:
            history = await keyed_service.messages.history(conv)
            return bool(history) and history[-1].status == "streaming" and bool(history[-1].text)

        while not await streaming():
            await pilot.pause(0.02)
        pane = chat(app)
        await pilot.press("f5")
        await until(pilot, lambda: pane.selected is not None)
        await pilot.press("d")
        await until(pilot, lambda: any("being streamed" in n for n in notifications(app)))
        assert not isinstance(app.screen, Confirm)
        await pilot.press("escape")  # back to the composer, then cancel the reply
        app.cancel_reply()
        await settle(pilot)
