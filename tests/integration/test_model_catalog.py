"""The models' own limits: ``GET /v1/models`` read, kept in the database,
refreshed at most daily and on demand; the model table as the fallback.

Field names follow the Models API reference ("List Models", platform.claude.com/docs/en/api,
and the SDK's ``ModelInfo``): ``max_input_tokens`` ("maximum input context window size"),
``max_tokens`` ("maximum value for the max_tokens parameter") and ``capabilities`` (each an
object with ``supported``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, model_entry
from tests.integration.test_cli import js, run
from tui_chat.engine.catalog import describe, model_choices
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


async def test_choices_list_the_endpoint_models_then_the_table(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    choices = await model_choices(service.catalog)
    assert choices.endpoint == ["claude-sonnet-4-6", "claude-haiku-4-5", "gateway-llama"]
    assert choices.all[:3] == choices.endpoint and "claude-opus-4-6" in choices.all
    assert choices.is_known("gateway-llama") and choices.is_known("claude-opus-4-6-20260101")
    assert not choices.is_known("my-own-model")
    fake_anthropic.models = None
    missing = await model_choices(service.catalog, force=True)
    # The list read before is kept (and said to be old); the table is still offered.
    assert missing.endpoint == choices.endpoint and "unavailable" in missing.problem
    assert missing.table == choices.table
    offline = await model_choices((await make_service(api_key=None)).catalog)
    assert "no API key" in offline.problem


async def test_the_endpoint_gives_the_window_output_limit_and_features(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.model_limits["gateway-llama"] = model_entry(300_000, 20_000, adaptive=False)
    service = await make_service()
    before = service.catalog.info("gateway-llama")
    assert not before.known and before.context_window == 200_000  # the table's guess
    assert await service.catalog.refresh()
    info = service.catalog.info("gateway-llama")
    assert (info.context_window, info.max_output, info.known) == (300_000, 20_000, True)
    assert info.source == "endpoint"
    assert "thinking" in info.features and "adaptive thinking" not in info.features
    assert "web search" in info.features and "images" in info.features
    sonnet = service.catalog.info("claude-sonnet-4-6-20260101")  # a dated spelling finds it
    assert sonnet.source == "endpoint" and "adaptive thinking" in sonnet.features
    assert sonnet.input_price == 3.0  # prices still come from the table
    # The request is built for the endpoint's window and output limit.
    conversation = await service.conversations.new(model="gateway-llama")
    built = await service.requests.context(conversation.id, "hello")
    assert built.breakdown.window == 300_000 and built.breakdown.max_output <= 20_000
    assert built.request["max_tokens"] <= 20_000
    # Kept in the database: a later start without a key (offline) knows the same figures.
    await service.close()
    offline = await make_service(api_key=None)
    kept = offline.catalog.info("gateway-llama")
    assert (kept.context_window, kept.max_output, kept.source) == (300_000, 20_000, "endpoint")
    assert describe(kept).startswith("300k in · 20k out · ")


async def test_the_list_is_read_at_most_daily_and_on_demand(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service()
    await model_choices(service.catalog)
    await model_choices(service.catalog)
    assert fake_anthropic.models_served == 1  # fresh: not asked again
    await model_choices(service.catalog, force=True)
    assert fake_anthropic.models_served == 2  # on demand
    service.catalog.fetched_at = "2020-01-01T00:00:00+00:00"  # a day and more ago
    await model_choices(service.catalog)
    assert fake_anthropic.models_served == 3


async def test_an_endpoint_without_the_fields_falls_back_to_the_table(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.model_limits = {}
    service = await make_service()
    assert await service.catalog.refresh()
    sonnet = service.catalog.info("claude-sonnet-4-6")
    assert (sonnet.context_window, sonnet.max_output) == (1_000_000, 64_000)
    assert sonnet.source == "table" and sonnet.features == ()
    assert not service.catalog.info("gateway-llama").known
    assert describe(service.catalog.info("gateway-llama")).endswith("(guessed)")


async def test_config_overrides_still_win_over_the_endpoint(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    service = await make_service(models={"claude-haiku-4-5": {"context_window": 100_000}})
    await service.catalog.refresh()
    assert service.catalog.info("claude-haiku-4-5").context_window == 100_000


@pytest.mark.slow  # real tui-chat processes
def test_cli_models_lists_the_figures_and_where_they_come_from(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    listed = js(run(isolated_env, "models", "--json", fake=fake_anthropic))
    assert listed["fetched_at"] and listed["problem"] is None
    rows = {r["id"]: r for r in listed["models"]}
    assert rows["claude-haiku-4-5"]["source"] == "endpoint"
    assert rows["claude-haiku-4-5"]["max_output"] == 64_000
    assert "web search" in rows["claude-haiku-4-5"]["features"]
    assert rows["claude-opus-4-6"]["source"] == "table"
    assert rows["gateway-llama"]["source"] == "fallback"
    text = run(isolated_env, "models", fake=fake_anthropic, key=None).stdout  # offline: stored
    assert "claude-sonnet-4-6  1M in · 64k out · adaptive thinking" in text
    assert "no API key" in text


async def test_a_send_reads_the_list_when_a_day_old_and_uses_it_at_once(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.model_limits["gateway-llama"] = model_entry(300_000, 20_000)
    service = await make_service()
    conversation = await service.conversations.new(model="gateway-llama")
    outcome = await service.send(conversation.id, "hello")
    assert outcome.error is None and fake_anthropic.models_served == 1
    assert outcome.request.breakdown.window == 300_000  # this very send used the new figures
    await service.send(conversation.id, "again")
    assert fake_anthropic.models_served == 1  # read at most daily
    service.catalog.fetched_at = "2020-01-01T00:00:00+00:00"
    await service.send(conversation.id, "a day later")
    assert fake_anthropic.models_served == 2


async def test_an_endpoint_without_a_model_list_is_not_asked_at_every_send(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.models = None  # a gateway that answers 404
    service = await make_service()
    conversation = await service.conversations.new()
    for text in ("one", "two", "three"):
        assert (await service.send(conversation.id, text)).error is None
    assert service.catalog.models == [] and "unavailable" in service.catalog.problem
    assert service.catalog.info(conversation.model).source == "table"


async def test_a_model_listed_without_compaction_is_not_sent_a_compaction_request(
    make_service: Make, fake_anthropic: FakeAnthropic
) -> None:
    from tests.integration.test_summary_cost import open_chat, talk
    from tui_chat.engine.events import CompactionFinished, EngineEvent

    fake_anthropic.compaction_models = frozenset()  # the list says: no compact_20260112
    service, cid = await open_chat(make_service, preset="window", summarizer="server")
    finished: list[CompactionFinished] = []

    def keep(event: EngineEvent) -> None:
        if isinstance(event, CompactionFinished):
            finished.append(event)

    service.subscribe(keep)
    await talk(service, cid, range(1, 5))  # the first send read the list
    assert "compaction" not in service.catalog.info("claude-sonnet-4-6").features
    version = await service.summaries.compact(cid)
    assert version.status == "completed" and version.compaction_block is None
    assert not any(r.is_compaction for r in fake_anthropic.message_requests)
    assert finished and "model list says" in (finished[-1].notice or "")


def test_features_read_either_snapshot_s_spelling_of_compaction_once() -> None:
    from tui_chat.llm.models import model_features

    both = {
        "context_management": {"supported": True, "compact_20260112": {"supported": True}},
        "compaction": {"summarize": {"supported": True}},
        "thinking": {"supported": True, "types": {"enabled": {"supported": True}}},
        "image_input": {"supported": "yes"},  # malformed: not counted
    }
    assert model_features(both) == ("thinking", "compaction")
    assert model_features({"compaction": {"summarize": {"supported": True}}}) == ("compaction",)
    assert model_features(None) == ()
