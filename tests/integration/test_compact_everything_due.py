"""Compact folds everything due, per-kind retention in ``summary --json``, a summary that would wipe
the history is never activated, and at small windows the gauge, the trigger and the fit check use
one figure and compaction runs before a turn is left out.

CLI tests run the real ``tui-chat`` process against the local Anthropic-compatible server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.integration.test_cli import js, run
from tests.seam import engine_of
from tui_chat.core.triggers import plan_boundary


def _import(home: Path, tmp: Path, turns: int, words: int = 20) -> str:
    """Import a conversation of ``turns`` exchanges full of identifiers; return its id."""
    messages: list[dict[str, Any]] = []
    for i in range(1, turns + 1):
        filler = " ".join(f"detail{i}x{k}" for k in range(words))
        messages.append(
            {
                "role": "user",
                "content": f"Turn {i}: open src/app/mod_{i}.py and fix ERR_CODE_{i}. {filler}",
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": f"Done: parse_item_{i}() now returns {i * 17} ms; see "
                f"https://example.com/issues/{i}. Commit 9f{i:02d}c3ab1. {filler}",
            }
        )
    data = {"format": "tui-chat", "version": 1, "conversation": {"title": "t"}}
    data["messages"] = messages
    source = tmp / f"conv-{turns}.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    imported = js(run(home, "import", str(source), "--json"))
    return str(imported["id"])


@pytest.mark.slow  # real tui-chat processes
def test_compact_folds_everything_due_with_progress(
    isolated_env: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    cid = _import(isolated_env, tmp_path, turns=10)
    assert run(isolated_env, "set", cid, "preset", "turns").returncode == 0
    result = run(isolated_env, "compact", cid, "--json", fake=fake_anthropic)
    assert result.returncode == 0, result.stderr
    assert "compacted 1/3" in result.stderr and "compacted 3/3" in result.stderr
    versions = js(run(isolated_env, "summaries", cid, "--json"))
    assert [v["status"] for v in versions] == ["completed"] * 3
    # Turns 1-9 are folded in three blocks; turn 10 (not a whole block) stays raw.
    context = js(run(isolated_env, "context", cid, "--json"))
    assert len(context["sent_message_ids"]) == 2


@pytest.mark.slow  # real tui-chat processes
def test_summary_json_reports_retention_per_kind_and_what_was_lost(
    isolated_env: Path, tmp_path: Path
) -> None:
    cid = _import(isolated_env, tmp_path, turns=8)
    for key, value in (("preset", "window"), ("summarizer", "extractive")):
        assert run(isolated_env, "set", cid, key, value, key=None).returncode == 0
    assert run(isolated_env, "compact", cid, key=None).returncode == 0
    summary = js(run(isolated_env, "summary", cid, "1", "--json", key=None))
    retention = summary["retention"]
    kinds = retention["by_kind"]
    assert {"path", "url", "hash", "error", "code", "number"} <= set(kinds)
    assert retention["total"] == sum(k["total"] for k in kinds.values())
    assert retention["kept"] == sum(k["kept"] for k in kinds.values())
    assert len(retention["not_kept"]) == retention["total"] - retention["kept"]
    # The ledger travels with the version: the window preset sends none (share 0), so what
    # the extractive summary dropped is listed by kind and value.
    assert all({"kind", "value"} == set(item) for item in retention["not_kept"])
    text = run(isolated_env, "summary", cid, "1", key=None).stdout
    assert "identifiers kept (summary + ledger)" in text


@pytest.mark.slow  # real tui-chat processes
def test_the_adaptive_ledger_keeps_identifiers_the_summary_drops(
    isolated_env: Path, tmp_path: Path
) -> None:
    cid = _import(isolated_env, tmp_path, turns=16)
    assert run(isolated_env, "set", cid, "summarizer", "extractive", key=None).returncode == 0
    assert run(isolated_env, "set", cid, "context_window", "12000", key=None).returncode == 0
    assert run(isolated_env, "compact", cid, key=None).returncode == 0
    summary = js(run(isolated_env, "summary", cid, "1", "--json", key=None))
    kept, total = summary["retention"]["kept"], summary["retention"]["total"]
    assert total >= 30 and kept >= 0.9 * total
    context = js(run(isolated_env, "context", cid, "--json", key=None))
    assert context["preset"] == "adaptive"
    assert context["breakdown"]["sections"]["ledger"] > 0
    assert set(context["breakdown"]["budgets"]) >= {"summary", "ledger", "recall", "recent"}
    memory = "\n".join(block["text"] for block in context["request"]["system"])
    assert "## Identifier ledger" in memory and "src/app/mod_1.py" in memory


@pytest.mark.slow  # real tui-chat processes
def test_an_oversized_summary_is_never_activated(
    isolated_env: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    cid = _import(isolated_env, tmp_path, turns=12)
    # adaptive at a 4k window: the summary's budget is 5 % of 3,000 usable tokens (a small
    # window's, budget.SMALL_MEMORY_SHARE).
    assert run(isolated_env, "set", cid, "context_window", "4000").returncode == 0
    before = js(run(isolated_env, "context", cid, "--json"))
    budget = before["breakdown"]["budgets"]["summary"]
    assert budget == 150
    # A reply many times its budget, as a gateway that ignores the length asked for sends it.
    huge = " ".join(f"fact{i} holds value {i}." for i in range(10_000))
    fake_anthropic.push_summary(f"<summary>{huge}</summary>", stop_reason="end_turn")
    result = run(isolated_env, "compact", cid, fake=fake_anthropic)
    assert result.returncode != 0
    versions = js(run(isolated_env, "summaries", cid, "--json"))
    assert versions[0]["status"] == "failed" and not versions[0]["active"]
    assert "over 4x its budget" in versions[0]["error"]
    after = js(run(isolated_env, "context", cid, "--json"))
    assert after["sent_message_ids"] == before["sent_message_ids"]  # history still sent
    # Somewhat over budget: activated, cut to the budget, so turns and recall keep their room.
    facts = "\n".join(f"Fact {i} holds value {i}." for i in range(60))
    fake_anthropic.push_summary(f"<summary>{facts}</summary>")
    assert run(isolated_env, "compact", cid, fake=fake_anthropic).returncode == 0
    newest = js(run(isolated_env, "summaries", cid, "--json"))[0]
    assert newest["active"] and newest["summary_tokens"] <= budget
    final = js(run(isolated_env, "context", cid, "--json"))
    assert final["sent_message_ids"] and final["fits"]


async def test_gauge_trigger_and_fit_check_agree_and_compaction_runs_before_a_drop(
    make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    for preset in ("adaptive", "window", "threshold"):
        service = await make_service()
        conv = await service.conversations.new()
        await service.conversations.set_setting(conv.id, "preset", preset)
        await service.conversations.set_setting(conv.id, "context_window", "2000")
        # Real counts below local ones: the case where the figures used to disagree.
        await engine_of(service).store.set_calibration(conv.model, 0.8, 5)
        for i in range(1, 13):
            # A chat reply, and a short tagged summary for a background compaction (the
            # server's own summary of these turns is over a 2k window's summary budget).
            fake_anthropic.push_reply(f"reply {i}: " + "details of the answer " * 25, target="chat")
            fake_anthropic.push_summary(f"<summary>Questions 1-{i} asked for details.</summary>")
            outcome = await service.send(conv.id, f"question {i}: " + "some context " * 40)
            built = outcome.request
            b = built.breakdown
            assert b.used == max(b.input_tokens, b.calibrated_tokens)
            assert built.fits == (b.used <= b.usable)
            if built.dropped_message_ids:
                # Left out only when no compaction could have made room.
                raw = await engine_of(service).store.messages.history(
                    conv.id,
                    after_id=(
                        await engine_of(service).store.summaries.active(conv.id) or _NoSummary
                    ).covers_to_message_id,
                )
                policy = service.conversations.policy_for(
                    await service.conversations.resolve(conv.id)
                )
                sums = [
                    (x.status, x.error)
                    for x in await engine_of(service).store.summaries.versions(conv.id)
                ]
                assert plan_boundary(policy, raw[:-1], manual=True) == 0, (preset, i, sums)
                assert any("left out" in w for w in b.warnings)
        await service.finish_background()
        gauge = await service.requests.gauge(conv.id)
        projected, usable = await service.requests.projected(
            await service.conversations.resolve(conv.id)
        )
        assert usable == gauge.usable
        if gauge.trigger_tokens is not None:
            assert gauge.trigger_tokens <= usable or preset == "threshold"
        assert projected >= gauge.used - gauge.elastic - gauge.sections["recent"]


class _NoSummary:
    covers_to_message_id = 0
