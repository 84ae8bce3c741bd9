"""The footer: Help and Quit first, its keys rebuilt only when the keys it shows change."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import ComposeResult
from textual.widgets._footer import FooterKey

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.tui.conftest import make_app
from tests.tui.helpers import ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.engine.service import ChatService
from tui_chat.tui.widgets.composer import Composer
from tui_chat.tui.widgets.footer import ChatFooter


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
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


class TestRebuilds:
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


async def test_a_reply_adds_and_takes_away_its_cancel_key_alone(
    keyed_service: ChatService, fake_anthropic: FakeAnthropic
) -> None:
    """The keys shown before the reply stay the same widgets while "Cancel reply" comes and
    goes (the footer is not composed again at either end of a reply)."""
    fake_anthropic.push_hang(600, after_chunks=2)  # ends when the client goes (the cancel)
    app = make_app(keyed_service)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await ready(pilot)
        await settle(pilot)
        before = list(app.screen.query(FooterKey))
        composer = app.query_one(Composer)
        composer.load_text("Tell me a long story")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: any("cancel_reply" in k.action for k in app.screen.query(FooterKey)),
        )
        during = list(app.screen.query(FooterKey))
        assert [k for k in during if k in before] == before  # the same widgets, in order
        came = [k.action for k in during if k not in before]
        assert len(came) == 1 and "cancel_reply" in came[0]
        await pilot.press("escape")
        await until(pilot, lambda: screen.streaming_id is None and not app.replying)
        await until(
            pilot,
            lambda: all("cancel_reply" not in k.action for k in app.screen.query(FooterKey)),
        )
        await settle(pilot)
        assert list(app.screen.query(FooterKey)) == before
