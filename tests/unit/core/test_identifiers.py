"""Identifier extraction and retention (docs/design.md, "The worker": identifiers_kept)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tui_chat.core import identifiers
from tui_chat.core.identifiers import extract_identifiers, retention


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Read /Users/me/project/calculator.py now", "/Users/me/project/calculator.py"),
        ("then open app/workflow.py and docs/cli.md", "app/workflow.py"),
        ("edit test_calculator.py please", "test_calculator.py"),
        ("config at ~/.config/tui-chat/config.toml", "~/.config/tui-chat/config.toml"),
        ("run pytest tests/ again", "tests/"),
        ("see https://example.com/docs/a?b=1.", "https://example.com/docs/a?b=1"),
        ("the threshold is 8,000 tokens", "8,000 tokens"),
        ("keep 6 messages", "6 messages"),
        ("Python 3.13 added a JIT", "3.13"),
        ("timeout 60s", "60s"),
        ("at 75% of the window", "75%"),
        ("bump to v1.2.3 today", "v1.2.3"),
        ("released 2.0.1-rc1", "2.0.1-rc1"),
        ("call get_user_profile() first", "get_user_profile()"),
        ("the userId field", "userId"),
        ("class ContextManager holds it", "ContextManager"),
        ("constant WINDOW_KEEP is 800", "WINDOW_KEEP"),
        ("use os.path.join here", "os.path.join"),
        ("the model claude-haiku-4-5 is cheap", "claude-haiku-4-5"),
        ("pass --json to list", "--json"),
        ("run `SELECT * FROM users` first", "SELECT * FROM users"),
        ('it raises "Cannot divide by zero"', "Cannot divide by zero"),
        ("updated 2024-05-27T14:42:18Z", "2024-05-27T14:42:18Z"),
        ("8/8 tests pass", "8/8"),
        ("cost $5 in total", "$5"),
        ("a private _helper name", "_helper"),
    ],
)
def test_extracts_each_kind(text: str, expected: str) -> None:
    assert expected in extract_identifiers(text)


def test_korean_text() -> None:
    text = (
        "running_summary 는 한글 400자·영문 700자 이하로 한다. 3턴마다 요약하고 "
        "app/workflow.py 를 연다. 8000을 넘으면 「요약 시작」이라고 표시한다."
    )
    found = extract_identifiers(text)
    assert {"running_summary", "400자", "700자", "3턴", "app/workflow.py", "8000"} <= found
    assert "요약 시작" in found
    # Plain Korean words are not identifiers.
    assert not any(word in found for word in ("한글", "요약하고", "표시한다"))


@pytest.mark.parametrize(
    "text",
    [
        "The cat sat on the mat.",
        "item 3 of a list",
        "yes/no and and/or questions",
        "It's Bob's idea, isn't it?",
        "e.g. this one",
        "a well-known long-term plan",
    ],
)
def test_plain_prose_has_no_identifiers(text: str) -> None:
    assert extract_identifiers(text) == set()


def test_url_is_one_identifier_not_its_pieces() -> None:
    found = extract_identifiers("docs: https://example.com/a/b.py")
    assert found == {"https://example.com/a/b.py"}


def test_retention_counts_kept_identifiers() -> None:
    sources = [
        "Edit src/app.py and call load_config() with timeout 60 s.",
        "The limit is 8,000 tokens; see https://example.com/limits.",
    ]
    summary = "Edited src/app.py (load_config() now uses a 60 seconds timeout; limit 8000)."
    kept, total = retention(sources, summary)
    assert total == 5
    assert kept == 4  # the URL was dropped


def test_retention_is_case_insensitive_and_whole_word() -> None:
    assert retention(["use MAX_RETRIES"], "max_retries is set") == (1, 1)
    assert retention(["port 80"], "port 8080") == (0, 1)
    assert retention(["value 10"], "value 1.10") == (0, 1)
    assert retention(["see app.py"], "see myapp.py") == (0, 1)


def test_retention_of_korean_numbers_followed_by_particles() -> None:
    assert retention(["제한은 8,000 토큰이다"], "8000을 넘으면 요약") == (1, 1)


def test_retention_without_identifiers() -> None:
    assert retention(["hello there", "how are you?"], "greetings") == (0, 0)
    assert retention([], "anything") == (0, 0)


def test_identical_text_keeps_everything() -> None:
    text = (
        "Files: src/a.py, tests/test_a.py; version 1.4.2; 12 retries; "
        "https://x.org/y; `make check`; userName; 3.5 s"
    )
    kept, total = retention([text], text)
    assert total > 5
    assert kept == total


_pieces = st.sampled_from(
    [
        "src",
        "/",
        ".",
        "py",
        "_",
        "-",
        "a",
        "B",
        "x",
        "1",
        "23",
        "4.5",
        "%",
        "s",
        ":",
        "`",
        '"',
        "'",
        " ",
        " ",
        "\n",
        "http",
        "://",
        "v",
        "자",
        "요약",
        ",",
        "(",
        ")",
        "~",
        "--",
        "000",
    ]
)


@given(st.one_of(st.text(max_size=200), st.lists(_pieces, max_size=60).map("".join)))
def test_extraction_never_fails_and_text_keeps_its_own_identifiers(text: str) -> None:
    found = extract_identifiers(text)
    assert all(item and item.strip() == item for item in found)
    kept, total = retention([text], text)
    assert kept == total


_texts = st.one_of(st.text(max_size=200), st.lists(_pieces, max_size=60).map("".join))


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_texts)
@example("call run() now")
@example("see WWW.example.org or ftp://h/x")
@example("edit a.PY, b.tsx and c.py-x")
@example("at 12:30 on 3/4, 2024-01-02")
@example("v2 and 1.2.3, os.path, -x --json a1-b2 camelCase Pascal9Case _x")
def test_a_pass_is_skipped_only_when_it_cannot_match(text: str) -> None:
    # Each pass runs only when one of its characters and its hint occur: both must be in
    # every match of the pass, or skipping it would lose identifiers.
    for pattern, _kind, _inner, needs, hint in identifiers._PASSES:
        match = pattern.search(text)
        if match is None:
            continue
        if needs and not needs & set(text):
            # only the passes whose characters are ASCII digits may see a non-ASCII digit
            assert needs == identifiers._DIGITS and not any(c in needs for c in match.group(0))
            continue
        assert hint is None or hint.search(text), (pattern.pattern, text)


def _present_by_pattern(haystack: str, needle: str, number: bool) -> bool:
    """The whole-word check as the regular expression it stands for."""
    if not needle:
        return False
    if number:
        pattern = r"(?<![A-Za-z0-9_.])(?<!\d,)" + re.escape(needle) + r"(?![0-9]|\.\d)"
    else:
        before = r"(?<![A-Za-z0-9_])" if needle[0].isalnum() or needle[0] == "_" else ""
        after = r"(?![A-Za-z0-9_])" if needle[-1].isalnum() or needle[-1] == "_" else ""
        pattern = before + re.escape(needle) + after
    return re.search(pattern, haystack) is not None


_near = st.text(alphabet="ab1_2.,-:/ 9x٣é", max_size=30)


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(_near, _near, st.booleans())
def test_presence_is_the_whole_word_pattern(haystack: str, needle: str, number: bool) -> None:
    expected = _present_by_pattern(haystack, needle, number)
    assert identifiers._present(haystack, needle, number) == expected
    start = len(haystack) // 3
    inner = haystack[start : start + 4]  # a needle that occurs, with neighbours of all kinds
    assert identifiers._present(haystack, inner, number) == _present_by_pattern(
        haystack, inner, number
    )


@settings(deadline=None)  # no time limit per example: the machine is shared
@given(st.lists(_texts, max_size=6))
def test_a_scan_memo_answers_as_scan_does(texts: list[str]) -> None:
    memo = identifiers.ScanMemo()
    for text in [*texts, *texts]:
        assert memo(text) == identifiers.scan(text)
    summary = " ".join(texts[::2])
    assert retention(texts, summary, memo) == retention(texts, summary)
