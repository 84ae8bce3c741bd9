"""`tui-chat usage`: what replies and summaries cost, per day or month and model."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import run
from tests.seam import engine_of
from tui_chat.cli.parser import Args, build_parser
from tui_chat.cli.usage_view import usage
from tui_chat.engine.service import ChatService

Make = Callable[..., Awaitable[ChatService]]


@pytest.mark.slow  # real tui-chat processes
def test_usage_sums_replies_and_summaries_by_day_and_month(
    isolated_env: Path, fake_anthropic: FakeAnthropic
) -> None:
    for n in range(3):
        assert run(isolated_env, "send", "--new", f"hello {n}", fake=fake_anthropic).returncode == 0
    assert run(isolated_env, "send", "and more", fake=fake_anthropic).returncode == 0
    result = run(isolated_env, "usage", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["by"] == "day" and len(report["rows"]) == 1
    row = report["rows"][0]
    assert row["replies"] == 4 and row["input_tokens"] > 0 and row["output_tokens"] > 0
    assert row["chat_usd"] > 0 and report["total_usd"] == pytest.approx(row["total_usd"])
    month = json.loads(run(isolated_env, "usage", "--month", "--json").stdout)
    assert [r["period"] for r in month["rows"]] == [row["period"][:7]]
    assert month["total_usd"] == pytest.approx(report["total_usd"])
    table = run(isolated_env, "usage")
    assert "replies" in table.stdout and "█" in table.stdout and "total $" in table.stdout
    # The list prints each conversation's cost (replies and summaries), as the TUI's list.
    listed = json.loads(run(isolated_env, "list", "--json").stdout)
    assert len(listed) == 3 and all(c["cost_usd"] > 0 for c in listed)
    assert sum(c["cost_usd"] for c in listed) == pytest.approx(report["total_usd"], abs=1e-5)
    assert " $0.0" in run(isolated_env, "list").stdout
    later = run(isolated_env, "usage", "--since", "2999-01")
    assert later.returncode == 0 and "no usage since 2999-01-01" in later.stdout
    bad = run(isolated_env, "usage", "--since", "last week")
    assert bad.returncode == 2 and "give a day (2026-11-01) or a month" in bad.stderr


async def test_summary_calls_count_and_days_are_local(
    make_service: Make, fake_anthropic: FakeAnthropic, isolated_env: Path
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    for n in range(4):
        await service.send(conv.id, f"question {n} about the deploy")
    summary = await service.summaries.compact(conv.id)
    calls = await engine_of(service).store.usage.summary_calls()
    assert summary.summarizer != "extractive"
    assert [c.calls for c in calls] == [1] and calls[0].cost_usd > 0
    report = await service.costs.report()
    # The summary call is on the row of the model it ran on (Haiku 5.5, cheaper than
    # continuing the chat on Sonnet 5.5 here), the replies on the chat model's.
    assert sum(r.summary_calls for r in report.rows) == 1
    assert sum(r.summary_usd for r in report.rows) == pytest.approx(calls[0].cost_usd)
    for row in report.rows:
        assert row.total_usd == pytest.approx(row.chat_usd + row.summary_usd)
    # The gauge's "spent" and the list's cost: the replies and the summary call together.
    assert report.total_usd == pytest.approx(await service.costs.of(conv.id))
    other = await service.conversations.new()
    await service.send(other.id, "a question elsewhere")
    listed = {
        i.conversation.id: i.cost_usd for i in await service.conversations.list(with_cost=True)
    }
    assert listed[conv.id] == pytest.approx(report.total_usd)
    assert (
        listed[other.id] == pytest.approx(await service.costs.of(other.id)) and listed[other.id] > 0
    )
    assert {i.cost_usd for i in await service.conversations.list()} == {0.0}  # not asked: not read
    # Kept while nothing is written; a new reply (or summary) is counted at once.
    before = listed[other.id]
    await service.send(other.id, "one more question")
    again = {
        i.conversation.id: i.cost_usd for i in await service.conversations.list(with_cost=True)
    }
    assert again[other.id] > before and again[conv.id] == pytest.approx(listed[conv.id])
    # A reply made at 02:00 UTC belongs to the previous day in New York.
    with sqlite3.connect(isolated_env / "engine.db") as db:
        db.execute("UPDATE messages SET created_at = '2026-03-10T02:00:00+00:00'")
        db.execute("UPDATE summaries SET created_at = '2026-03-10T02:00:00+00:00'")
    old = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()  # SQLite's 'localtime' asks the C library
    try:
        days = {r.period for r in (await service.costs.report()).rows}
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    assert days == {"2026-03-09"}


async def test_one_hour_cache_writes_are_priced_at_their_rate_everywhere(
    make_service: Make,
) -> None:
    from tui_chat.core.models import Usage
    from tui_chat.llm.models import cost_usd

    service = await make_service()
    conv = await service.conversations.new()
    usage = Usage(
        input_tokens=10,
        output_tokens=100,
        cache_creation_input_tokens=50_000,
        cache_creation_1h_input_tokens=50_000,
        cache_read_input_tokens=1_000,
    )
    await engine_of(service).store.messages.add(
        conv.id,
        role="user",
        content=[{"type": "text", "text": "hi"}],
        text="hi",
        token_count=1,
    )
    await engine_of(service).store.messages.add(
        conv.id,
        role="assistant",
        content=[{"type": "text", "text": "ok"}],
        text="ok",
        token_count=1,
        usage=usage,
        model=conv.model,
    )
    expected = cost_usd(service.catalog.info(conv.model), usage)
    five_minute = cost_usd(
        service.catalog.info(conv.model),
        Usage(**{**usage.to_dict(), "cache_creation_1h_input_tokens": 0}),
    )
    assert expected > five_minute  # 2x against 1.25x for the same writes
    assert await service.costs.of(conv.id) == pytest.approx(expected)  # the gauge's "spent"
    assert (await service.costs.report()).total_usd == pytest.approx(expected)


@pytest.mark.parametrize(
    ("since", "error"),
    [
        ("2026-02-30", "'2026-02-30': no such day"),
        ("2026-13", "'2026-13': no such day"),
        ("last week", "give a day (2026-11-01) or a month (2026-11)"),
    ],
)
def test_usage_since_refuses_what_is_not_a_day(
    since: str, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["usage", "--since", since], namespace=Args())
    assert exited.value.code == 2 and error in capsys.readouterr().err


async def test_usage_since_says_from_when_it_counts(
    make_service: Make, fake_anthropic: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    service = await make_service()
    conv = await service.conversations.new()
    await service.send(conv.id, "a question")
    today = (await service.costs.report()).rows[0].period
    for since, first in (("2999-01", "no usage since 2999-01-01"), (today, f"usage since {today}")):
        args = build_parser().parse_args(["usage", "--since", since], namespace=Args())
        assert await usage(service, args) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == first
    assert any(line.startswith(today) for line in lines[1:])  # the day's row
