"""The TUI parts of items 1, 3 and 5, through Textual's Pilot.

- Every reply fault: the TUI says what happened and what to do, the cut-off reply is kept and
  marked, Retry (ctrl+r) works and the app keeps running; three failed automatic summaries
  show the pause.
- The TUI and a CLI process on one database at once: nothing locked reaches the user, nothing
  is lost, no boundary gets two versions.
- Screenshots of every screen after a session with a marker key (echoed back by the server):
  the key is in none of them; an export written from the TUI is private (0600).
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import MARKER_KEY, cli_argv, cli_env, integrity, report, rows
from tests.reliability.test_api_faults import FAULTS, PARTIAL, SUMMARY_POLICY, _age_failures
from tests.seam import engine_of
from tests.tui.conftest import SIZE, make_app
from tests.tui.helpers import chat, notifications, on_screen, ready, settle, until
from tui_chat.engine.compaction import CompactionError
from tui_chat.engine.service import ChatService
from tui_chat.tui.screens.prompt import TextPrompt
from tui_chat.tui.widgets.composer import Composer

Make = Callable[..., Awaitable[ChatService]]


async def _send(pilot: Pilot[None], text: str) -> None:
    composer = pilot.app.query_one(Composer)
    composer.focus()
    composer.load_text(text)
    await pilot.press("enter")
    await pilot.pause()
    assert composer.text == "", f"the message was not sent: {notifications(pilot.app)}"


async def test_a_stream_stopped_before_it_ran_does_not_end_the_screen(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    # The deterministic form of that race: the failure comes before the stream task ran.
    service = await make_service()
    app = make_app(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.conversation_id is not None
        streaming = await engine_of(service).store.messages.add(
            screen.conversation_id,
            role="assistant",
            content=[],
            text="",
            token_count=0,
            status="streaming",
        )
        view = await chat(app).add_message(streaming)
        failed = await engine_of(service).store.messages.update(
            streaming.id, status="error", stop_reason="error:server"
        )
        await view.start_stream()
        await view.finish(failed, "the API had an internal error (500)")  # nothing ran between
        await pilot.pause()
        assert view.has_class("-failed") and app.is_running
        assert screen.query_one(Composer) is not None


TUI_FAULTS = ["401", "429-retry-after", "529", "timeout", "drop-mid-stream", "malformed-sse"]
"""One of each way the TUI shows a failure (every fault is covered for the engine and CLI in
``test_api_faults``): an error status, a hint with a wait, a timeout, a cut-off reply."""


@pytest.mark.parametrize("name", TUI_FAULTS)
async def test_tui_says_what_happened_and_retry_works(
    make_service: Make, fake_anthropic: FakeAnthropic, name: str
) -> None:
    fault = FAULTS[name]
    service = await make_service(api_key=MARKER_KEY, **fault.options)
    app = make_app(service)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        # One good turn first: a failure on a warm connection arrives before the reply's
        # stream has even started (that once ended the screen's message loop).
        await _send(pilot, "hello")
        await settle(pilot)
        fault.push(fake_anthropic, "chat")
        await _send(pilot, "are you there?")
        await settle(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        user, reply = (await service.messages.page(conv_id))[-2:]
        assert user.text == "are you there?" and user.status == "complete"
        if fault.partial:
            assert reply.status == "incomplete" and reply.text.startswith(PARTIAL.strip())
        else:
            assert reply.status == "error"
        told = " ".join(notifications(app)).lower()
        assert all(word.lower() in told for word in fault.says), told
        assert MARKER_KEY not in told
        view = chat(app).view_for(reply.id)
        assert view is not None and view.has_class("-failed")
        assert "ctrl+r" in str(view.query_one(".status", Static).visual)

        await pilot.press("ctrl+r")
        await settle(pilot)
        stored = await service.messages.page(conv_id)
        assert [m.status for m in stored][2:] == ["complete", reply.status, "complete"]
        assert stored[-1].text == "Reply to: are you there?"
        assert app.is_running and app._exception is None
        assert screen.query_one(Composer).text == ""


async def test_tui_shows_the_pause_after_three_failed_summaries(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service(compaction=SUMMARY_POLICY)
    conv = await service.conversations.new()
    for i in range(1, 5):
        for role, text in (("user", f"question {i}"), ("assistant", f"answer {i}")):
            await engine_of(service).store.messages.add(
                conv.id,
                role=role,  # type: ignore[arg-type]
                content=[{"type": "text", "text": text}],
                text=text,
                token_count=3,
            )
    fake_anthropic.push_error(529, target="summary", times=None)
    for _ in range(2):  # two automatic failures already happened
        with pytest.raises(CompactionError):
            await engine_of(service).worker.compact(conv.id, trigger="auto")
        _age_failures(service)
    app = make_app(service, conv.id)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        assert not screen.gauge.paused
        await _send(pilot, "one more question")  # its reply triggers the third attempt
        await settle(pilot)
        await until(pilot, lambda: screen.gauge.paused)
        told = " ".join(notifications(app))
        assert "auto-compaction is paused" in told and "ctrl+g" in told
        assert "auto-compaction paused" in str(screen.gauge.render())
        assert await engine_of(service).store.summaries.active(conv.id) is None


@pytest.mark.slow  # a real process
async def test_tui_and_cli_on_one_database(
    make_service: Make, fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    service = await make_service(compaction={"preset": "turns", "every_turns": 2})
    db = Path(str(engine_of(service).store.path))
    fake_anthropic.chunk_delay = 0.005
    app = make_app(service)
    cli_results: list[subprocess.CompletedProcess[str]] = []
    stop = threading.Event()

    def cli_loop(conv_id: str) -> None:
        env = cli_env(isolated_env, fake_anthropic.base_url)
        count = 0
        while not stop.is_set():
            args = (
                ("compact", conv_id) if count % 3 == 2 else ("send", "-c", conv_id, f"cli {count}")
            )
            cli_results.append(
                subprocess.run(
                    cli_argv("--db", str(db), *args),
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            )
            count += 1

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await ready(pilot)
        conv_id = screen.conversation_id
        assert conv_id is not None
        worker = threading.Thread(target=cli_loop, args=(conv_id,))
        worker.start()
        try:
            for i in range(8):
                await _send(pilot, f"tui {i}")
                await settle(pilot)
                await pilot.press("ctrl+g")  # and compact from the TUI now and then
                await settle(pilot)
        finally:
            stop.set()
            await pilot.app.workers.wait_for_complete()
            worker.join()
        told = " ".join(notifications(app)).lower()
        assert "locked" not in told and "busy" not in told

    for done in cli_results:
        assert "locked" not in done.stderr.lower() and "Traceback" not in done.stderr, done
        if done.args[-2:-1] == ["-c"] or "send" in done.args:
            assert done.returncode == 0, done
        else:
            assert (
                done.returncode == 0
                or "nothing to compact" in done.stderr
                or ("already running" in done.stderr)
            ), done
    stored = rows(db, "SELECT role, text, status FROM messages")
    user_texts = Counter(r["text"] for r in stored if r["role"] == "user")
    cli_sent = sum(1 for d in cli_results if "send" in d.args)
    assert all(user_texts[f"tui {i}"] == 1 for i in range(8))
    assert sum(n for t, n in user_texts.items() if t.startswith("cli ")) == cli_sent
    assert all(r["status"] == "complete" for r in stored)
    completed = rows(
        db, "SELECT parent_id, covers_to_message_id FROM summaries WHERE status = 'completed'"
    )
    spans = Counter((r["parent_id"], r["covers_to_message_id"]) for r in completed)
    assert all(n == 1 for n in spans.values()), spans
    assert not rows(db, "SELECT id FROM summaries WHERE status = 'in_progress'")
    assert integrity(db) == "ok"
    report(
        "TUI and CLI on one database",
        tui_sends=8,
        cli_processes=len(cli_results),
        versions=len(completed),
        messages=len(stored),
        locked_errors=0,
        lost=0,
    )


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """Run with umask 022: files are private only if tui-chat makes them so."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.slow  # a sweep over every screen (the scrubbing itself: tests/unit/llm/test_client.py)
async def test_screenshots_never_show_the_key_and_exports_are_private(
    make_service: Make, fake_anthropic: FakeAnthropic, tmp_path: Path, permissive_umask: None
) -> None:
    service = await make_service(api_key=MARKER_KEY, compaction={"preset": "turns"})
    shots = tmp_path / "shots"
    shots.mkdir()
    app = make_app(service, export_dir=tmp_path)
    taken: list[Path] = []

    def shoot(name: str) -> None:
        taken.append(Path(app.save_screenshot(filename=f"{name}.svg", path=str(shots))))

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        main = await ready(pilot)
        for i in range(4):
            await _send(pilot, f"turn {i} about src/module_{i}.py")
            await settle(pilot)
        await service.finish_background()  # the inspector needs the automatic summary
        conv_id = (await service.conversations.list())[0].conversation.id
        assert await engine_of(service).store.summaries.active(conv_id) is not None
        # A gateway that echoes the key: shown scrubbed in the notification and the reply view.
        fake_anthropic.push_error(401, message=f"invalid x-api-key: {MARKER_KEY}", target="chat")
        await _send(pilot, "and now?")
        await settle(pilot)
        # The failure is on screen (scrubbed) when the screenshot is taken.
        failed = (await service.messages.page(conv_id))[-1]
        assert failed.status == "error" and failed.stop_reason == "error:auth"
        await until(pilot, lambda: main.streaming_id is None and not app.replying)
        await settle(pilot)
        assert all(MARKER_KEY not in n for n in notifications(app))
        shoot("error")
        for key, name in (
            ("ctrl+t", "timeline"),
            ("f1", "help"),
            ("ctrl+o", "context"),
            ("f3", "settings"),
            ("f4", "inspector"),
            ("ctrl+f", "search"),
        ):
            await pilot.press(key)
            # Screens opened by a waiting worker (search) never "complete": no settle here.
            try:
                await until(pilot, lambda name=name: name == "timeline" or app.screen is not main)
            except AssertionError:
                raise AssertionError(f"{name} ({key}) did not open: {notifications(app)}") from None
            await pilot.pause()
            shoot(name)
            if app.screen is not main:
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is main)
        await pilot.press("ctrl+s")
        await on_screen(pilot, TextPrompt)
        exported = tmp_path / "from-tui.md"
        app.screen.query_one(Input).value = str(exported)
        await pilot.press("enter")
        await settle(pilot)

    assert len(taken) == 7
    for shot in taken:
        text = shot.read_text()
        assert MARKER_KEY not in text and MARKER_KEY[8:28] not in text, shot.name
    assert exported.exists() and MARKER_KEY not in exported.read_text()
    assert stat.S_IMODE(exported.stat().st_mode) == 0o600, oct(exported.stat().st_mode)
