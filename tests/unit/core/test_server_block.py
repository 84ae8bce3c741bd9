"""A ``server`` version's compaction block in the request: first in ``messages``, exactly as
received, no breakpoint on it, its text not repeated in the memory block."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

from tests.unit.core.test_request_builder import History, breakpoints, build_alone, inputs, summary

BLOCK = {"type": "compaction", "content": "They chose SQLite; schema v3.", "signature": "sig_abc"}


def test_block_goes_first_unchanged_and_its_text_is_not_in_the_system() -> None:
    history = History()
    history.turn("Use SQLite?", "Yes.")
    raw = history.turn("And the schema?", "v3.")
    active = replace(
        summary(covers_to=2), text=BLOCK["content"], compaction_block=copy.deepcopy(BLOCK)
    )
    built = build_alone(inputs(raw, summary_=active))
    messages = built.request["messages"]
    assert messages[0] == {"role": "assistant", "content": [BLOCK]}
    assert json.dumps(messages[0]) == json.dumps({"role": "assistant", "content": [BLOCK]})
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant", "user"]
    assert "SQLite; schema v3" not in json.dumps(built.request.get("system"))
    assert breakpoints(built.request) <= 4 and "cache_control" not in messages[0]["content"][0]
    assert built.breakdown.sections["summary"] > 0


def test_no_breakpoint_lands_on_the_block_with_recall_in_the_only_message() -> None:
    old = History().add("user", "what next? we chose SQLite back then")
    active = replace(summary(covers_to=2), compaction_block=copy.deepcopy(BLOCK))
    built = build_alone(inputs([], summary_=active, recalled=[old]))
    messages = built.request["messages"]
    assert messages[0] == {"role": "assistant", "content": [BLOCK]}
    assert len(messages) == 2 and messages[1]["role"] == "user"


def test_without_a_block_the_summary_stays_in_the_memory_block() -> None:
    history = History()
    raw = history.turn("And the schema?", "v3.")
    built = build_alone(inputs(raw, summary_=summary(covers_to=0)))
    assert built.request["messages"][0]["role"] == "user"
    assert "they chose SQLite" in json.dumps(built.request["system"])
