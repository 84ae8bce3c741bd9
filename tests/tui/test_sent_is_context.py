"""What the TUI sends is what ``tui-chat context`` builds.

Every request the app sends is compared with the request a fresh engine (nothing kept between
builds, as the ``context`` command has) builds for the same conversation and draft: after a
search jump, an edit, a fork and a roll back of the summary.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.seam import open_service
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import ChatPilot, ready, settle, until
from tests.tui.seed import seed_demo
from tui_chat.config import Config
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.main import MainScreen
from tui_chat.tui.screens.search import SearchScreen


def _plain(value: Any) -> Any:
    """``value`` without cache breakpoints (their place depends on what follows)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


async def _context(config: Config, conversation_id: str, draft: str | None) -> dict[str, Any]:
    """The request ``tui-chat context`` shows: built by an engine just opened on the same
    database, which has kept nothing from earlier builds."""
    engine = await open_service(config)
    try:
        return dict((await engine.requests.context(conversation_id, draft)).request)
    finally:
        await engine.close()


async def _send(pilot: ChatPilot, fake: FakeAnthropic, text: str, config: Config) -> dict[str, Any]:
    """Type ``text`` and enter; the body sent, checked against a fresh engine's build."""
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen) and screen.conversation_id is not None
    expected = await _context(config, screen.conversation_id, text)
    count = len(fake.bodies)
    screen.composer.load_text(text)
    screen.composer.focus()
    await pilot.press("enter")
    await fake.wait_for(count + 1)
    await until(pilot, lambda: not pilot.app.replying)  # type: ignore[attr-defined]
    await settle(pilot)
    body: dict[str, Any] = fake.bodies[count]
    assert body["messages"] == expected["messages"]
    assert body.get("system") == expected.get("system")
    return body


async def test_the_request_sent_equals_context_after_a_jump_an_edit_a_fork_and_a_roll_back(
    keyed_service: ChatService,
    key_config: Config,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    service = keyed_service
    demo = await seed_demo(service, tmp_path)
    other = await service.conversations.new("elsewhere")
    prompt = next(
        m
        for m in await service.messages.page(demo.id, limit=500)
        if m.text.startswith("Counts match")
    )
    app = make_app(service, other.id)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+f", *"inserting", "enter")
        search = app.screen
        assert isinstance(search, SearchScreen)
        await until(pilot, lambda: bool(search.hits))
        await pilot.press("down", "enter")
        await until(pilot, lambda: screen.conversation_id == demo.id)
        await settle(pilot)
        assert screen.chat.selected == prompt.id
        # The edit: sent in a fork holding what came before the prompt.
        await pilot.press("f5", "e")
        await until(pilot, lambda: screen.composer.text.startswith("Counts match"))
        count = len(fake_anthropic.bodies)
        await pilot.press("end", *" please")
        await pilot.press("enter")
        await until(pilot, lambda: screen.conversation_id not in (demo.id, None))
        fork_id = screen.conversation_id
        assert fork_id is not None
        # Gauge counts beside the send's build, as the composer's timers start them
        # (two builds read a new fork's tail at once and the history was sent twice; the race
        # itself is pinned down by the test below).
        await asyncio.gather(screen.refresh_gauge(), screen.refresh_gauge(full=True))
        await fake_anthropic.wait_for(count + 1)
        await until(pilot, lambda: not app.replying)
        await settle(pilot)
        sent = fake_anthropic.bodies[count]
        assert sent["messages"][-1]["content"][-1]["text"].endswith("key. please")
        stored = await _context(key_config, fork_id, None)  # the reply now ends it
        assert _plain(sent["messages"]) == _plain(stored["messages"][:-1])
        # Later sends of the same session, a fork, a roll back.
        await _send(pilot, fake_anthropic, "and the suppliers table?", key_config)
        await pilot.press("f5", "f")
        await until(pilot, lambda: screen.conversation_id not in (fork_id, None))
        await settle(pilot)
        await _send(pilot, fake_anthropic, "in the fork now", key_config)
        await screen.summary_commands.action_roll_back()
        await settle(pilot)
        body = await _send(pilot, fake_anthropic, "after the roll back", key_config)
        assert _roles(body).count("user") == _roles(body).count("assistant") + 1


@pytest.mark.slow  # a real process
async def test_two_builds_at_once_read_a_new_conversation_once(
    service: ChatService, tmp_path: Path
) -> None:
    """The gauge's build and a send's build of a conversation never seen before."""
    texts = ["hi", "hello", "a shell one-liner?", "ls | wc -l", "thanks", "welcome"]
    path = tmp_path / "c.json"
    messages = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]
    path.write_text(json.dumps({"title": "C", "messages": messages}))
    conversation = await service.transfer.import_file(path)
    prompt = (await service.messages.history(conversation.id))[2]
    fork, _ = await service.branches.fork_for_edit(prompt.id)
    await asyncio.gather(
        service.requests.context(fork.id, "x"), service.requests.gauge(fork.id, "x")
    )
    built = await service.requests.context(fork.id, "x")
    assert [m["role"] for m in built.request["messages"]] == ["user", "assistant", "user"]
