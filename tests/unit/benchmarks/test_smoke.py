"""The benchmark code runs on tiny sizes, and the quality metric counts hits correctly.

No timing is asserted anywhere: benchmarks print figures, tests check behaviour.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from benchmarks import cost, quality, tokens
from benchmarks.common import Row, percentile, row
from benchmarks.datagen import ScaleSpec, generate_scale_db
from benchmarks.run import table

TINY = ScaleSpec(conversations=4, messages=80, big=40, medium=20, tail=10)


def test_row_judges_targets() -> None:
    assert row("g", "f", 9.0, "ms", le=10).met is True
    assert row("g", "f", 11.0, "ms", le=10).met is False
    assert row("g", "f", 80.0, "%", ge=75).met is True
    assert row("g", "f", 1.0, "x").met is None
    assert set(row("g", "f", 1.0, "x").to_json()) == {
        "group",
        "figure",
        "value",
        "unit",
        "target",
        "met",
    }
    assert percentile([1, 2, 3, 4, 100], 95) == 100
    text = table([Row("g", "figure", 1.5, "ms", "<= 2", True, 1.2, "note")])
    assert "figure" in text and "yes" in text and "1.20x" in text


def test_scale_database_is_generated_with_the_app_schema(tmp_path: Path) -> None:
    made = generate_scale_db(tmp_path / "tiny.db", TINY)
    db = sqlite3.connect(made.path)
    assert db.execute("SELECT count(*) FROM conversations").fetchone()[0] == 4
    assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 80
    counts = dict(db.execute("SELECT conversation_id, count(*) FROM messages GROUP BY 1"))
    assert counts[made.big_id] == 40 and counts[made.medium_id] == 20
    # FTS triggers indexed every message; the big conversation has an active summary.
    assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'the'").fetchone()
    covers = db.execute(
        "SELECT s.covers_to_message_id FROM conversations c JOIN summaries s "
        "ON s.id = c.active_summary_id WHERE c.id = ?",
        (made.big_id,),
    ).fetchone()[0]
    newer = db.execute(
        "SELECT count(*) FROM messages WHERE conversation_id = ? AND id > ?",
        (made.big_id, covers),
    ).fetchone()[0]
    assert newer == TINY.tail
    # Same seed, same data.
    again = generate_scale_db(tmp_path / "again.db", TINY)
    other = sqlite3.connect(again.path)
    query = "SELECT text FROM messages ORDER BY id"
    assert db.execute(query).fetchall() == other.execute(query).fetchall()


def _request(system: list[str], messages: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        "system": [{"type": "text", "text": t} for t in system],
        "messages": [{"role": r, "content": c} for r, c in messages],
    }


def test_hit_needs_every_evidence_turn_inside_the_request() -> None:
    request = _request(
        ["base prompt", "# Recalled\n[#3 user, 2023-05-08]\nI went to the  LGBTQ support\ngroup."],
        [
            ("user", [{"type": "text", "text": "Hello there"}]),
            ("assistant", [{"type": "text", "text": "We adopted a dog named Max."}]),
            ("user", "When did I go to the support group?"),
        ],
    )
    # Whitespace differences do not matter; text anywhere in the request counts.
    assert quality.is_hit(request, ["I went to the LGBTQ support group."])
    assert quality.is_hit(request, ["We adopted a dog named Max.", "Hello there"])
    # Every evidence turn must be there: one missing is a miss.
    assert not quality.is_hit(request, ["We adopted a dog named Max.", "We moved to Paris."])
    # A cut excerpt does not count.
    assert not quality.is_hit(request, ["I went to the LGBTQ support group last Friday."])


def _locomo(path: Path) -> Path:
    sessions: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    facts = ["painted a red sunrise", "adopted a puppy named Max", "ran the city marathon"]
    for n in range(1, 4):
        sessions[f"session_{n}_date_time"] = f"1:56 pm on {n} May, 2023"
        turns = []
        for t in range(1, 9):
            speaker = "Ann" if t % 2 else "Bob"
            text = f"Session {n} turn {t}: small talk about the weather and work."
            if t == 3:
                text = f"Last week I {facts[n - 1]}, it was great."
            turns.append({"speaker": speaker, "dia_id": f"D{n}:{t}", "text": text})
        sessions[f"session_{n}"] = turns
    sessions["qa"] = [
        {"question": "What did Ann paint?", "answer": "sunrise", "evidence": ["D1:3"]},
        {"question": "Who is Max?", "answer": "puppy", "evidence": ["D2:3"], "category": 4},
        {"question": "Which race?", "answer": "marathon", "evidence": ["D3:3", "D9:1"]},
        {"question": "No evidence", "answer": "?", "evidence": []},
    ]
    path.write_text(json.dumps(sessions))
    return path


async def test_quality_runs_on_a_tiny_dialogue(tmp_path: Path) -> None:
    dialogue = quality.load_dialogue(_locomo(tmp_path / "tiny.json"))
    assert dialogue.skipped == 2  # no evidence; evidence naming a missing turn
    assert [t.role for t in dialogue.turns[:2]] == ["user", "assistant"]
    assert dialogue.turns[0].text.startswith("[Session 1, 1:56 pm on 1 May, 2023]")
    tallies: dict[tuple[str, int, bool], quality.Tally] = {}
    stats: dict[str, quality.PresetStats] = {}
    await quality.evaluate(dialogue, ["window"], [4_000], tmp_path, tallies, stats)
    assert tallies[("truncation", 4_000, False)].total == 2
    on = tallies[("window", 4_000, True)]
    assert on.total == 2 and 0 <= on.hits <= 2
    assert stats["window"].reductions
    assert quality.context_window_for(4_000) - 4_000 > 0


def test_tokens_helpers_measure_samples(tmp_path: Path) -> None:
    total, mean_abs, real, chars = tokens.len4_error(["hello world, this is English text."])
    assert real > 0 and chars > 0 and mean_abs >= 0 and -100 < total < 100
    # A seed file made here: the benchmark reads ../shared/seeds, the test needs no ../shared.
    (tmp_path / "seed.txt").write_text(
        "# 설계 문서\n"
        "- 대화 기록은 로컬 데이터베이스에 저장됩니다\n"
        "An English line that is long enough to be read.\n"
        "| 요약 버전은 언제든지 되돌릴 수 있습니다 |\n",
        encoding="utf-8",
    )
    korean = tokens.korean_samples(tmp_path)
    assert korean == [
        "대화 기록은 로컬 데이터베이스에 저장됩니다",
        "요약 버전은 언제든지 되돌릴 수 있습니다",
    ]
    assert tokens.code_samples()


async def test_cost_replays_a_short_script(tmp_path: Path) -> None:
    script = cost.script(turns=4)
    run = await cost.replay({"preset": "window"}, script, tmp_path, baseline=True)
    chat = run.bills["chat"]
    assert chat.requests == 4 and run.versions == 0 and set(run.bills) == {"chat"}
    assert chat.output > 0 and chat.input + chat.written + chat.read > 0
    assert run.dollars > 0 and run.identifiers_kept == 100.0


def test_cost_pauses_are_seeded_and_sometimes_outlive_the_cache() -> None:
    pauses = cost.script(turns=200).pauses
    assert pauses == cost.script(turns=200).pauses
    assert 20 < sum(p > 300 for p in pauses) < 100


async def test_sessions_replay_bills_every_request_and_keeps_the_replay_clock(
    tmp_path: Path,
) -> None:
    from benchmarks import sessions

    session = sessions.scripted_session(4)
    base = await sessions.replay(sessions.BASELINE, session, "paused", tmp_path)
    default = await sessions.replay({"summarizer": "claude"}, session, "paused", tmp_path)
    assert base.bills["chat"].requests == default.bills["chat"].requests == 4
    assert base.dollars > 0 and default.dollars > 0
    assert base.identifiers == 100.0 and base.versions == default.versions == 0


def test_a_locomo_chat_becomes_prompts_and_replies_with_its_session_gaps() -> None:
    from benchmarks import sessions
    from benchmarks.common import LOCOMO_DIR

    path = LOCOMO_DIR / "conv-26.json"
    if not path.exists():
        pytest.skip("../shared not found")
    session = sessions.locomo_session(path)
    assert len(session.user) == len(session.replies) == len(session.gaps) > 100
    assert max(session.gaps) > 86_400  # days between sessions
    assert all(q.after < len(session.user) for q in session.questions)


def test_the_long_session_is_over_four_budgets_with_facts_asked_after_they_are_stated() -> None:
    from benchmarks import long_session, sessions
    from tui_chat.core.presets import DEFAULT_BUDGET
    from tui_chat.core.tokens import get_counter

    session = sessions.long_session()
    counter = get_counter()
    total = sum(counter.count(t) for t in session.user + session.replies)
    assert total > 4 * DEFAULT_BUDGET
    assert len(session.user) == len(session.replies) == len(session.gaps)
    assert max(session.gaps) > long_session.NIGHT  # nights between days
    assert len(session.questions) > 50
    for q in session.questions:  # each fact is stated, word for word, in its prompt
        assert q.evidence[0] in session.user[q.after]
    asked = [u for u in session.user if u.startswith(("Remind me", "What did I", "Quick one"))]
    assert len(asked) > 20  # prompts that come back to an earlier fact
