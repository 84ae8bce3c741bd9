"""The identifier ledger: extraction by kind, building over versions, ranking, budget, retention."""

from __future__ import annotations

from tui_chat.core import identifiers, ledger
from tui_chat.core.models import Message
from tui_chat.core.tokens import get_counter

COUNTER = get_counter()


def msg(i: int, text: str) -> Message:
    return Message(
        id=i,
        conversation_id="c",
        role="user" if i % 2 else "assistant",
        content=[{"type": "text", "text": text}],
        text=text,
        turn=i,
        token_count=COUNTER.count(text),
        status="complete",
        created_at=f"2026-01-01T00:00:{i:02d}+00:00",
    )


SAMPLE = (
    "The fix in src/app/db.py (commit 3fa9c2e1) raised ValueError and E0425; see "
    'https://x.io/a, pydantic 2.7.1, 250 ms, "job 4 failed after retry", call '
    "parse_config() as agreed with Bob Smith."
)


def test_every_kind_is_extracted() -> None:
    found = dict((value, kind) for kind, value in ledger.extract(SAMPLE))
    assert found["src/app/db.py"] == "path"
    assert found["3fa9c2e1"] == "hash"
    assert found["ValueError"] == "error" and found["E0425"] == "error"
    assert found["https://x.io/a"] == "url"
    assert found["2.7.1"] == "version"
    assert found["250 ms"] == "number"
    assert found["job 4 failed after retry"] == "quote"
    assert found["parse_config()"] == "code"
    assert found["Bob Smith"] == "person"


def test_a_version_extends_its_parents_ledger_with_message_ids() -> None:
    first = ledger.build([msg(1, "edit src/a.py now"), msg(2, "done with src/a.py")])
    second = ledger.build([msg(3, "src/a.py and src/b.py")], first)
    by_value = {e.value: e for e in second}
    assert by_value["src/a.py"].message_ids == (1, 2, 3)
    assert by_value["src/a.py"].count == 3
    assert by_value["src/b.py"].message_ids == (3,)
    again = ledger.from_json(ledger.to_json(second))
    assert again == second


def test_render_keeps_its_budget_and_ranks_pinned_then_recent() -> None:
    messages = [msg(i, f"look at src/mod_{i}.py") for i in range(1, 40)]
    entries = ledger.build(messages)
    text, sent = ledger.render(entries, 120, COUNTER, pinned=[2])
    assert COUNTER.count(text) <= 120
    assert sent and sent[0].value == "src/mod_2.py"  # pinned first
    assert "src/mod_39.py" in text  # then the most recent
    assert "src/mod_10.py" not in text
    assert ledger.render(entries, 0, COUNTER) == ("", [])


def test_retention_per_kind_and_the_identifiers_not_kept() -> None:
    kept = ledger.retention([SAMPLE], "we changed src/app/db.py after ValueError")
    data = kept.to_json()
    assert data["by_kind"]["path"] == {"kept": 1, "total": 1}
    assert data["by_kind"]["error"] == {"kept": 1, "total": 2}
    assert {"kind": "hash", "value": "3fa9c2e1"} in data["not_kept"]
    assert 0 < kept.rate < 1
    full = ledger.retention([SAMPLE], SAMPLE)
    assert full.rate == 1.0 and not full.missing


def test_a_complete_ledger_gives_the_retention_of_its_messages() -> None:
    texts = [
        SAMPLE,
        "then src/app/db.py again, E0425 twice, and 3fa9c2e1 reverted by Ann Lee",
        "nothing here",
        "HTTP 503 from https://x.io/b after 1,500 ms; see `make check` and v2.0",
    ]
    messages = [msg(i, t) for i, t in enumerate(texts, start=1)]
    first = ledger.build(messages[:2])
    chain = ledger.build(messages[2:], first)  # a second version over the rest
    for kept_text in ("", "src/app/db.py and 1500 ms, Ann Lee", SAMPLE + texts[3]):
        assert ledger.ledger_retention(chain, kept_text) == ledger.retention(texts, kept_text)


def test_extraction_with_a_scan_memo_is_extraction() -> None:
    memo = identifiers.ScanMemo()
    for text in (SAMPLE, "plain words only", "ERR_DISK_FULL in a/b.py", SAMPLE):
        assert ledger.extract(text, memo) == ledger.extract(text)
