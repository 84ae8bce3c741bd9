"""What people type stays in the ledger: ticket keys, line references, and what each is about."""

from __future__ import annotations

import pytest

from tests.unit.core.test_ledger import msg
from tui_chat.core import identifiers, ledger
from tui_chat.core.ledger_context import MAX_CHARS, phrase
from tui_chat.core.tokens import get_counter

COUNTER = get_counter()

TYPED = (
    "PROJ-432 is the flaky login test again. It fails at line 1234 of "
    "src/app/auth/session.py, and the traceback points to src/app/db.py:120 and "
    'File "worker.py", line 88, in run. Lines 10-20 of tests/test_login.py set it up; '
    "see L42 in the fixture, app/models.py#L10-L20 and ABC-12 for the schema change, "
    "fixed upstream in octo/api#311."
)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("PROJ-432", "ticket"),
        ("ABC-12", "ticket"),
        ("octo/api#311", "ticket"),
        ("#57", "ticket"),
        ("line 1234", "line"),
        ("src/app/db.py:120", "line"),
        ("line 88", "line"),
        ("Lines 10-20", "line"),
        ("L42", "line"),
        ("app/models.py#L10-L20", "line"),
        ("src/app/auth/session.py", "path"),
        ("tests/test_login.py", "path"),
    ],
)
def test_ticket_keys_and_line_references_are_their_own_kinds(value: str, kind: str) -> None:
    found = dict((v, k) for k, v in ledger.extract(TYPED))
    assert found.get(value) == kind


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("during COVID-19 we shipped less", "COVID-19"),
        ("decode it as UTF-8 first", "UTF-8"),
        ("hash with SHA-256", "SHA-256"),
        ("dates are ISO-8601", "ISO-8601"),
        ("compare it with GPT-4 output", "GPT-4"),
        ("encrypted with AES-256", "AES-256"),
    ],
)
def test_well_known_names_with_digits_are_not_tickets(text: str, value: str) -> None:
    """``COVID-19`` has the shape of a ticket key; it is kept whole, as a name (code)."""
    assert ("code", value) in ledger.extract(text)
    assert not any(kind == "ticket" for kind, _ in ledger.extract(text))


@pytest.mark.parametrize(
    "text",
    [
        "the L2 cache is warm",  # one digit: a cache level, not a line
        "it took 1234 lines of code",  # a count of lines, not a reference
        "meet at 12:30 on localhost:8080",
        "a well-known long-term plan",
    ],
)
def test_look_alikes_are_not_line_references_or_tickets(text: str) -> None:
    kinds = {kind for kind, _ in ledger.extract(text)}
    assert not kinds & {"ticket", "line"}


def test_a_count_of_lines_stays_a_number() -> None:
    assert ("number", "1234 lines") in identifiers.scan("it took 1234 lines of code")


def test_each_entry_keeps_the_words_around_its_first_occurrence() -> None:
    first = ledger.build([msg(1, TYPED)])
    later = ledger.build([msg(3, "PROJ-432 is closed now, nothing else")], first)
    by_value = {e.value: e for e in later}
    assert by_value["PROJ-432"].context == "~ is the flaky login test"
    assert "src/app/auth/session.py" in by_value["line 1234"].context
    assert by_value["src/app/auth/session.py"].context == ""  # a path says what it is
    assert by_value["PROJ-432"].message_ids == (1, 3)  # the context is the first one's
    assert all(len(e.context) <= MAX_CHARS for e in later)
    assert ledger.from_json(ledger.to_json(later)) == later


def test_phrase_stays_in_its_clause_and_reads_on_past_a_question() -> None:
    assert phrase("Done. Bump the pool to 250 ms in prod; then retry.", "250 ms") == (
        "the pool to ~ in prod"
    )
    assert phrase("Can you look at PROJ-9? It is the login bug.", "PROJ-9") == (
        "you look at ~ It is the login bug"
    )
    assert phrase("PROJ-9", "PROJ-9") == ""
    assert phrase("nothing here", "PROJ-9") == ""


def test_render_sends_every_identifier_before_any_context() -> None:
    """Context only fills room left once every identifier that fits is in: at a tight budget
    the ledger carries more identifiers bare than it would with their context."""
    texts = [f"Ticket OPS-{i} is the broken nightly export of tenant {i}" for i in range(1, 60)]
    entries = ledger.build([msg(i, t) for i, t in enumerate(texts, start=1)])
    tight = 200
    text, sent = ledger.render(entries, tight, COUNTER)
    assert COUNTER.count(text) <= tight
    bare = [e.value for e in sent]
    body = text.removeprefix(ledger.LEDGER_HEADER)
    assert len(bare) >= 30 and "(#" not in body  # no room for context: values only
    roomy, sent_all = ledger.render(entries, 5_000, COUNTER)
    assert len(sent_all) == len(entries)
    assert "OPS-59 (#59: Ticket ~ is the broken nightly export)" in roomy
    assert COUNTER.count(roomy) <= 5_000


def test_retention_counts_the_new_kinds() -> None:
    kept = ledger.retention([TYPED], "PROJ-432 broke at line 1234; see src/app/db.py:120")
    data = kept.to_json()
    assert data["by_kind"]["ticket"]["kept"] == 1 and data["by_kind"]["ticket"]["total"] == 4
    assert data["by_kind"]["line"]["kept"] == 2 and data["by_kind"]["line"]["total"] == 6


def test_an_l_number_is_a_line_not_an_error_code() -> None:
    found = ledger.extract("The assertion fires at L2069, error E1190 and ABC1234.")
    assert ("line", "L2069") in found
    assert ("error", "E1190") in found and ("error", "ABC1234") in found


def test_the_generated_coding_session_has_typed_tickets_and_line_references() -> None:
    from benchmarks import coding

    typed = [text for role, text, _ in coding.generate(turns=30).messages if role == "user"]
    kinds = [{kind for kind, _ in ledger.extract(text)} for text in typed]
    assert all("ticket" in k for k in kinds)
    assert sum("line" in k for k in kinds) == len(typed)
    tickets = [v for text in typed for k, v in ledger.extract(text) if k == "ticket"]
    assert len(set(tickets)) < len(tickets)  # people come back to a ticket


def test_a_short_summary_leaves_its_room_to_the_ledger() -> None:
    """The memory block's two parts share their budgets: a summary far under its cap lets the
    ledger carry more identifiers, never more than the two budgets together."""
    from dataclasses import replace

    from tests.unit.core.test_request_builder import build_alone, inputs, summary
    from tui_chat.core.presets import PRESETS
    from tui_chat.core.request.budget import for_window, ledger_budget

    texts = [f"Ticket OPS-{i} fails at src/app/mod_{i}.py:{100 + i}" for i in range(1, 400)]
    entries = ledger.build([msg(i, t) for i, t in enumerate(texts, start=1)])
    usable = 20_000
    policy = for_window(replace(PRESETS["adaptive"], budget=None), usable)
    short = summary(400, body="We fixed the import tickets.")
    built = build_alone(
        replace(inputs(policy=policy, window=usable + 8_000, summary_=short), ledger=entries)
    )
    own = ledger_budget(policy, usable)
    sections = built.breakdown.sections
    assert sections["ledger"] > own  # more than its own share: the summary's room
    assert sections["ledger"] + sections["summary"] <= own + policy.summary_max_tokens + 40
    assert built.breakdown.budgets["ledger"] >= sections["ledger"]


def test_what_the_user_typed_ranks_before_what_only_replies_said() -> None:
    """msg() makes odd ids the user's: at a budget for a few entries, theirs go first, even
    when a reply's identifiers are newer."""
    messages = [msg(i, f"see OPS-{i} in src/app/mod_{i}.py") for i in range(1, 21)]
    entries = ledger.build(messages)
    assert {e.value for e in entries if e.typed} == {
        v for i in range(1, 21, 2) for v in (f"OPS-{i}", f"src/app/mod_{i}.py")
    }
    _, sent = ledger.render(entries, 90, COUNTER)
    assert sent and all(e.typed for e in sent)
    assert sent[0].value in ("OPS-19", "src/app/mod_19.py")  # then the newest first
    assert ledger.from_json(ledger.to_json(entries)) == entries


def test_a_path_that_a_line_reference_spells_out_is_not_listed_again() -> None:
    entries = ledger.build([msg(1, "it crashes at src/app/db.py:120"), msg(3, "src/app/db.py")])
    assert {e.kind for e in entries} == {"line", "path"}
    text, _ = ledger.render(entries, 500, COUNTER)
    assert "src/app/db.py:120" in text and text.count("src/app/db.py") == 1
    assert ledger.ledger_retention(entries, text).rate == 1.0  # the path is still there


def test_a_long_paste_gives_phrases_to_its_first_identifiers_only() -> None:
    """Each phrase is a search of the message: a paste of thousands of identifiers is not read
    thousands of times (it once took minutes for a 1 MB paste)."""
    from tui_chat.core.ledger_context import PER_MESSAGE, REACH

    paste = " ".join(f"step {i} failed at line {i + 10} of OPS-{i + 1}" for i in range(500))
    entries = ledger.build([msg(1, paste)])
    assert len(entries) > 2 * PER_MESSAGE
    assert 0 < sum(1 for e in entries if e.context) <= PER_MESSAGE
    far = "word " * 10_000 + "PROJ-7 broke" + " word" * 10_000  # no clause end in reach
    assert phrase(far, "PROJ-7") == "word word word ~ broke word word word word"
    assert len(far) > 40 * REACH


@pytest.mark.parametrize(
    "stamp",
    ["[Session 3, 8:30 PM on 1 January, 2023]", "[12:03]", "  [Tue 9:41 am]"],
)
def test_a_bracketed_time_stamp_opening_a_line_is_no_identifier(stamp: str) -> None:
    """The stamp says when a message was written (the message keeps its own time); in a
    replayed transcript its clock times and day numbers filled most of the ledger."""
    found = ledger.extract(f"{stamp}\nthe crate went to gate 42 at 6:10 pm")
    assert ("number", "42") in found
    assert ("number", "6:10") in found  # a time the text itself gives is kept
    assert not any(value in ("8:30", "2023", "12:03", "9:41") for _, value in found)


def test_the_word_after_a_speaker_label_is_not_taken_for_a_name() -> None:
    found = ledger.extract("Maria: Sorry I was late.\nJohn: Thanks Gina, I ran it with David.")
    people = {value for kind, value in found if kind == "person"}
    assert people == {"David"}


def test_a_name_after_a_colon_inside_a_line_is_still_a_name() -> None:
    found = ledger.extract("We met the new lead, who said: Priya will review it")
    assert ("person", "Priya") in found
