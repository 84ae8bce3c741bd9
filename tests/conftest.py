"""Shared fixtures: the fake Anthropic server and an isolated environment."""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

import pytest
import textual._wait
from hypothesis import HealthCheck, settings
from textual.pilot import Pilot

import tests.bytecode
import tests.notified  # noqa: F401  (every notification an app raises is kept for its test)
from tests.fakes.fake_anthropic import FakeAnthropic, fake_anthropic_server  # noqa: F401  (fixture)
from tests.seam import Engine, TestClock, open_engine
from tui_chat.config import Config
from tui_chat.engine.service import ChatService

# Hypothesis: no per-example deadline anywhere (the machine may be loaded: a slow example is
# not a failure). "dev" (the default) explores new examples each run; "ci" (.ci/run sets
# HYPOTHESIS_PROFILE=ci) is derandomized, so a CI run is repeatable, and keeps no database.
settings.register_profile(
    "dev", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "ci",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
    print_blob=True,
)
_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")

# Pilot waits for the app to go idle after every key it presses (twice) and in every
# ``pause()``: it sleeps in slices and calls the process idle when a slice used under a
# twentieth of its length in CPU. Textual's 20 ms slices made every key cost 40 ms of sleep
# (a third of a TUI test's wall time, with the core left unused); 4 ms slices, idle under a
# fifth, give the app the same turns. Only how long the test sleeps changes: every wait is
# still on a state (``tests/tui/helpers.py``'s ``until``).
textual._wait.SLEEP_GRANULARITY = 0.004
textual._wait.SLEEP_IDLE = 0.0008
settings.load_profile(_PROFILE)

EXAMPLE_SCALE = {"dev": 0.2, "ci": 1.0}
"""The share of each property test's examples a profile runs: a test's ``max_examples`` (its own
``@settings`` or the profile's 100) is the count CI runs; a developer's ``pytest`` runs a fifth
of it (at least 10), enough to catch a broken invariant in seconds while CI still explores."""


def _scale_examples(item: pytest.Item) -> None:
    test = getattr(item, "obj", None)
    test = getattr(test, "__func__", test)
    if not getattr(test, "is_hypothesis_test", False):
        return
    scale = EXAMPLE_SCALE.get(_PROFILE, 1.0)
    own = test._hypothesis_internal_use_settings  # type: ignore[union-attr]
    scaled = max(10, round(own.max_examples * scale))
    if scaled < own.max_examples:
        test._hypothesis_internal_use_settings = settings(own, max_examples=scaled)  # type: ignore[union-attr]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scale each property test's examples by the profile (``EXAMPLE_SCALE``)."""
    for item in items:
        _scale_examples(item)


YOUNG_GC_THRESHOLD = 20_000
"""Allocations (less deallocations) that set off a young collection in a test process: 700 by
default. A Pilot test allocates fast (Textual's styles, strips and messages): at 700 three TUI
files ran 7,100 young, 630 middle and 88 full collections, 6.5 of their 28 CPU-s; at 20,000,
160, 3 and 50 (the per-test ones below and the app's own after each reply), 2.8 CPU-s. Most
young objects die by their reference count before a collection would have walked them. Only
when cyclic garbage is freed changes: no test counts collections, and the app's hold on full
collections while a reply streams (``tui/gc_pause.py``) keeps the young thresholds it finds."""


def _fewer_young_collections() -> None:
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GC_THRESHOLD, middle, old)


_fewer_young_collections()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built (modules, fixtures, the test items) out of the garbage
    collector's reach: every later collection in this worker skips those objects for good."""
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """After each test (its fixtures torn down, its arguments let go): collect its garbage,
    then freeze what is left, as collection's objects are frozen.

    What a test leaves alive for good (a module imported lazily, such as the SDK when the
    first test sends; Textual's and the tokenizer's caches) would otherwise be walked by every
    later full collection in this worker: the full collection a TUI test's app runs after each
    reply (``tui/gc_pause.py``) took 0.2 s with the SDK imported, most of it that walk."""
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()


# Every test's files (its database, exports, the CLI's home) live under pytest's temporary
# root. SQLite syncs each committed transaction to disk (a migrated database is dozens), and
# on a disk shared with other work a sync waits far longer than the test computes. Where a
# RAM file system exists (Linux's /dev/shm) the root goes there: the files behave the same to
# every reader and writer, killed processes included; only the syncs cost nothing. pytest
# still keeps the last three runs' directories. Set PYTEST_DEBUG_TEMPROOT to choose another.
_RAM = Path("/dev/shm")
if "PYTEST_DEBUG_TEMPROOT" not in os.environ and _RAM.is_dir() and os.access(_RAM, os.W_OK):
    os.environ["PYTEST_DEBUG_TEMPROOT"] = str(_RAM)


SCREEN_WAIT = 600.0
"""Seconds a Pilot waits for the screen's widgets to drain their queues before failing.

Textual's own bound is 30 s (``WaitForScreenTimeout``): a wall-clock time that a loaded machine
exceeds (a pane with its window of messages mounted, at load 12), failing a test that was only
slow. Tests wait on states; this bound only ends a test that truly hangs."""

_wait_for_screen = Pilot._wait_for_screen


async def _patient_wait_for_screen(self: Pilot[Any], timeout: float = SCREEN_WAIT) -> bool:
    return await _wait_for_screen(self, timeout=max(timeout, SCREEN_WAIT))


Pilot._wait_for_screen = _patient_wait_for_screen  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """``-n auto`` (``pyproject.toml``'s default) starts one and a half workers per core (3 on
    2 cores), not one.

    A test spends much of its time off the core: Pilot sleeps between keys until the app goes
    idle, a test waits on the processes it starts and on the local server's replies (per test,
    wall minus the worker's CPU came to 54 worker-s in the fast tier). With one worker per
    core those waits left a core unused (fast tier 92-100 s); a third worker computes
    meanwhile (76-86 s). Two per core were faster still (73-82 s) but, three runs side by side
    (12 workers on 2 cores), the snapshots' scrollbar was drawn a fraction of a cell off in
    five of six runs. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the count."""
    cores = yield
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return cores
    return cores + max(1, cores // 2)


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A file's bytes as a parameter are named by their size, not spelled out: an id must be the
    same in every xdist worker (an encrypted PDF's bytes are random) and short."""
    if isinstance(val, bytes | bytearray):
        return f"{len(val)}-bytes"
    return None


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``TUI_CHAT_HOME`` at a fresh directory and clear every ``ANTHROPIC_*`` variable.

    Returns:
        The home directory (set ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL`` with
        ``monkeypatch`` or ``fake_anthropic.env()`` when a test needs them).
    """
    home = tmp_path / "tui-chat-home"
    home.mkdir()
    monkeypatch.setenv("TUI_CHAT_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    return home


@pytest.fixture
async def make_engine(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> AsyncIterator[Callable[..., Awaitable[Engine]]]:
    """Factory for services on one database, talking to the fake server, each handed out
    with its parts: ``engine.service``, ``engine.store``, ``engine.worker`` and the clock
    injected into the store (``engine.clock``; pass ``clock=`` to share or pin one).

    ``await make_engine(api_key=None, compaction={...})``; every service is closed at the end.
    """
    opened: list[ChatService] = []

    async def make(clock: TestClock | None = None, **overrides: Any) -> Engine:
        values: dict[str, Any] = {
            "api_key": "sk-ant-test-key-0000",
            "base_url": fake_anthropic.base_url,
            "max_retries": 0,
            "timeout": 20.0,
            "db_path": isolated_env / "engine.db",
        }
        values.update(overrides)
        engine = await open_engine(Config(**values), clock=clock)
        opened.append(engine.service)
        return engine

    yield make
    for service in opened:
        await service.close()


@pytest.fixture
def make_service(
    make_engine: Callable[..., Awaitable[Engine]],
) -> Callable[..., Awaitable[ChatService]]:
    """:func:`make_engine`'s services alone (``tests.seam.engine_of(service)`` has the parts)."""

    async def make(**overrides: Any) -> ChatService:
        return (await make_engine(**overrides)).service

    return make
