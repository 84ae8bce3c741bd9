"""Fixtures of the reliability tests: a CLI home with a config, a standalone fake server."""

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
def standalone_fake() -> Iterator[StandaloneFake]:
    """The fake Anthropic server in its own process (it outlives killed clients)."""
    server = StandaloneFake()
    try:
        yield server
    finally:
        server.stop()
