"""``tui-chat archive`` / ``unarchive``: archiving can be undone from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import js, run


@pytest.mark.slow  # real tui-chat processes
def test_archive_hides_and_unarchive_brings_back(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    assert run(isolated_env, "send", "--new", "keep me", fake=fake_anthropic).returncode == 0
    conv_id = js(run(isolated_env, "list", "--json"))[0]["id"]
    archived = run(isolated_env, "archive", conv_id[:8])
    assert archived.returncode == 0, archived.stderr
    assert js(run(isolated_env, "list", "--json")) == []
    listed = js(run(isolated_env, "list", "--all", "--json"))
    assert [(c["id"], c["archived"]) for c in listed] == [(conv_id, True)]
    restored = run(isolated_env, "unarchive", conv_id[:8])
    assert restored.returncode == 0, restored.stderr
    assert "unarchived" in restored.stdout
    assert [c["id"] for c in js(run(isolated_env, "list", "--json"))] == [conv_id]
    again = run(isolated_env, "unarchive", conv_id)
    assert again.returncode != 0 and "not archived" in again.stderr
