"""Pilot test of the model picker in settings (the table's and the endpoint's models)."""

from __future__ import annotations

from textual.widgets import Input, Select

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import notifications, on_screen, ready, until
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.settings import SettingsScreen


async def test_settings_offer_the_models_and_warn_about_an_unknown_one(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        await until(pilot, lambda: screen.choices is not None)
        pick = screen.query_one("#model-pick", Select)
        pick.value = "gateway-llama"
        model = screen.query_one("#model", Input)
        await until(pilot, lambda: model.value == "gateway-llama")
        screen.query_one("#model", Input).value = "my-own-model"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert (await keyed_service.conversations.get(conversation.id)).model == "my-own-model"
        assert any("my-own-model is in neither" in n for n in notifications(app))


async def test_the_picker_shows_each_models_window_and_features(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    conversation = await keyed_service.conversations.new()
    app = make_app(keyed_service, conversation.id)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await on_screen(pilot, SettingsScreen)
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        await until(pilot, lambda: screen.choices is not None)
        pick = screen.query_one("#model-pick", Select)
        rows = {value: str(prompt) for prompt, value in pick._options if value != Select.BLANK}
        # The endpoint's figures and features, the table's figures, a guess said to be one.
        assert rows["claude-sonnet-4-6"].startswith("claude-sonnet-4-6  1M in · 64k out · ")
        assert "adaptive thinking" in rows["claude-sonnet-4-6"]
        assert "web search" in rows["claude-haiku-4-5"]
        assert rows["claude-opus-4-6"].endswith("(table)")
        assert rows["gateway-llama"].endswith("(guessed)")
        pick.value = "claude-haiku-4-5"
        model = screen.query_one("#model", Input)
        await until(pilot, lambda: model.value == "claude-haiku-4-5")
