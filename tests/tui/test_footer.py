"""The footer: Help and Quit first, its keys rebuilt only when the keys it shows change."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import ComposeResult
from textual.widgets._footer import FooterKey

from tests.tui.conftest import make_app
from tests.tui.helpers import ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.footer import ChatFooter


class TestRebuilds:
    @pytest.fixture
    def builds(self, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
        """The actions of each set of keys the footer built (an empty footer is not counted)."""
        built: list[list[str]] = []
        compose = ChatFooter.compose

        def counted(footer: ChatFooter) -> ComposeResult:
            keys = list(compose(footer))
            if keys:
                built.append([k.action for k in keys if isinstance(k, FooterKey)])
            yield from keys

        monkeypatch.setattr(ChatFooter, "compose", counted)
        return built

    async def test_the_keys_are_built_once_at_start(
        self, service: ChatService, tmp_path: Path, builds: list[list[str]]
    ) -> None:
        conversation = await seed_demo(service, tmp_path)
        app = make_app(service, conversation.id)
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot)
            await settle(pilot)
            assert len(builds) == 1, (
                builds
            )  # Textual asks for a rebuild twice before the first frame
            assert builds[0][:2] == ["help", "quit"]

    async def test_a_focus_change_that_changes_the_keys_rebuilds_them(
        self, service: ChatService, tmp_path: Path, builds: list[list[str]]
    ) -> None:
        conversation = await seed_demo(service, tmp_path)
        app = make_app(service, conversation.id)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = await ready(pilot)
            await settle(pilot)
            before = len(builds)
            await pilot.press("tab")
            await until(pilot, lambda: app.focused is screen.chat and len(builds) > before)
            await settle(pilot)
            shown = [k.action for k in app.screen.query(FooterKey)]
            assert shown == builds[-1] and shown != builds[before - 1]
            assert shown[:2] == ["help", "quit"]
