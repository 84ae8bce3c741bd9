"""Summary prompts, reply extraction, the model summarizer and the offline one."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from tui_chat.core.blocks import message_body
from tui_chat.core.identifiers import retention
from tui_chat.core.models import ContentBlock, Message, Role, Segment, Summary, Usage
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS
from tui_chat.core.summarize import (
    MARKER,
    ExtractiveSummarizer,
    ModelSummarizer,
    SummaryError,
    SummaryInput,
    build_summary_prompt,
    extract_fields,
    extract_summary,
    segments_text,
    segments_tokens,
    split_fields,
)


def msg(
    mid: int, role: Role, text: str, turn: int, content: list[ContentBlock] | None = None
) -> Message:
    return Message(
        id=mid,
        conversation_id="c",
        role=role,
        content=content if content is not None else [{"type": "text", "text": text}],
        text=text,
        turn=turn,
        token_count=len(text) // 4 + 4,
        status="complete",
        created_at="2026-01-01T00:00:00+00:00",
    )


def summary(text: str, segments: list[Segment] | None = None, **fields: Any) -> Summary:
    return Summary(
        id=1,
        conversation_id="c",
        version=1,
        parent_id=None,
        strategy="segments" if segments else "running",
        text=text,
        segments=segments or [],
        covers_to_message_id=6,
        covered_messages=6,
        source_tokens=500,
        summary_tokens=100,
        trigger="auto",
        summarizer="test",
        status="completed",
        created_at="2026-01-01T00:00:00+00:00",
        fields=dict(fields),
    )


ENGLISH = [
    msg(1, "user", "Build a Python calculator in src/calculator.py with add() and divide().", 1),
    msg(
        2,
        "assistant",
        "",
        1,
        [
            {"type": "text", "text": "I will create the file."},
            {
                "type": "tool_use",
                "id": "tu1",
                "name": "write_file",
                "input": {"path": "src/calculator.py"},
            },
        ],
    ),
    msg(
        3,
        "user",
        "",
        1,
        [{"type": "tool_result", "tool_use_id": "tu1", "content": "wrote 42 lines"}],
    ),
    msg(
        4,
        "assistant",
        "Created src/calculator.py with class Calculator. Division by zero raises "
        'ValueError("Cannot divide by zero"). Nice weather today, by the way.',
        1,
    ),
    msg(5, "user", "I prefer pytest over unittest. Write tests in tests/test_calculator.py.", 2),
    msg(
        6,
        "assistant",
        "We decided to use pytest. I wrote 8 test cases in tests/test_calculator.py; "
        "all 8 pass in 0.42s. Let me know if you need anything else.",
        2,
    ),
    msg(7, "user", "Add a README.md and set the version to 1.2.0 in pyproject.toml.", 3),
    msg(
        8,
        "assistant",
        "Added README.md and set version 1.2.0 in pyproject.toml. "
        "Docs are at https://example.com/calc. Happy to help further.",
        3,
    ),
]

KOREAN = [
    msg(
        11,
        "user",
        "파이썬 3.13 새 기능을 검색해서 분석해줘. 결과는 app/workflow.py 에 정리해줘.",
        1,
    ),
    msg(
        12,
        "assistant",
        "파이썬 3.13의 주요 새 기능은 no-GIL 빌드와 JIT 컴파일러입니다. "
        "벤치마크에서 JIT는 약 5% 빨라졌습니다. 분석 결과를 app/workflow.py 에 정리했습니다.",
        1,
    ),
    msg(13, "user", "API 호환성은 유지하기로 결정했어. /flow 명령은 단수형으로 유지해줘.", 2),
    msg(
        14,
        "assistant",
        "알겠습니다. API 호환성을 유지하고 /flow 명령 패턴은 단수형으로 두겠습니다. "
        "docs/cli.md 도 함께 수정했습니다. 오늘 날씨가 좋네요.",
        2,
    ),
    msg(15, "user", "이제 테스트 코드를 작성해줘. tests/test_flow.py 파일로 만들어줘.", 3),
    msg(16, "assistant", "tests/test_flow.py 에 테스트 12개를 작성했고 모두 통과했습니다.", 3),
]


class Recorder:
    """A stand-in for the model: records every call and answers from a script."""

    def __init__(self, reply: str | None = None, usage: Usage | None = None) -> None:
        self.calls: list[tuple[str, str, int]] = []
        self.reply = reply
        self.usage = usage if usage is not None else Usage(input_tokens=100, output_tokens=20)

    async def __call__(self, system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        self.calls.append((system, user, max_tokens))
        if self.reply is not None:
            return self.reply, self.usage
        if user.startswith("Merge these"):
            return "<summary>Merged: calculator in src/calculator.py, pytest.</summary>", self.usage
        return f"<summary>Summary number {len(self.calls)} of src/calculator.py.</summary>", (
            self.usage
        )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --------------------------------------------------------------------------- prompts


def test_running_prompt_has_marker_structure_and_messages() -> None:
    request = SummaryInput(policy=PRESETS["window"], previous=None, messages=ENGLISH)
    system, user = build_summary_prompt(request)
    assert MARKER in system
    assert "<summary></summary>" in system
    for heading in ("Task overview", "Work completed", "Important context", "Current state"):
        assert heading in user
    for topic in ("decisions", "reasons", "file paths", "numbers", "URLs", "open questions"):
        assert topic in user
    assert "preferences" in user
    assert "Conversation:" in user and "Previous summary" not in user
    assert "[turn 1] USER: Build a Python calculator" in user
    assert '[tool call write_file] {"path": "src/calculator.py"}' in user
    assert "[tool result] wrote 42 lines" in user
    assert "compression rate 0.3)" in user  # the rate sizes a running summary too
    assert "at most 2,000 tokens" not in user  # 0.3 of the 0.5 maximum: below the cap
    assert user.rstrip().endswith("Wrap the whole summary in <summary></summary> tags.")


def test_running_prompt_merges_the_previous_version() -> None:
    previous = summary("The user builds a calculator (OLD-FACT-17).")
    request = SummaryInput(policy=PRESETS["threshold"], previous=previous, messages=ENGLISH[4:])
    _, user = build_summary_prompt(request)
    assert "Previous summary:" in user and "OLD-FACT-17" in user
    assert "New messages since the previous summary" in user
    assert user.index("OLD-FACT-17") < user.index("I prefer pytest")
    assert "Build a Python calculator" not in user  # already covered by the parent


def test_prompt_cuts_each_message_to_the_prompt_char_limit() -> None:
    long_text = "x" * 2_990 + "TAIL-IS-CUT" + "y" * 3_000
    messages = [msg(1, "user", long_text, 1), msg(2, "assistant", "ok", 1)]
    request = SummaryInput(policy=PRESETS["threshold"], previous=None, messages=messages)
    _, user = build_summary_prompt(request)
    assert "x" * 2_990 + "TAIL-IS-CU" in user
    assert "TAIL-IS-CUT" not in user
    assert "…[cut]" in user
    unlimited = SummaryInput(policy=PRESETS["window"], previous=None, messages=messages)
    assert "TAIL-IS-CUT" in build_summary_prompt(unlimited)[1]


def test_prompt_names_pinned_messages_and_user_instructions() -> None:
    request = SummaryInput(
        policy=PRESETS["window"],
        previous=None,
        messages=ENGLISH,
        instructions="keep every SQL statement",
        pinned_ids=frozenset({5}),
    )
    _, user = build_summary_prompt(request)
    assert "[turn 2] USER (pinned): I prefer pytest" in user
    assert "kept verbatim elsewhere" in user
    assert "keep every SQL statement" in user
    plain = build_summary_prompt(replace(request, instructions=None, pinned_ids=frozenset()))[1]
    assert "(pinned)" not in plain and "verbatim elsewhere" not in plain
    assert "Instructions from the user" not in plain


def test_session_prompt_asks_for_700_characters_or_400_in_korean() -> None:
    policy = PRESETS["session"]
    english = build_summary_prompt(SummaryInput(policy=policy, previous=None, messages=ENGLISH))
    korean = build_summary_prompt(SummaryInput(policy=policy, previous=None, messages=KOREAN))
    assert "at most 700 characters" in english[1]
    assert "at most 400 characters" in korean[1]
    assert "tracked separately" in english[1]


def test_segment_prompt_targets_original_chars_times_rate() -> None:
    policy = PRESETS["turns"]
    earlier = Segment((1, 3), "EARLIER-BLOCK about setup.", 900, 27, 0.3)
    request = SummaryInput(
        policy=policy,
        previous=summary(segments_text([earlier]), [earlier]),
        messages=ENGLISH[4:],
    )
    _, user = build_summary_prompt(request)
    original = sum(len(message_body(m)) for m in ENGLISH[4:])
    assert f"about {int(original * 0.3):,} characters" in user
    assert f"the original is {original:,} characters, compression rate 0.3" in user
    assert "Summarize turns 2-3" in user
    assert "EARLIER-BLOCK" in user and "do not repeat" in user


@pytest.mark.parametrize(
    ("used", "rate", "level"),
    [(0.5, 0.5, "light"), (0.9, 0.3, "medium"), (0.97, 0.1, "aggressive")],
)
def test_hybrid_levels_pick_the_rate(used: float, rate: float, level: str) -> None:
    request = SummaryInput(
        policy=PRESETS["hybrid"], previous=None, messages=ENGLISH, used_ratio=used
    )
    _, user = build_summary_prompt(request)
    assert f"compression rate {rate:g}, {level} level" in user


def test_merge_prompt_lists_the_segments() -> None:
    segments = [
        Segment((1, 3), "FIRST block text.", 1000, 300, 0.3),
        Segment((4, 6), "SECOND block text.", 800, 240, 0.3),
    ]
    request = SummaryInput(policy=PRESETS["hybrid"], previous=None, messages=ENGLISH)
    system, user = build_summary_prompt(request, merge=segments)
    assert MARKER in system
    assert user.startswith("Merge these consecutive summaries of turns 1-6")
    assert "[turns 1-3] FIRST block text." in user and "[turns 4-6] SECOND block text." in user
    assert "about 270 characters" in user
    assert "Build a Python calculator" not in user


# --------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<summary>The user builds X.</summary>", "The user builds X."),
        ("Thinking first.\n<summary>\n  Body here.\n</summary>\nDone.", "Body here."),
        ("<summary> </summary><summary>Second one.</summary>", "Second one."),
        ("<summary>Cut off by max_tokens mid", "Cut off by max_tokens mid"),
        ("<SUMMARY>Upper case tags</SUMMARY>", "Upper case tags"),
        ("<summary>Errors encountered: ImportError fixed in a.py.</summary>", None),
        (
            "<summary>요약: 사용자는 계산기를 만들었다.</summary>",
            "요약: 사용자는 계산기를 만들었다.",
        ),
    ],
)
def test_extract_summary(reply: str, expected: str | None) -> None:
    result = extract_summary(reply)
    assert result == (expected if expected is not None else result)
    assert result and "<summary>" not in result.lower()


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "<summary></summary>",
        "<summary>\n</summary>",
        "Error generating summary: overloaded",
        "<summary>Error generating summary: 529</summary>",
        "Error: request timed out",
        "API Error: 500 internal server error",
        "Failed to generate summary.",
        "I'm sorry, but I can't help with summarizing this conversation.",
        "I cannot summarize this content.",
        '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
        "죄송하지만 요약할 수 없습니다.",
        "요약을 생성할 수 없습니다.",
        "오류가 발생했습니다: timeout",
        "No tags at all, just the summary.",
        "Here is a recap of the conversation: the user builds X.",
    ],
)
def test_error_looking_replies_raise(reply: str) -> None:
    with pytest.raises(SummaryError):
        extract_summary(reply)


# --------------------------------------------------------------------------- model summarizer


def test_model_summarizer_running() -> None:
    model = Recorder("<summary>Calculator in src/calculator.py; pytest chosen.</summary>")
    summarizer = ModelSummarizer(model, "claude-haiku-4-5")
    request = SummaryInput(policy=PRESETS["threshold"], previous=None, messages=ENGLISH)
    out = run(summarizer.summarize(request))
    assert out.text == "Calculator in src/calculator.py; pytest chosen."
    assert out.segments == () and out.fields == {}
    assert out.summarizer == "claude-haiku-4-5"
    assert out.usage == model.usage
    assert len(model.calls) == 1
    system, user, max_tokens = model.calls[0]
    assert MARKER in system
    assert (system, user) == build_summary_prompt(request)
    assert max_tokens == PRESETS["threshold"].summarizer_max_tokens


def test_model_summarizer_session_caps_the_brief_and_adds_fields() -> None:
    long_brief = " ".join(f"Sentence {i} about src/calculator.py." for i in range(60))
    model = Recorder(f"<summary>{long_brief}</summary>")
    previous = summary("Old brief.", decisions=["Use SQLite for storage."], open_files=["a.py"])
    request = SummaryInput(policy=PRESETS["session"], previous=previous, messages=ENGLISH)
    out = run(ModelSummarizer(model, "m").summarize(request))
    brief = split_fields(out.text)
    assert 0 < len(brief) <= 700
    assert brief.endswith(".")  # cut at a sentence end
    assert out.fields["decisions"][0] == "Use SQLite for storage."
    assert any("pytest" in d for d in out.fields["decisions"])
    assert "src/calculator.py" in out.fields["open_files"]
    assert out.fields["current_task"].startswith("Add a README.md")
    assert "Decisions:\n- Use SQLite for storage." in out.text
    assert "Current task: Add a README.md" in out.text


def test_model_summarizer_korean_brief_is_at_most_400_characters() -> None:
    model = Recorder("<summary>" + "사용자는 파이썬 기능을 분석했다. " * 60 + "</summary>")
    request = SummaryInput(policy=PRESETS["session"], previous=None, messages=KOREAN)
    out = run(ModelSummarizer(model, "m").summarize(request))
    assert 0 < len(split_fields(out.text)) <= 400
    assert any("결정" in d for d in out.fields["decisions"])
    assert "tests/test_flow.py" in out.fields["open_files"]


@pytest.mark.parametrize(
    "reply", ["Error generating summary: overloaded", "<summary></summary>", "죄송합니다."]
)
def test_model_summarizer_never_turns_an_error_into_text(reply: str) -> None:
    model = Recorder(reply)
    request = SummaryInput(policy=PRESETS["window"], previous=None, messages=ENGLISH)
    with pytest.raises(SummaryError):
        run(ModelSummarizer(model, "m").summarize(request))


def test_model_summarizer_wraps_call_failures_and_timeouts() -> None:
    async def broken(system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        raise ConnectionError("connection reset")

    async def slow(system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        await asyncio.sleep(5)
        return "<summary>late</summary>", None

    request = SummaryInput(policy=PRESETS["window"], previous=None, messages=ENGLISH)
    with pytest.raises(SummaryError, match="connection reset"):
        run(ModelSummarizer(broken, "m").summarize(request))
    quick = SummaryInput(
        policy=replace(PRESETS["window"], summarizer_timeout=0.05), previous=None, messages=ENGLISH
    )
    with pytest.raises(SummaryError, match="timed out"):
        run(ModelSummarizer(slow, "m").summarize(quick))


def test_nothing_to_summarize_is_an_error() -> None:
    request = SummaryInput(policy=PRESETS["window"], previous=None, messages=())
    with pytest.raises(SummaryError):
        run(ModelSummarizer(Recorder(), "m").summarize(request))
    with pytest.raises(SummaryError):
        run(ExtractiveSummarizer().summarize(request))


def test_model_summarizer_appends_one_segment_per_block() -> None:
    earlier = Segment((1, 1), "Calculator created.", 500, 19, 0.3)
    request = SummaryInput(
        policy=PRESETS["turns"],
        previous=summary(segments_text([earlier]), [earlier]),
        messages=ENGLISH[4:],
    )
    model = Recorder("<summary>Tests and README added; version 1.2.0.</summary>")
    out = run(ModelSummarizer(model, "m").summarize(request))
    assert len(model.calls) == 1
    assert out.segments[0] == earlier
    new = out.segments[1]
    assert new.turns == (2, 3)
    assert new.text == "Tests and README added; version 1.2.0."
    assert new.original_chars == sum(len(message_body(m)) for m in ENGLISH[4:])
    assert new.summary_chars == len(new.text)
    assert new.compression_rate == 0.3 and new.level == 0
    assert out.text == (
        "[turn 1] Calculator created.\n\n[turns 2-3] Tests and README added; version 1.2.0."
    )


def long_segments(count: int) -> list[Segment]:
    return [
        Segment(
            (3 * i + 1, 3 * i + 3),
            f"Block {i}: " + "details about src/calculator.py and pytest " * 8,
            3_000,
            360,
            0.3,
        )
        for i in range(count)
    ]


def test_model_summarizer_rolls_up_the_oldest_segments() -> None:
    segments = long_segments(4)
    budget = 200
    assert segments_tokens(segments) > budget
    policy = replace(PRESETS["hybrid"], summary_max_tokens=budget)
    late = [msg(40 + i, m.role, m.text, 12 + m.turn, m.content) for i, m in enumerate(ENGLISH)]
    request = SummaryInput(
        policy=policy, previous=summary(segments_text(segments), segments), messages=late
    )
    model = Recorder()
    out = run(ModelSummarizer(model, "m").summarize(request))
    merges = [call for call in model.calls if call[1].startswith("Merge these")]
    assert merges, "the oldest segments were merged by a further call"
    assert MARKER in merges[0][0]
    top = out.segments[0]
    assert top.level >= 1 and top.turns[0] == 1
    assert top.text.startswith("Merged:")
    assert segments_tokens(out.segments) <= budget
    # Segments stay in order and cover turns 1..15 without gaps.
    assert out.segments[-1].turns[1] == 15
    for left, right in zip(out.segments, out.segments[1:], strict=False):
        assert right.turns[0] == left.turns[1] + 1
    assert out.usage is not None
    assert out.usage.input_tokens == 100 * len(model.calls)


# --------------------------------------------------------------------------- offline summarizer


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_extractive_is_deterministic(preset: str) -> None:
    request = SummaryInput(
        policy=PRESETS[preset],
        previous=summary("Earlier: the user wants a CLI calculator."),
        messages=ENGLISH,
        pinned_ids=frozenset({5}),
        used_ratio=0.9,
    )
    first = run(ExtractiveSummarizer().summarize(request))
    second = run(ExtractiveSummarizer().summarize(request))
    assert first == second
    assert first.text.strip()
    assert first.summarizer == "extractive" and first.usage is None


def test_extractive_segment_respects_the_compression_rate() -> None:
    policy = PRESETS["turns"]
    request = SummaryInput(policy=policy, previous=None, messages=ENGLISH)
    out = run(ExtractiveSummarizer().summarize(request))
    (segment,) = out.segments
    original = sum(len(message_body(m)) for m in ENGLISH)
    assert segment.original_chars == original
    assert 0 < segment.summary_chars <= int(original * 0.3)
    assert segment.turns == (1, 3)
    assert out.text == f"[turns 1-3] {segment.text}"
    looser = run(
        ExtractiveSummarizer().summarize(
            replace(request, policy=replace(policy, compression_rate=0.5))
        )
    )
    assert looser.segments[0].summary_chars > segment.summary_chars


def test_extractive_prefers_identifiers_over_small_talk() -> None:
    request = SummaryInput(policy=PRESETS["turns"], previous=None, messages=ENGLISH)
    text = run(ExtractiveSummarizer().summarize(request)).text
    assert "Nice weather" not in text and "Happy to help" not in text
    sources = [message_body(m) for m in ENGLISH]
    kept, total = retention(sources, text)
    # Identifier-rich sentences win: the summary keeps a larger share of the identifiers
    # than of the characters.
    char_share = len(text) / sum(len(s) for s in sources)
    assert kept / total > 1.4 * char_share
    assert kept >= 6


def test_extractive_running_respects_session_limits() -> None:
    english = run(
        ExtractiveSummarizer().summarize(
            SummaryInput(policy=PRESETS["session"], previous=None, messages=ENGLISH * 5)
        )
    )
    korean = run(
        ExtractiveSummarizer().summarize(
            SummaryInput(policy=PRESETS["session"], previous=None, messages=KOREAN * 5)
        )
    )
    assert 0 < len(split_fields(english.text)) <= 700
    assert 0 < len(split_fields(korean.text)) <= 400
    assert "app/workflow.py" in korean.fields["open_files"]
    assert any("유지하기로 결정" in d for d in korean.fields["decisions"])
    assert korean.fields["current_task"].startswith("이제 테스트 코드를 작성해줘")
    assert "Current task: 이제 테스트 코드를 작성해줘" in korean.text


def test_extractive_running_stays_within_the_token_budget() -> None:
    policy = replace(PRESETS["threshold"], summary_max_tokens=60)
    out = run(
        ExtractiveSummarizer().summarize(
            SummaryInput(policy=policy, previous=None, messages=ENGLISH * 10)
        )
    )
    from tui_chat.core.tokens import get_counter

    assert 0 < get_counter().count(out.text) <= 60


def test_extractive_running_carries_the_previous_summary() -> None:
    previous = summary("The user asked for CSV export to out/report.csv at the start.")
    policy = replace(PRESETS["window"], compression_rate=0.5)
    request = SummaryInput(policy=policy, previous=previous, messages=ENGLISH[4:])
    out = run(ExtractiveSummarizer().summarize(request))
    assert "out/report.csv" in out.text


def test_extractive_never_returns_empty_text() -> None:
    tiny = [msg(1, "user", "ok", 1), msg(2, "assistant", "k", 1)]
    for policy in PRESETS.values():
        out = run(ExtractiveSummarizer().summarize(SummaryInput(policy, None, tiny)))
        assert out.text.strip(), policy.preset
    one_long = [msg(1, "user", "word " * 2_000, 1), msg(2, "assistant", "done", 1)]
    out = run(ExtractiveSummarizer().summarize(SummaryInput(PRESETS["session"], None, one_long)))
    assert 0 < len(split_fields(out.text)) <= 700


def test_extractive_follows_instructions() -> None:
    messages = [
        msg(1, "user", "Show me the users table query.", 1),
        msg(
            2,
            "assistant",
            "Here it is. The sql statement selects every active user. "
            "Indexes on users speed up lookups by 4x. The planner picks a seq scan otherwise.",
            1,
        ),
        msg(3, "user", "Thanks, and what about caching with redis_cache?", 2),
        msg(4, "assistant", "Use redis_cache with a 300s TTL for hot keys.", 2),
    ]
    policy = replace(PRESETS["turns"], compression_rate=0.2)
    plain = run(ExtractiveSummarizer().summarize(SummaryInput(policy, None, messages)))
    asked = run(
        ExtractiveSummarizer().summarize(
            SummaryInput(policy, None, messages, instructions="keep every SQL statement")
        )
    )
    assert "sql statement" not in plain.text
    assert "sql statement" in asked.text


def test_extractive_pinned_sentences_weigh_most() -> None:
    messages = [
        msg(1, "user", "Remember the codename Bluebird for this project.", 1),
        msg(2, "assistant", "Noted, I set MAX_RETRIES to 12 in src/config.py.", 1),
        msg(3, "user", "Now what?", 2),
        msg(4, "assistant", "Next we add logging.", 2),
    ]
    policy = replace(PRESETS["turns"], compression_rate=0.1)
    plain = run(ExtractiveSummarizer().summarize(SummaryInput(policy, None, messages)))
    pinned = run(
        ExtractiveSummarizer().summarize(
            SummaryInput(policy, None, messages, pinned_ids=frozenset({1}))
        )
    )
    assert "Bluebird" not in plain.text
    assert "Bluebird" in pinned.text


def test_extractive_rolls_up_oldest_segments_within_budget() -> None:
    segments = long_segments(5)
    budget = 220
    policy = replace(PRESETS["hybrid"], summary_max_tokens=budget)
    late = [msg(50 + i, m.role, m.text, 15 + m.turn, m.content) for i, m in enumerate(ENGLISH)]
    request = SummaryInput(
        policy=policy, previous=summary(segments_text(segments), segments), messages=late
    )
    out = run(ExtractiveSummarizer().summarize(request))
    assert out.segments[0].level >= 1
    assert out.segments[0].turns[0] == 1
    assert out.segments[-1].turns == (16, 18)
    assert segments_tokens(out.segments) <= budget
    assert sum(s.original_chars for s in out.segments) == 5 * 3_000 + sum(
        len(message_body(m)) for m in late
    )


def test_running_parent_becomes_a_segment_when_switching_strategy() -> None:
    previous = summary("Running brief about src/calculator.py.")
    request = SummaryInput(policy=PRESETS["turns"], previous=previous, messages=ENGLISH[4:])
    out = run(ExtractiveSummarizer().summarize(request))
    assert out.segments[0].text == "Running brief about src/calculator.py."
    assert out.segments[0].turns == (1, 1)
    assert out.segments[1].turns == (2, 3)


# --------------------------------------------------------------------------- fields


def test_fields_merge_with_the_previous_version() -> None:
    previous = {
        "decisions": ["Use SQLite."],
        "open_files": ["src/calculator.py", "old.py"],
        "current_task": "old task",
    }
    fields = extract_fields(ENGLISH, previous)
    assert fields["decisions"][0] == "Use SQLite."
    assert "We decided to use pytest." in fields["decisions"]
    # Most recently mentioned last, no duplicates.
    assert fields["open_files"].count("src/calculator.py") == 1
    assert fields["open_files"][0] == "old.py"
    assert fields["open_files"][-1] == "pyproject.toml"
    assert fields["current_task"].startswith("Add a README.md")
    kept = extract_fields([], previous)
    assert kept == previous


def test_fields_block_is_split_off_the_text() -> None:
    policy: Policy = PRESETS["session"]
    out = run(ExtractiveSummarizer().summarize(SummaryInput(policy, None, ENGLISH)))
    brief = split_fields(out.text)
    assert brief and "Decisions:" not in brief and "Open files:" not in brief
    assert out.text.startswith(brief)


def test_a_lone_segment_over_budget_is_condensed() -> None:
    calls: list[str] = []

    async def model(system: str, user: str, max_tokens: int) -> tuple[str, Usage | None]:
        calls.append(user)
        if user.startswith("Merge these"):
            return "<summary>Calculator, pytest, README, version 1.2.0.</summary>", None
        return "<summary>" + "A long account of src/calculator.py. " * 30 + "</summary>", None

    policy = replace(PRESETS["hybrid"], summary_max_tokens=40)
    request = SummaryInput(policy=policy, previous=None, messages=ENGLISH)
    out = run(ModelSummarizer(model, "m").summarize(request))
    assert len(calls) == 2 and calls[1].startswith("Merge these consecutive summaries of turns 1-3")
    assert "at most 40 tokens" in calls[0] and "at most 40 tokens" in calls[1]
    (segment,) = out.segments
    assert segment.level == 1 and segment.turns == (1, 3)
    assert segments_tokens(out.segments) <= 40

    offline = run(ExtractiveSummarizer().summarize(replace(request, messages=ENGLISH * 20)))
    assert segments_tokens(offline.segments) <= 40
    assert offline.text.strip()


def test_message_body_renders_tools_and_leaves_thinking_out() -> None:
    message = msg(
        1,
        "assistant",
        "",
        1,
        [
            {"type": "thinking", "thinking": "SECRET-REASONING"},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "3.13"}},
            {
                "type": "web_search_tool_result",
                "tool_use_id": "s1",
                "content": [
                    {"type": "web_search_result", "title": "What's new", "url": "https://d.org/3"}
                ],
            },
            {"type": "tool_result", "tool_use_id": "x", "content": "boom", "is_error": True},
            {"type": "text", "text": "Done."},
        ],
    )
    assert message_body(message) == (
        '[tool call web_search] {"q": "3.13"}\n'
        "[tool result] What's new (https://d.org/3)\n"
        "[tool error] boom\n"
        "Done."
    )
    fallback = msg(2, "user", "plain stored text", 1, [])
    assert message_body(fallback) == "plain stored text"


def test_compression_rate_changes_the_size_of_a_running_summary() -> None:
    from tui_chat.core.tokens import get_counter

    long_history = [
        msg(
            i,
            "user" if i % 2 else "assistant",
            f"Step {i}: we moved module_{i}.py to package p{i} after {i * 7} ms of tests. "
            f"The reviewer {i} asked why queue {i} drains late; option {i} keeps it simple.",
            i // 2 + 1,
        )
        for i in range(1, 200)
    ]
    sizes = {}
    for rate in (0.1, 0.5):
        policy = replace(PRESETS["window"], compression_rate=rate, summarizer="extractive")
        request = SummaryInput(policy=policy, previous=None, messages=long_history)
        sizes[rate] = get_counter().count(ExtractiveSummarizer().summarize_sync(request).text)
    assert sizes[0.1] < sizes[0.5] * 0.6
