"""Compaction triggers and fold boundaries, preset by preset (docs/design.md, "Triggers")."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_chat.core.models import ContentBlock, Message, Role
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.core.triggers import (
    MAX_CONSECUTIVE_FAILURES,
    TriggerState,
    compaction_due,
    compaction_level,
    emergency_due,
    plan_boundary,
    trigger_state,
)
from tui_chat.core.turns import group_turns, is_complete_turn, starts_turn


class Conversation:
    """Builds a stored conversation turn by turn, numbering ids and turns like the store."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.turn = 0

    def add(self, role: Role, content: list[ContentBlock], tokens: int = 10) -> None:
        if starts_turn(role, content):
            self.turn += 1
        text = " ".join(str(b.get("text", "")) for b in content)
        self.messages.append(
            Message(
                id=len(self.messages) + 1,
                conversation_id="c",
                role=role,
                content=content,
                text=text,
                turn=self.turn,
                token_count=tokens,
                status="complete",
                created_at="2026-01-01T00:00:00+00:00",
            )
        )

    def ask(self, text: str = "question", tokens: int = 10) -> None:
        self.add("user", [{"type": "text", "text": text}], tokens)

    def answer(self, text: str = "answer", tokens: int = 10) -> None:
        self.add("assistant", [{"type": "text", "text": text}], tokens)

    def tool_round(self, tid: str, tokens: int = 10) -> None:
        self.add(
            "assistant", [{"type": "tool_use", "id": tid, "name": "read", "input": {}}], tokens
        )
        self.add("user", [{"type": "tool_result", "tool_use_id": tid, "content": "data"}], tokens)

    def turn_with_tools(self, rounds: int, tokens: int = 10) -> None:
        self.ask(tokens=tokens)
        for r in range(rounds):
            self.tool_round(f"t{self.turn}_{r}", tokens)
        self.answer(tokens=tokens)


def state(**changes: object) -> TriggerState:
    base = TriggerState(
        unsummarized_tokens=0,
        unsummarized_turns=0,
        current_turn=1,
        projected_tokens=0,
        usable_window=100_000,
        last_reduction=None,
        tokens_at_last_compaction=None,
        consecutive_failures=0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- triggers


def _turns_run(turns: int, *, check_after_reply: bool) -> tuple[list[int], list[list[int]]]:
    """Chat ``turns`` turns under the turns preset, compacting whenever the trigger fires.

    Returns the turns at which it fired and, for each turn, the turns the summaries cover
    when that turn's request is sent.
    """
    policy = PRESETS["turns"]
    conv = Conversation()
    covered = 0
    fired: list[int] = []
    sent_with: list[list[int]] = []

    def check() -> None:
        nonlocal covered
        raw = conv.messages[covered:]
        if compaction_due(policy, trigger_state(raw, projected_tokens=0, usable_window=10_000)):
            fired.append(conv.turn)
            count = plan_boundary(policy, raw)
            assert count > 0
            covered += count

    for _ in range(turns):
        conv.ask()
        check()  # before the send, with the new user message saved
        sent_with.append(sorted({m.turn for m in conv.messages[:covered]}))
        conv.answer()
        if check_after_reply:
            check()
    return fired, sent_with


def test_turns_preset_summarises_each_block_of_three_for_turns_4_7_10() -> None:
    """Seed 001: turn 4 is sent as [Summary(1-3), Turn4], turn 7 with (4-6) added …"""
    fired, sent_with = _turns_run(10, check_after_reply=True)
    # Fired once turn 3, 6, 9 had their replies: the summary is ready before the next turn.
    assert fired == [3, 6, 9]
    assert sent_with[3] == [1, 2, 3]  # turn 4
    assert sent_with[6] == [1, 2, 3, 4, 5, 6]  # turn 7
    assert sent_with[9] == list(range(1, 10))  # turn 10
    assert sent_with[:3] == [[], [], []]
    assert sent_with[4] == sent_with[5] == [1, 2, 3]


def test_turns_preset_checked_only_before_sends_fires_at_turns_4_7_10() -> None:
    fired, sent_with = _turns_run(10, check_after_reply=False)
    assert fired == [4, 7, 10]
    assert sent_with[3] == [1, 2, 3] and sent_with[6] == list(range(1, 7))


def test_turns_preset_folds_one_block_at_a_time() -> None:
    conv = Conversation()
    for _ in range(7):
        conv.turn_with_tools(1)
    count = plan_boundary(PRESETS["turns"], conv.messages)
    assert count == 12  # turns 1-3, four messages each
    assert {m.turn for m in conv.messages[:count]} == {1, 2, 3}


def test_turns_trigger_catches_up_after_a_failure() -> None:
    """A block left behind by a failed version is retried at the next turn."""
    policy = PRESETS["turns"]
    assert compaction_due(policy, state(unsummarized_turns=3, current_turn=4)) is not None
    assert compaction_due(policy, state(unsummarized_turns=4, current_turn=5)) is not None
    assert compaction_due(policy, state(unsummarized_turns=2, current_turn=6)) is None


def test_threshold_preset_fires_above_8000_unsummarized_tokens() -> None:
    policy = PRESETS["threshold"]
    assert compaction_due(policy, state(unsummarized_tokens=8_000)) is None
    reason = compaction_due(policy, state(unsummarized_tokens=8_001))
    assert reason is not None and "8,001" in reason
    # The window share does not matter to a token trigger.
    assert compaction_due(policy, state(unsummarized_tokens=10, projected_tokens=99_000)) is None


def test_window_preset_fires_at_75_percent_of_the_usable_window() -> None:
    policy = PRESETS["window"]
    assert compaction_due(policy, state(projected_tokens=749, usable_window=1_000)) is None
    assert compaction_due(policy, state(projected_tokens=750, usable_window=1_000)) is not None
    assert compaction_due(policy, state(unsummarized_tokens=50_000, projected_tokens=10)) is None


def test_hybrid_preset_fires_at_85_percent_and_emergency_at_95() -> None:
    policy = PRESETS["hybrid"]
    assert compaction_due(policy, state(projected_tokens=849, usable_window=1_000)) is None
    assert compaction_due(policy, state(projected_tokens=850, usable_window=1_000)) is not None
    assert not emergency_due(policy, 949, 1_000)
    assert emergency_due(policy, 950, 1_000)


def test_emergency_is_on_for_every_preset_when_the_request_does_not_fit() -> None:
    for policy in PRESETS.values():
        assert emergency_due(policy, 1_001, 1_000), policy.preset
    assert not emergency_due(PRESETS["window"], 1_000, 1_000)
    assert not emergency_due(PRESETS["threshold"], 999, 1_000)


def test_session_preset_fires_when_the_recent_window_passes_800_tokens() -> None:
    policy = PRESETS["session"]
    assert compaction_due(policy, state(unsummarized_tokens=800)) is None
    assert compaction_due(policy, state(unsummarized_tokens=801)) is not None


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_auto_compaction_pauses_after_three_consecutive_failures(name: str) -> None:
    policy = PRESETS[name]
    hot = state(
        unsummarized_tokens=1_000_000,
        unsummarized_turns=30,
        current_turn=31,
        projected_tokens=99_999,
        usable_window=100_000,
    )
    assert compaction_due(policy, replace(hot, consecutive_failures=2)) is not None
    assert MAX_CONSECUTIVE_FAILURES == 3
    assert compaction_due(policy, replace(hot, consecutive_failures=3)) is None
    # The emergency path is not paused.
    assert emergency_due(policy, 100_001, 100_000)


def test_manual_boundary_ignores_the_pause() -> None:
    conv = Conversation()
    for _ in range(5):
        conv.ask()
        conv.answer()
    assert plan_boundary(PRESETS["window"], conv.messages, manual=True) == 6


def test_thrash_guard_waits_for_growth_after_an_ineffective_version() -> None:
    """A version that saved < 10 % does not re-fire every turn; it fires after 10 % growth."""
    policy = PRESETS["window"]
    ineffective = state(
        usable_window=1_000,
        projected_tokens=800,
        last_reduction=0.05,
        tokens_at_last_compaction=800,
    )
    assert compaction_due(policy, ineffective) is None
    assert compaction_due(policy, replace(ineffective, projected_tokens=879)) is None
    assert compaction_due(policy, replace(ineffective, projected_tokens=880)) is not None
    # An effective version does not hold the trigger back.
    assert compaction_due(policy, replace(ineffective, last_reduction=0.5)) is not None
    # Nor does an ineffective one with no measurement to compare against.
    assert compaction_due(policy, replace(ineffective, tokens_at_last_compaction=None))


def test_thrash_guard_applies_to_the_token_trigger() -> None:
    policy = PRESETS["threshold"]
    stuck = state(
        unsummarized_tokens=9_000,
        projected_tokens=20_000,
        last_reduction=0.02,
        tokens_at_last_compaction=19_500,
    )
    assert compaction_due(policy, stuck) is None
    assert compaction_due(policy, replace(stuck, projected_tokens=21_450)) is not None


def test_turns_trigger_is_periodic_and_not_held_by_the_thrash_guard() -> None:
    policy = PRESETS["turns"]
    periodic = state(
        unsummarized_turns=3, current_turn=7, last_reduction=0.0, tokens_at_last_compaction=500
    )
    assert compaction_due(policy, replace(periodic, projected_tokens=500)) is not None


def test_ratio_trigger_needs_a_window() -> None:
    assert compaction_due(PRESETS["window"], state(projected_tokens=10, usable_window=0)) is None


# --------------------------------------------------------------------------- levels


@pytest.mark.parametrize(
    ("used", "level", "rate"),
    [
        (0.0, "light", 0.5),
        (0.849, "light", 0.5),
        (0.85, "medium", 0.3),
        (0.949, "medium", 0.3),
        (0.95, "aggressive", 0.1),
        (1.4, "aggressive", 0.1),
    ],
)
def test_compaction_level_follows_seed_003(used: float, level: str, rate: float) -> None:
    assert compaction_level(used) == (level, rate)


# --------------------------------------------------------------------------- boundaries


def test_trigger_state_counts_complete_turns_and_tokens() -> None:
    conv = Conversation()
    conv.turn_with_tools(2, tokens=7)
    conv.turn_with_tools(0, tokens=7)
    conv.ask(tokens=7)
    measured = trigger_state(
        conv.messages, projected_tokens=123, usable_window=1_000, consecutive_failures=1
    )
    assert measured.unsummarized_tokens == 7 * len(conv.messages)
    assert measured.unsummarized_turns == 2  # turn 3 waits for its answer
    assert measured.current_turn == 3
    assert (measured.projected_tokens, measured.consecutive_failures) == (123, 1)
    conv.tool_round("pending")
    assert trigger_state(conv.messages, projected_tokens=0, usable_window=1).unsummarized_turns == 2
    conv.answer()
    assert trigger_state(conv.messages, projected_tokens=0, usable_window=1).unsummarized_turns == 3
    empty = trigger_state([], projected_tokens=0, usable_window=1_000)
    assert (empty.unsummarized_turns, empty.current_turn, empty.unsummarized_tokens) == (0, 0, 0)


def test_window_keeps_four_messages_rounded_out_to_whole_turns() -> None:
    conv = Conversation()
    for _ in range(3):
        conv.ask()
        conv.answer()
    conv.turn_with_tools(1)  # 4 messages: user, tool_use, tool_result, answer
    conv.ask()
    conv.answer()
    count = plan_boundary(PRESETS["window"], conv.messages)
    # Keeping 4 messages means keeping the last turn (2) and the tool turn (4) whole.
    assert count == 6
    assert starts_turn(conv.messages[count].role, conv.messages[count].content)


def test_threshold_keeps_six_messages() -> None:
    conv = Conversation()
    for _ in range(6):
        conv.ask()
        conv.answer()
    assert plan_boundary(PRESETS["threshold"], conv.messages) == 6


def test_a_turn_waiting_for_its_answer_is_never_folded() -> None:
    conv = Conversation()
    conv.ask()
    conv.tool_round("t1")
    for policy in PRESETS.values():
        assert plan_boundary(policy, conv.messages, manual=True) == 0
    assert plan_boundary(PRESETS["window"], []) == 0
    conv.answer()
    # Once answered, only a policy that keeps nothing verbatim may fold it (seed 001).
    folded = {name: plan_boundary(p, conv.messages, manual=True) for name, p in PRESETS.items()}
    assert folded == {
        "threshold": 0,
        "turns": 4,
        "window": 0,
        "hybrid": 0,
        "session": 0,
        "adaptive": 0,
    }


def test_turns_preset_waits_for_a_full_block_unless_manual() -> None:
    conv = Conversation()
    for _ in range(2):
        conv.ask()
        conv.answer()
    conv.ask()  # turn 3 in progress: turns 1-2 are foldable, not a full block
    assert plan_boundary(PRESETS["turns"], conv.messages) == 0
    assert plan_boundary(PRESETS["turns"], conv.messages, manual=True) == 4


def test_hybrid_keeps_ten_messages_and_folds_the_rest_as_one_block() -> None:
    conv = Conversation()
    for _ in range(9):
        conv.ask()
        conv.answer()
    assert plan_boundary(PRESETS["hybrid"], conv.messages) == 8


def test_session_keeps_a_recent_window_of_800_tokens() -> None:
    conv = Conversation()
    for _ in range(6):
        conv.ask(tokens=150)
        conv.answer(tokens=150)
    count = plan_boundary(PRESETS["session"], conv.messages)
    kept = conv.messages[count:]
    assert sum(m.token_count for m in kept) <= 800
    assert count == 12 - 4  # two whole turns of 300 tokens fit, a third would not


def test_current_turn_is_never_folded_even_over_the_token_budget() -> None:
    conv = Conversation()
    conv.ask(tokens=100)
    conv.answer(tokens=100)
    conv.ask(tokens=5_000)
    assert plan_boundary(PRESETS["session"], conv.messages) == 2


# --------------------------------------------------------------------------- properties

_turn_shapes = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=3),  # tool rounds
        st.booleans(),  # answered
        st.integers(min_value=1, max_value=400),  # tokens per message
    ),
    min_size=0,
    max_size=14,
)
_policies = st.sampled_from(sorted(PRESETS)).flatmap(
    lambda name: st.builds(
        replace,
        st.just(PRESETS[name]),
        keep_recent=st.integers(min_value=0, max_value=12),
        every_turns=st.integers(min_value=1, max_value=5),
    )
)


def _build(shapes: list[tuple[int, bool, int]]) -> list[Message]:
    conv = Conversation()
    for rounds, answered, tokens in shapes:
        conv.ask(tokens=tokens)
        for r in range(rounds):
            conv.tool_round(f"t{conv.turn}_{r}", tokens)
        if answered:
            conv.answer(tokens=tokens)
    return conv.messages


@settings(max_examples=300, deadline=None)
@given(shapes=_turn_shapes, policy=_policies, manual=st.booleans())
def test_plan_boundary_never_splits_a_turn(
    shapes: list[tuple[int, bool, int]], policy: Policy, manual: bool
) -> None:
    messages = _build(shapes)
    count = plan_boundary(policy, messages, manual=manual)
    turns = group_turns(messages)
    edges = {0}
    for turn in turns:
        edges.add(max(edges) + len(turn))
    assert count in edges
    if not turns:
        assert count == 0
        return
    last_done = is_complete_turn(turns[-1])
    keeps_nothing = policy.keep_recent == 0 and policy.keep_recent_tokens is None
    if not (last_done and keeps_nothing):
        # A turn waiting for its answer always stays; so does the last turn when anything is
        # kept verbatim.
        assert count <= len(messages) - len(turns[-1])
    if 0 < count < len(messages):
        kept = messages[count:]
        # The first kept message opens a turn: no tool_result without its tool_use.
        assert starts_turn(kept[0].role, kept[0].content)
        folded_ids = {b["id"] for m in messages[:count] for b in m.content if "id" in b}
        kept_refs = {b["tool_use_id"] for m in kept for b in m.content if "tool_use_id" in b}
        assert not folded_ids & kept_refs
        if policy.keep_recent_tokens is not None:
            last = len(turns[-1])
            assert (
                sum(m.token_count for m in kept) <= policy.keep_recent_tokens or len(kept) == last
            )
        else:
            assert len(kept) >= policy.keep_recent
    if count and policy.trigger == "turns" and policy.strategy == "segments" and not manual:
        folded_turns = [t for t in turns if t[0].id <= messages[count - 1].id]
        assert len(folded_turns) == policy.every_turns
