"""Hostile text everywhere text goes in, and hostile import files.

Huge pastes, NUL bytes, lone surrogates, ANSI/OSC escape sequences and Rich/Textual markup in
user text, model text, titles, search queries and imported files: stored (cleaned only of what
SQLite or JSON cannot hold), sent, searched, exported and shown without ever reaching the
terminal as control sequences. FTS syntax in search never fails. Bad import files fail with
one clear line and import nothing. Property-based where the input space is large.
"""

from __future__ import annotations

import io
import json
import random
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.reliability.helpers import CONTROL_CHARS, Ran, cli_json, run_cli, run_here, run_main
from tui_chat.core.tokens import get_counter
from tui_chat.engine.transfer.transfer import MAX_IMPORT_MESSAGES, ImportError_, import_conversation
from tui_chat.store.repository import Store
from tui_chat.store.rows import clean_text

HOSTILE_PIECES = [
    "\x1b[31m",  # SGR colour
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b]0;pwned\x07",  # OSC window title
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1bP+q\x1b\\",  # DCS
    "\x9b31m",  # C1 CSI
    "\x00",
    "\ud800",
    "\udfff",
    "\r",
    "\x08",
    "\x7f",
    "[bold red]",
    "[/]",
    "[link=http://evil.example]x[/link]",
    "[@click=app.quit]quit[/]",
    "$$",
    '"',
    "*",
    "NEAR(",
    "-",
    "AND",
    "OR NOT",
    "^",
    "col:",
    "\u202e",  # right-to-left override
    "\u200b",
    "한국어",
    "😀",
    "\t",
    "\n",
]
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE_PIECES), st.text(max_size=6)), min_size=1, max_size=10
).map(lambda parts: "x " + "".join(parts))
"""Text with a visible start (an empty message is refused) and anything after it."""


def assert_inert(output: str, where: str) -> None:
    """No control character but newline and tab may reach a terminal."""
    found = sorted({f"U+{ord(c):04X}" for c in output if c in CONTROL_CHARS})
    assert not found, f"{where} printed control characters {found}"


def send_stdin(capsys: pytest.CaptureFixture[str], text: str, *args: str) -> Ran:
    """``tui-chat send ARGS -`` with ``text`` on standard input, in this process."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO(text))
        return run_main(capsys, "send", *args, "-")


# -- huge pastes --------------------------------------------------------------------------


@pytest.mark.slow  # a real process
def test_one_megabyte_paste_through_a_real_process(
    isolated_env: Path, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    rng = random.Random(1)
    words = [f"{rng.choice('abcdefghij')}{rng.randrange(10**6)}" for _ in range(140_000)]
    paste = " ".join(words)[: 1024 * 1024 - 20] + " needle_zq9"
    assert len(paste.encode()) >= 1_000_000
    done = run_cli(
        isolated_env, "send", "--new", "--json", "-", base_url=fake_anthropic.base_url, stdin=paste
    )
    assert done.returncode == 0, done.stderr[-500:]
    data = json.loads(done.stdout)
    assert data["user"]["text"] == paste and data["reply"]["status"] == "complete"
    sent = fake_anthropic.message_requests[-1].body["messages"][-1]["content"]
    assert paste in json.dumps(sent, ensure_ascii=False)
    cid = data["conversation_id"]
    shown = cli_json(isolated_env, "show", cid)  # a real process reads it back
    assert shown["messages"][0]["text"] == paste

    def here(*args: str) -> Any:  # the rest in this process: the same commands, no start-up
        done = run_here(isolated_env, *args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    hits = here("search", "needle_zq9")
    assert [h["message_id"] for h in hits] == [data["user"]["id"]]
    exported = tmp_path / "big.json"
    assert (
        run_here(isolated_env, "export", cid, "--format", "json", "-o", str(exported)).returncode
        == 0
    )
    imported = here("import", str(exported))
    assert here("show", imported["id"])["messages"][0]["text"] == paste


def test_ten_thousand_line_paste(
    cli_home: Path, fake_anthropic: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    paste = "\n".join(f"line {i}: SELECT * FROM t{i} WHERE id = {i};" for i in range(10_000))
    sent = send_stdin(capsys, paste, "--new", "--json")
    data = sent.json()
    assert data["user"]["text"] == paste
    assert data["reply"]["text"] == "Reply to: " + " ".join(paste.split())[:60]
    body = fake_anthropic.message_requests[-1].body
    assert body["messages"][-1]["content"][-1]["text"] == paste
    shown = run_main(capsys, "show", data["conversation_id"])
    assert shown.code == 0 and shown.out.count("\n") >= 10_000
    context = run_main(capsys, "context", data["conversation_id"], "--json").json()
    assert context["breakdown"]["sections"]["recent"] > 10_000
    hits = run_main(capsys, "search", "line 9999", "--json").json()
    assert hits and hits[0]["message_id"] == data["user"]["id"]


# -- hostile text on every surface ---------------------------------------------------------


def through_json(text: str) -> str:
    """What is stored of ``text`` that came as JSON (the reply's stream, an imported file).

    JSON escapes a lone surrogate and reads two escaped halves of a pair back as the one
    character they spell ("\\ud800\\udfff" is U+103FF): the app gets what the JSON says, not
    the Python string the test wrote."""
    return clean_text(json.loads(json.dumps(text)))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(user=hostile_text, model=hostile_text, query=hostile_text)
# Halves of a surrogate pair, each alone in the string the test writes: JSON reads them back
# as one character (found by the dev profile's exploration).
@example(user="u", model="m \ud800\udfff", query="x \ud800\udfff")
def test_hostile_text_in_user_model_title_search_and_import(
    cli_home: Path,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    user: str,
    model: str,
    query: str,
) -> None:
    fake_anthropic.push_reply(model)
    sent = send_stdin(capsys, user, "--new")
    assert sent.code == 0, sent.err
    assert_inert(sent.out + sent.err, "send (streamed reply)")
    cid = run_main(capsys, "list", "--json").json()[0]["id"]

    # Stored as typed, minus what cannot be stored (NUL) or encoded (lone surrogates).
    shown = run_main(capsys, "show", cid, "--json").json()
    user_row, reply_row = shown["messages"][-2:]
    assert user_row["text"] == clean_text(user)
    assert reply_row["text"] == through_json(model) and reply_row["status"] == "complete"
    body = fake_anthropic.message_requests[-1].body
    assert body["messages"][-1]["content"][-1]["text"] == clean_text(user)

    for args in (
        ("list",),
        ("show", cid),
        ("search", "--", query),
        ("search", "--", user),
        ("export", cid, "--format", "md"),
        ("context", cid, "--message", query),
        # JSON for a terminal too: control characters escaped, C1 included.
        ("list", "--json"),
        ("show", cid, "--json"),
        ("export", cid, "--format", "json"),
        ("context", cid, "--message", query, "--json"),
    ):
        done = run_main(capsys, *args)
        assert done.code == 0, (args, done.err)
        assert_inert(done.out + done.err, " ".join(args[:1]))
    # The message is found by its own text, whatever syntax that text holds.
    hits = run_main(capsys, "search", "-c", cid, "--json", "--", user).json()
    assert user_row["id"] in [h["message_id"] for h in hits]

    # An imported file with hostile title, system prompt and messages.
    path = tmp_path_factory.mktemp("imports") / "hostile.json"
    path.write_text(
        json.dumps(
            {
                "title": query,
                "system": model,
                "messages": [
                    {"role": "user", "content": user},
                    {"role": "assistant", "content": [{"type": "text", "text": model}]},
                ],
            }
        )
    )
    # --force: hypothesis may write the same bytes twice into this one home (a file imported
    # before is otherwise refused, which is not what this test is about).
    done = run_main(capsys, "import", "--force", str(path))
    assert done.code == 0, done.err
    assert_inert(done.out + done.err, "import")
    imported = run_main(capsys, "list", "--json").json()[0]

    assert imported["title"] == through_json(query)
    assert imported["system"] == through_json(model)
    listed = run_main(capsys, "list")
    assert_inert(listed.out, "list after import")


def test_markup_and_escapes_are_printed_as_text(
    cli_home: Path, fake_anthropic: FakeAnthropic, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = "[bold red]not bold[/] \x1b]0;title\x07 \x1b[31mred"
    fake_anthropic.push_reply(reply)
    sent = run_main(capsys, "send", "--new", "[link=http://evil.example]click[/link]")
    assert sent.code == 0
    # Markup stays literal; escapes become visible stand-ins (␛, ␇) instead of acting.
    assert "[bold red]not bold[/]" in sent.out and "␛]0;title␇" in sent.out
    listed = run_main(capsys, "list")
    assert "[link=http://evil.example]click[/link]" in listed.out


# -- search ---------------------------------------------------------------------------------


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "search.db")
    yield opened
    await opened.close()


FTS_SYNTAX = [
    '"',
    '""',
    "*",
    "NEAR(",
    "NEAR(a b",
    "-",
    "-x",
    "AND",
    "OR",
    "NOT",
    "a:b",
    "^a",
    "(",
    ")",
]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.one_of(st.text(), hostile_text, st.lists(st.sampled_from(FTS_SYNTAX)).map(" ".join))
)
async def test_any_search_query_is_safe(store: Store, query: str) -> None:
    conv = await store.conversations.create(title="t", model="m")
    await store.messages.add(
        conv.id,
        role="user",
        content=[{"type": "text", "text": "near and or not"}],
        text="near and or not",
        token_count=4,
    )
    await store.search.find(query)
    await store.search.find(query, any_word=True)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.one_of(
            st.sampled_from(FTS_SYNTAX),
            st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True),
            st.text(st.characters(categories=["L", "Nd", "Mn"]), min_size=1, max_size=6),
            st.sampled_from(
                [
                    "e\u0301cole",
                    "नमस्ते",
                    "𐕰",
                    "Ǆ",
                    "x\x1b[31m",
                    "foo-bar",
                    'a"b',
                    "x\ud800y",
                    "0\x000",
                ]
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
async def test_a_message_is_found_by_its_own_text(store: Store, words: list[str]) -> None:
    text = " ".join(words)
    conv = await store.conversations.create(title="t", model="m")
    message = await store.messages.add(
        conv.id, role="user", content=[{"type": "text", "text": text}], text=text, token_count=1
    )
    hits = await store.search.find(text, conversation_id=conv.id)
    if any(ch.isalnum() for ch in text):
        assert [h.message_id for h in hits] == [message.id], text
    else:
        assert hits == []


# -- imports --------------------------------------------------------------------------------


def _counts(db: Path) -> tuple[int, int, int]:
    con = sqlite3.connect(db)
    try:
        return tuple(  # type: ignore[return-value]
            con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("conversations", "messages", "anchors")
        )
    finally:
        con.close()


def _valid_export() -> dict[str, Any]:
    return {
        "format": "tui-chat",
        "version": 1,
        "conversation": {"title": "t", "model": "claude-sonnet-4-6", "system": "s"},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": f"q{i}"}], "pinned": i == 0}
            if i % 2 == 0
            else {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]}
            for i in range(10)
        ],
    }


BAD_IMPORTS: dict[str, bytes] = {
    "not-utf8": b"\xff\xfe{\x00",
    "binary": bytes(range(256)),
    "bom": b'\xef\xbb\xbf{"messages": [{"role": "user", "content": "x"}]}',
    "truncated-export": json.dumps(_valid_export()).encode()[:300],
    "last-message-bad": json.dumps(
        {**_valid_export(), "messages": [*_valid_export()["messages"], {"role": "tool"}]}
    ).encode(),
    "bad-block-late": json.dumps(
        {
            "messages": [{"role": "user", "content": "ok"}] * 50
            + [{"role": "user", "content": [{"type": "text"}]}]
        }
    ).encode(),
    "nested-in-content": (
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": '
        '[{"type": "tool_use", "id": "t", "name": "x", "input": {"a": '
        + "[" * 500
        + "]" * 500
        + "}}]}]}"
    ).encode(),
    "nested-whole": b"[" * 200_000 + b"]" * 200_000,
    "too-many-messages": (
        b'{"messages": ['
        + b'{"role": "user", "content": "x"},' * MAX_IMPORT_MESSAGES
        + b'{"role": "user", "content": "x"}]}'
    ),
    "not-an-object": b'"just a string"',
    "messages-not-list": b'{"messages": {"role": "user"}}',
    "title-not-string": b'{"title": 5, "messages": [{"role": "user", "content": "x"}]}',
}


@pytest.mark.parametrize("name", list(BAD_IMPORTS))
def test_bad_import_is_one_clear_line_and_imports_nothing(
    cli_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    assert run_main(capsys, "list").code == 0  # creates the database
    db = cli_home / "data" / "tui-chat.db"
    before = _counts(db)
    path = tmp_path / f"{name}.json"
    path.write_bytes(BAD_IMPORTS[name])
    done = run_main(capsys, "import", str(path))
    assert done.code == 1
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tui-chat: {path}: "), done.err
    assert "recursion" not in lines[0] and "Traceback" not in done.err
    assert _counts(db) == before


def test_oversized_import_is_refused_before_reading(
    cli_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: 65 MiB without writing them
        handle.truncate(65 * 2**20)
    done = run_main(capsys, "import", str(path))
    assert done.code == 1 and "limited to 64 MB" in done.err
    assert run_main(capsys, "list", "--json").json() == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["role", "content", "type", "text", "messages", "title", "id"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)
message_like = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", 5]), "content": json_values}
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    document=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"messages": st.lists(st.one_of(message_like, json_values), max_size=5)},
            optional={"title": json_values, "system": json_values, "format": st.just("tui-chat")},
        ),
    )
)
async def test_any_json_imports_whole_or_not_at_all(
    store: Store, tmp_path: Path, document: Any
) -> None:
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(document))
    db = Path(str(store.path))
    before = _counts(db)
    try:
        conversation = await import_conversation(
            store, path, default_model="claude-sonnet-4-6", counter=get_counter()
        )
    except ImportError_ as exc:
        assert str(exc).startswith(f"{path}: ")
        assert _counts(db) == before
        return
    stored = await store.messages.history(conversation.id)
    assert len(stored) == len(document["messages"])
    assert [m.role for m in stored] == [m["role"] for m in document["messages"]]
    assert not any(m.status == "streaming" for m in stored)
