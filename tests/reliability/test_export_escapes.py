"""File exports keep stored text inert: after a reply holding escape sequences, ``export -o
h.md`` and ``h.html`` held them raw (16 ESC/BEL sequences; the export to stdout was inert).
Markdown and HTML files show them as visible stand-ins, as the screen does; a JSON file holds
no raw control character either (DEL and C1 escaped as ``\\u…`` like C0) and reads back the
exact stored text, so an import of it is the same conversation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reliability.helpers import CONTROL_CHARS, run_here, write_config

HOSTILE = (
    "before \x1b]0;pwned\x07 \x1b[2J\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x9b31m\x7f\x08 after"
)
MESSAGES = [
    {"role": "user", "content": f"prompt {HOSTILE}"},
    {"role": "assistant", "content": f"reply {HOSTILE}\n\n```\ncode {HOSTILE}\n```\n"},
]


@pytest.fixture
def hostile(isolated_env: Path, tmp_path: Path) -> tuple[Path, str]:
    write_config(isolated_env)
    source = tmp_path / "hostile.json"
    body = {"title": f"title {HOSTILE}", "system": f"system {HOSTILE}", "messages": MESSAGES}
    source.write_text(json.dumps(body))
    done = run_here(isolated_env, "import", str(source), "--json")
    assert done.returncode == 0, done.stderr
    return isolated_env, json.loads(done.stdout)["id"]


def _raw(text: str) -> list[str]:
    return [hex(ord(c)) for c in text if c in CONTROL_CHARS]


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_markdown_and_html_files_hold_no_control_character(
    hostile: tuple[Path, str], tmp_path: Path, suffix: str
) -> None:
    home, cid = hostile
    target = tmp_path / f"h.{suffix}"
    done = run_here(home, "export", cid, "-o", str(target))
    assert done.returncode == 0, done.stderr
    text = target.read_text(encoding="utf-8")
    assert _raw(text) == []
    assert "pwned" in text and "after" in text
    assert text.count("␛") >= 4 * 5  # shown, not dropped: title, system, prompt, reply, code


def test_a_json_file_escapes_every_control_character_and_reads_back_the_text(
    hostile: tuple[Path, str], tmp_path: Path
) -> None:
    home, cid = hostile
    target = tmp_path / "h.json"
    done = run_here(home, "export", cid, "-o", str(target))
    assert done.returncode == 0, done.stderr
    raw = target.read_text(encoding="utf-8")
    assert _raw(raw) == []
    assert "\\u009b" in raw and "\\u007f" in raw and "\\u001b" in raw
    data = json.loads(raw)
    assert data["conversation"]["title"] == f"title {HOSTILE}"
    assert [m["text"] for m in data["messages"]] == [m["content"] for m in MESSAGES]
    again = run_here(home, "import", str(target), "--force", "--json")
    assert again.returncode == 0, again.stderr
    shown = json.loads(run_here(home, "show", json.loads(again.stdout)["id"], "--json").stdout)
    assert [m["text"] for m in shown["messages"]] == [m["content"] for m in MESSAGES]
