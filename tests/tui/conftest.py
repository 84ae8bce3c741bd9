"""Fixtures for the TUI tests: configs with and without a key, an open engine, app helpers."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import open_service
from tui_chat.config import Config, load_config
from tui_chat.engine.service import ChatService
from tui_chat.tui.app import ChatApp

FIXED_NOW = datetime(2026, 3, 14, 10, 30, tzinfo=UTC)
"""The clock of every test app: ages are measured from here."""

SIZE = (120, 36)


def _write_config(home: Path) -> None:
    # No SDK retries: an error the fake server sends reaches the UI at once.
    config_dir = home / "config"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text("[api]\nmax_retries = 0\ntimeout = 20\n")


@pytest.fixture(autouse=True)
def utc_timezone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Show times in UTC whatever the machine's zone, so snapshots are stable."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


SMALL_PAGES = 2 / 5
"""The scale of :func:`small_pages`: pages of 20 messages instead of 50."""


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat pane's pages at two fifths of their size: pages of 20 messages, at most 60
    mounted (the product's 50 and 150). The first page keeps its 20: it must fill the view
    (8 did not at 120x36, and the pane paged at start-up, which no product window does).

    For the paging soaks: a conversation of about two fifths the messages crosses as many page
    boundaries and prunes as often, each page laid out in two fifths of the time (a page's
    Markdown layout is what a soak costs). Each test says how many pages its count crosses.
    """
    from tui_chat.tui.widgets.chat_pane import ChatPane  # not at collection: see test_startup
    from tui_chat.tui.widgets.pages import Pages

    monkeypatch.setattr(Pages, "PAGE", round(Pages.PAGE * SMALL_PAGES))
    monkeypatch.setattr(ChatPane, "MAX_MOUNTED", round(ChatPane.MAX_MOUNTED * SMALL_PAGES))


@pytest.fixture
def no_key_config(isolated_env: Path) -> Config:
    """A config without an API key."""
    _write_config(isolated_env)
    return load_config()


@pytest.fixture
def key_config(
    isolated_env: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> Config:
    """A config whose key and base URL point at the fake Anthropic server."""
    _write_config(isolated_env)
    for name, value in fake_anthropic.env().items():
        monkeypatch.setenv(name, value)
    return load_config()


@pytest.fixture
async def service(no_key_config: Config) -> AsyncIterator[ChatService]:
    """An open engine without a key."""
    engine = await open_service(no_key_config)
    yield engine
    await engine.close()


@pytest.fixture
async def keyed_service(key_config: Config) -> AsyncIterator[ChatService]:
    """An open engine talking to the fake server."""
    engine = await open_service(key_config)
    yield engine
    await engine.close()


def make_app(service: ChatService, ref: str | None = None, **kwargs: object) -> ChatApp:
    """A test app over an open engine, with a fixed clock and no cursor blink."""
    return ChatApp(
        service.config,
        conversation_ref=ref,
        service=service,
        clock=lambda: FIXED_NOW,
        cursor_blink=False,
        **kwargs,  # type: ignore[arg-type]
    )
