"""The working budget, recall only after a fold, and the cache lifetime chosen by pauses."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, fake_tokens
from tests.seam import engine_of
from tui_chat.core.cache_ttl import choose_ttl, pauses, turn_price
from tui_chat.core.models import Usage
from tui_chat.core.presets import DEFAULT_PRESET, PRESETS, resolve_policy
from tui_chat.core.request.recall_cost import RECALL_COST_SHARE
from tui_chat.engine.service import ChatService
from tui_chat.llm.models import cost_usd, model_info

Make = Callable[..., Awaitable[ChatService]]

PARAGRAPH = (
    "The harbour office keeps its ledgers in a blue cabinet by the window, and every "
    "Thursday the clerk copies the tide tables into the front page of the new book. "
)


def _text(body: dict[str, Any]) -> str:
    return json.dumps({"system": body.get("system"), "messages": body.get("messages")})


def _marks(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for block in body.get("system") or []:
        if "cache_control" in block:
            found.append(block["cache_control"])
    for message in body["messages"]:
        for block in message["content"]:
            if isinstance(block, dict) and "cache_control" in block:
                found.append(block["cache_control"])
    return found


class TestTheBudgetSetting:
    def test_the_default_preset_uses_the_budget_and_the_seeds_keep_their_triggers(
        self,
    ) -> None:
        policy = resolve_policy()
        assert policy.preset == DEFAULT_PRESET and policy.trigger == "budget"
        assert policy.budget is not None and policy.budget >= 10_000
        assert {PRESETS[name].trigger for name in PRESETS if name != DEFAULT_PRESET} == {
            "tokens",
            "turns",
            "ratio",
        }

    def test_a_conversation_and_the_config_set_it(self) -> None:
        assert resolve_policy({"budget": "120000"}).budget == 120_000
        assert resolve_policy(None, {"budget": 50_000}).budget == 50_000
        assert resolve_policy({"budget": "none"}).budget is None

    @pytest.mark.parametrize("raw", ["12.5k", "-3", "0", "lots"])
    def test_a_bad_budget_is_refused_with_a_clear_message(self, raw: str) -> None:
        from tui_chat.core.presets import PolicyError

        with pytest.raises(PolicyError, match="budget"):
            resolve_policy({"budget": raw})


class TestNothingFoldedBelowTheBudget:
    async def test_every_message_is_sent_verbatim_without_recall_until_the_budget(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        conv = await service.conversations.new()
        await service.conversations.set_setting(conv.id, "budget", "3000")
        texts = [f"Note {i}: {PARAGRAPH * 6}" for i in range(12)]
        for text in texts:
            outcome = await service.send(conv.id, text)
            assert outcome.error is None
            await service.finish_background()
            built = await service.requests.context(conv.id, "and now?")
            if built.breakdown.used >= 2_200:
                break
            # Under the budget: no version, every message verbatim, no recalled text.
            assert await service.summaries.versions(conv.id) == []
            body = fake_anthropic.message_requests[-1].body
            sent = _text(body)
            assert all(t in sent for t in texts[: texts.index(text) + 1])
            assert "Recalled" not in sent and not built.recalled_ids
        else:
            pytest.fail("the conversation never neared its budget")

    async def test_past_the_budget_a_fold_keeps_the_request_within_it(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        conv = await service.conversations.new()
        await service.conversations.set_setting(conv.id, "budget", "4000")
        await service.conversations.set_setting(conv.id, "summarizer", "extractive")
        for i in range(16):
            assert (await service.send(conv.id, f"Entry {i}: {PARAGRAPH * 6}")).error is None
            await service.finish_background()
        done = [s for s in await service.summaries.versions(conv.id) if s.status == "completed"]
        assert done, "no fold past the budget"
        built = await service.requests.context(conv.id, "what about entry 1?")
        assert built.breakdown.usable == 4_000 and built.breakdown.budget == 4_000
        assert built.breakdown.used <= 4_000
        assert built.breakdown.trigger_tokens == 4_000
        for request in fake_anthropic.message_requests:
            if not request.is_summary and request.usage:
                total = sum(
                    int(request.usage.get(k, 0))
                    for k in ("input_tokens", "cache_read_input_tokens")
                ) + int(request.usage.get("cache_creation_input_tokens", 0))
                assert total <= 4_000 * 1.5  # the fake server counts its own way


class TestCacheLifetime:
    def test_a_chat_without_pauses_keeps_five_minutes(self) -> None:
        assert choose_ttl([20.0, 45.0, 60.0, 90.0], prefix=50_000, new=800) == "5m"

    def test_pauses_between_five_minutes_and_an_hour_pay_for_the_hour(self) -> None:
        gaps = [40.0, 900.0, 60.0, 1_800.0, 30.0, 1_200.0]
        assert choose_ttl(gaps, prefix=50_000, new=800) == "1h"
        assert turn_price("1h", gaps, 50_000, 800) < turn_price("5m", gaps, 50_000, 800)

    def test_pauses_longer_than_an_hour_gain_nothing_from_it(self) -> None:
        assert choose_ttl([7_200.0, 9_000.0, 86_400.0], prefix=50_000, new=800) == "5m"

    def test_a_carried_token_costs_a_read_when_warm_and_more_after_long_pauses(self) -> None:
        from tui_chat.core.cache_ttl import carried_price

        assert carried_price([30.0, 40.0, 50.0]) == pytest.approx(0.1)
        paused = [30.0, 900.0, 40.0, 7_200.0]
        assert carried_price(paused, "5m") == pytest.approx(0.1 + 1.15 * 0.5)
        assert carried_price(paused, "1h") == pytest.approx(0.1 + 1.9 * 0.25)
        assert carried_price(paused) == pytest.approx(min(0.675, 0.575))

    def test_too_few_pauses_say_nothing_yet(self) -> None:
        assert choose_ttl([900.0, 1_200.0], prefix=50_000, new=800) == "5m"

    def test_pauses_are_read_between_a_reply_and_the_next_prompt(self) -> None:
        times = [
            ("user", "2026-01-01T10:00:00+00:00"),
            ("assistant", "2026-01-01T10:00:05+00:00"),
            ("user", "2026-01-01T10:20:05+00:00"),
            ("assistant", "2026-01-01T10:20:09+00:00"),
            ("user", "not a time"),
            ("user", "2026-01-01T10:21:09+00:00"),
        ]
        assert pauses(times) == [1_200.0]

    async def test_the_request_asks_for_an_hour_after_long_pauses(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        conv = await service.conversations.new()
        assert (await service.send(conv.id, f"Part 0: {PARAGRAPH}")).error is None
        assert all(m.get("ttl") is None for m in _marks(fake_anthropic.message_requests[-1].body))
        # A conversation read between meetings: 20-minute pauses before each prompt.
        other = await service.conversations.new()
        start = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
        for index in range(5):
            moment = start + timedelta(minutes=20 * index)
            for role, offset in (("user", 0), ("assistant", 10)):
                text = f"{role} {index}: {PARAGRAPH}"
                await engine_of(service).store.messages.add(
                    other.id,
                    role=role,  # type: ignore[arg-type]
                    content=[{"type": "text", "text": text}],
                    text=text,
                    token_count=40,
                    created_at=(moment + timedelta(seconds=offset)).isoformat(),
                )
        conv = other
        assert (await service.send(conv.id, "and after the meeting?")).error is None
        body = fake_anthropic.message_requests[-1].body
        assert _marks(body) and all(m.get("ttl") == "1h" for m in _marks(body))
        built = await service.requests.context(conv.id, "next")
        assert built.breakdown.cache_ttl == "1h"

    async def test_one_hour_writes_are_reported_and_billed_at_twice_the_input_price(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        conv = await service.conversations.new()
        await service.conversations.set_setting(conv.id, "cache_ttl", "1h")
        outcome = await service.send(conv.id, PARAGRAPH * 3)
        assert outcome.error is None and outcome.reply.usage is not None
        usage = outcome.reply.usage
        assert usage.cache_creation_1h_input_tokens == usage.cache_creation_input_tokens > 0
        info = model_info("claude-sonnet-4-6")
        five = Usage(cache_creation_input_tokens=1_000_000)
        hour = Usage(
            cache_creation_input_tokens=1_000_000, cache_creation_1h_input_tokens=1_000_000
        )
        assert cost_usd(info, five) == pytest.approx(1.25 * info.input_price)
        assert cost_usd(info, hour) == pytest.approx(2.0 * info.input_price)


class TestRecallEarnsItsPlace:
    async def _folded(self, service: ChatService, turns: int = 24, **settings: str) -> str:
        conv = await service.conversations.new()
        for key, value in {"summarizer": "extractive", **settings}.items():
            await service.conversations.set_setting(conv.id, key, value)
        for i in range(turns):
            for role in ("user", "assistant"):
                text = f"{role} note {i}: the crate number {1000 + i} went to dock {i % 7}. " * 4
                await engine_of(service).store.messages.add(
                    conv.id,
                    role=role,  # type: ignore[arg-type]
                    content=[{"type": "text", "text": text}],
                    text=text,
                    token_count=engine_of(service).counter.count(text),
                )
        # Folded as a send past the budget folds it: a compact the user asks for is not capped.
        await engine_of(service).worker.compact(conv.id, trigger="auto")
        return conv.id

    async def test_a_message_about_what_the_recent_turns_never_mention_may_recall_more(
        self, make_service: Make
    ) -> None:
        """Its words (crates 1003 and 1011) are only in the folded past: the cap gives way
        up to the recall budget's own maximum."""
        service = await make_service()
        cid = await self._folded(service, budget="20000")
        active = next(s for s in await service.summaries.versions(cid) if s.status == "completed")
        built = await service.requests.context(
            cid, "where did crate number 1003 go, and crate 1011?"
        )
        model = (await service.conversations.get(cid)).model
        read = model_info(model).prices.read_ratio
        recalled = built.breakdown.sections["recall"]
        assert recalled > RECALL_COST_SHARE * read * active.source_tokens + 1
        assert recalled <= resolve_policy().recall_max_tokens

    async def test_the_recalled_passages_follow_the_breakpoint_and_the_message_is_cached(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        """The excerpts close the new message, after its breakpoint: the request sends only
        them uncached, and the next request (which sends the message again without them)
        reads the message from the cache."""
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        cid = await self._folded(service, budget="20000")
        for prompt in ("where did crate number 1003 go?", "and crate number 1011?"):
            assert (await service.send(cid, prompt)).error is None
        first, second = fake_anthropic.message_requests[-2:]
        for request in (first, second):
            last = request.body["messages"][-1]["content"]
            (mark,) = [i for i, block in enumerate(last) if "cache_control" in block]
            after = last[mark + 1 :]
            assert after and after[-1]["type"] == "search_result"
            assert last[mark]["type"] == "text" and "crate number" in last[mark]["text"]
            # Uncached: the excerpts alone (the fake counts a text block by its text, a
            # search_result by its JSON).
            uncached = sum(
                fake_tokens(block["text"])
                if block["type"] == "text"
                else fake_tokens(json.dumps(block, sort_keys=True))
                for block in after
            )
            assert request.usage is not None and request.usage["input_tokens"] == uncached
        # The first prompt comes back without its excerpts, inside the cached prefix.
        resent = second.body["messages"][-3]["content"]
        assert [b.get("text") for b in resent] == ["where did crate number 1003 go?"]
        assert second.usage is not None and second.usage["cache_read_input_tokens"] > 0

    async def test_a_small_window_where_the_history_cannot_be_carried_recalls_more(
        self, make_service: Make
    ) -> None:
        service = await make_service()
        cid = await self._folded(service, context_window="3000")
        active = next(s for s in await service.summaries.versions(cid) if s.status == "completed")
        built = await service.requests.context(
            cid, "where did crate number 1003 go, and crate 1011?"
        )
        assert built.breakdown.sections["recall"] > 0.1 * active.source_tokens


class TestRelevanceFloor:
    def _inputs(self, window: int) -> Any:
        from dataclasses import replace as with_

        from tests.unit.core.test_request_builder import History, inputs, summary

        folded = summary(covers_to=40)
        old = History(start=3)
        strong_message = old.add("user", "crate 1003 went to dock four on Tuesday")
        old.next_id = 5
        weak_message = old.add("assistant", "crates are usually stacked by weight")
        passages = [strong_message, weak_message]
        recent = History(start=41)
        recent.turn("and then?", "then it rained")
        policy = with_(resolve_policy(), budget=None, recall_share=None, recall_budget_tokens=400)
        built = inputs(
            recent.messages,
            "where did crate 1003 go?",
            policy=policy,
            window=window,
            max_output=window // 8,
            summary_=with_(folded, source_tokens=40_000),
            recalled=passages,
        )
        strong, weak = built.recalled
        return with_(
            built,
            recalled=[with_(strong, relevance=0.8), with_(weak, relevance=0.05)],
        )

    def test_where_the_history_could_be_carried_only_matching_passages_are_recalled(
        self,
    ) -> None:
        from tests.unit.core.test_request_builder import build_alone

        built = build_alone(self._inputs(200_000))
        assert built.recalled_ids == (3,)

    def test_a_small_window_keeps_every_candidate(self) -> None:
        from tests.unit.core.test_request_builder import build_alone

        built = build_alone(self._inputs(4_000))
        assert set(built.recalled_ids) == {3, 5}


class TestWhatAFoldKeeps:
    def test_a_fold_keeps_the_newest_share_of_the_budget_verbatim(self) -> None:
        """Each token kept verbatim is read again every turn until the next fold and written
        again at it: the default keeps the newest 15 % of the budget (measured on the long
        session, benchmarks/history/RESULTS-2026-11.md, "The working budget: session 5"),
        whole turns only."""
        from tui_chat.core.models import Message
        from tui_chat.core.request.budget import for_window
        from tui_chat.core.triggers import plan_boundary

        policy = for_window(resolve_policy(), 936_000)
        assert policy.budget == 100_000
        messages = [
            Message(
                id=i + 1,
                conversation_id="c",
                role="user" if i % 2 == 0 else "assistant",
                content=[{"type": "text", "text": "x"}],
                text="x",
                turn=i // 2 + 1,
                token_count=1_000,
                status="complete",
                created_at="2026-01-01T00:00:00+00:00",
            )
            for i in range(120)  # 120k tokens: past the budget
        ]
        cut = plan_boundary(policy, messages)
        kept = sum(m.token_count for m in messages[cut:])
        assert cut % 2 == 0  # whole turns
        assert 13_000 <= kept <= 15_000


class TestRoomForRecallAfterAFold:
    """After the first fold the ``budget`` trigger keeps the recall share free, so a question
    about the folded past finds the same room wherever in the fold cycle it comes."""

    @staticmethod
    def _state(projected: int, unsummarized: int, reserved: int) -> Any:
        from tui_chat.core.triggers import TriggerState

        return TriggerState(
            unsummarized_tokens=unsummarized,
            unsummarized_turns=40,
            current_turn=60,
            projected_tokens=projected,
            usable_window=30_000,
            last_reduction=None,
            tokens_at_last_compaction=None,
            consecutive_failures=0,
            last_turn_tokens=100,
            reserved_tokens=reserved,
        )

    def test_the_reserve_is_the_recall_share_once_folded_and_nothing_before(self) -> None:
        from tui_chat.core.request.budget import for_window
        from tui_chat.core.triggers import recall_reserve

        policy = for_window(resolve_policy({"budget": "30000"}), 936_000)
        share = int(policy.recall_share * 30_000)  # type: ignore[operator]
        assert recall_reserve(policy, 30_000, folded=True, unsummarized_tokens=12_000) == share
        assert recall_reserve(policy, 30_000, folded=False, unsummarized_tokens=12_000) == 0
        # Raw turns no more than twice what a fold keeps: a fold would not halve them.
        kept = policy.keep_recent_tokens or 0
        assert recall_reserve(policy, 30_000, folded=True, unsummarized_tokens=2 * kept) == 0
        for seed in ("threshold", "turns", "window", "hybrid", "session"):
            assert recall_reserve(resolve_policy({"preset": seed}), 30_000, True, 50_000) == 0

    def test_a_fold_is_due_when_the_raw_turns_would_eat_the_reserved_room(self) -> None:
        from tui_chat.core.triggers import compaction_due

        policy = resolve_policy({"budget": "30000"})
        assert compaction_due(policy, self._state(12_000, 10_000, 16_500)) is None
        reason = compaction_due(policy, self._state(14_000, 12_000, 16_500))
        assert reason is not None and "for what a question recalls" in reason
        # Without a reserve (before the first fold) only the budget itself counts.
        assert compaction_due(policy, self._state(14_000, 12_000, 0)) is None
        assert "pass the budget" in (compaction_due(policy, self._state(29_800, 28_000, 0)) or "")

    async def test_a_question_late_in_the_cycle_keeps_the_recall_share(
        self, make_service: Make, fake_anthropic: FakeAnthropic
    ) -> None:
        fake_anthropic.cache_min_tokens = 0
        service = await make_service()
        conv = await service.conversations.new()
        await service.conversations.set_setting(conv.id, "budget", "6000")
        await service.conversations.set_setting(conv.id, "summarizer", "extractive")
        policy = service.conversations.policy_for(await service.conversations.get(conv.id))
        share = int((policy.recall_share or 0) * 6_000)
        for i in range(50):
            text = f"Entry {i}: the crate numbered {1000 + i} went to dock {i % 7}. {PARAGRAPH * 6}"
            assert (await service.send(conv.id, text)).error is None
            await service.finish_background()
            versions = await service.summaries.versions(conv.id)
            if not [s for s in versions if s.status == "completed"]:
                continue
            built = await service.requests.context(conv.id, "What did the harbour office keep?")
            rest = built.breakdown.used - built.breakdown.sections.get("recall", 0)
            # After a fold the raw turns never take the room a question's recall may fill.
            assert rest + share <= 6_000 * 1.05, (i, rest, share)
        assert [s for s in await service.summaries.versions(conv.id) if s.status == "completed"]
