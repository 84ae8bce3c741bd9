"""Fixtures of the reliability tests: a home with a config (for the in-process CLI or real
processes), a standalone fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import MARKER_KEY, StandaloneFake, write_config


@pytest.fixture
def cli_home(
    isolated_env: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """``TUI_CHAT_HOME`` with a config (no SDK retries, 2 s timeout) and the environment of an
    in-process CLI pointed at the fake server with the marker key."""
    write_config(isolated_env, "[api]\nmax_retries = 0\ntimeout = 2\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", MARKER_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    return isolated_env


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """``TUI_CHAT_HOME`` with the default config (no SDK retries, a 20 s timeout): the setup
    of every test that runs real tui-chat processes."""
    write_config(isolated_env)
    return isolated_env


@pytest.fixture(scope="module")
def _module_fake() -> Iterator[StandaloneFake]:
    server = StandaloneFake()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def standalone_fake(_module_fake: StandaloneFake) -> StandaloneFake:
    """The fake Anthropic server in its own process (it outlives killed clients): one per
    module, its queued behaviours and recorded requests forgotten before each test."""
    _module_fake.reset()
    return _module_fake
