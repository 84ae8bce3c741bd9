"""The smaller failures of an adversarial pass, each with one clear outcome:

- a 5,000-deep ``config.toml`` is one line ("nested too deeply"), not a RecursionError traceback;
- an API key holding a newline is refused at start, before any request ("the API key contains
  a newline"); it was retried for 53 s and reported as a network problem;
- absurd or negative usage figures from an endpoint are clamped and flagged (a reply once cost
  $22,049,999,985);
- a malformed web-search result's pydantic warning goes to the log file, not to stderr (the
  TUI's screen), and Python warnings in general do too.
"""

from __future__ import annotations

import json
import stat
import warnings
from pathlib import Path

import pytest

from tests.reliability.helpers import (
    MARKER_KEY,
    StandaloneFake,
    run_here,
    write_config,
)
from tui_chat.core.models import USAGE_CEILING


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_config_nested_5000_deep_is_one_clear_line(isolated_env: Path) -> None:
    write_config(isolated_env, "[api]\nmax_retries = " + "[" * 5_000 + "]" * 5_000 + "\n")
    done = run_here(isolated_env, "list")
    assert done.returncode != 0
    line = _one_line(done.stderr)
    assert "config.toml" in line and "nested too deeply" in line, line


@pytest.mark.parametrize("where", ["environment", "config"])
def test_a_key_with_a_newline_is_refused_at_start(
    isolated_env: Path, standalone_fake: StandaloneFake, where: str
) -> None:
    bad = MARKER_KEY + "\nX-Injected: 1"
    if where == "config":
        write_config(isolated_env, f"[api]\nmax_retries = 3\napi_key = {json.dumps(bad)}\n")
        (isolated_env / "config" / "config.toml").chmod(0o600)
        key = None
    else:
        write_config(isolated_env, "[api]\nmax_retries = 3\n")
        key = bad
    standalone_fake.reset()
    done = run_here(isolated_env, "send", "hello", key=key, base_url=standalone_fake.base_url)
    assert done.returncode != 0
    line = _one_line(done.stderr)
    assert "the API key contains a newline" in line, line
    assert MARKER_KEY not in line
    assert standalone_fake.requests() == []


@pytest.mark.slow  # the standalone fake server
def test_absurd_usage_figures_are_clamped_and_flagged(
    isolated_env: Path, standalone_fake: StandaloneFake, tmp_path: Path
) -> None:
    write_config(isolated_env)
    standalone_fake.reset()
    standalone_fake.push(usage={"input_tokens": -5, "output_tokens": 9_000_000_000_000}, times=1)
    url = standalone_fake.base_url
    done = run_here(isolated_env, "send", "how much?", "--json", base_url=url)
    assert done.returncode == 0, done.stderr
    assert "usage figures out of range" in done.stderr and "clamped" in done.stderr
    cid = json.loads(done.stdout)["conversation_id"]
    shown = json.loads(run_here(isolated_env, "show", cid, "--json").stdout)
    usage = shown["messages"][-1]["usage"]
    assert usage["input_tokens"] == 0 and usage["output_tokens"] == USAGE_CEILING
    report = run_here(isolated_env, "usage", "--json")
    assert report.returncode == 0, report.stderr
    assert "22,049,999,985" not in report.stdout


def test_a_malformed_web_search_result_warns_into_the_log_not_stderr(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from anthropic._models import construct_type
    from anthropic.types import Message

    from tui_chat.llm.client import _result_from_snapshot

    message = construct_type(
        type_=Message,
        value={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [{"type": "web_search_result", "url": 5, "title": None}],
                },
                {"type": "text", "text": "found it"},
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 2},
        },
    )
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        result = _result_from_snapshot(message)
    assert [str(w.message)[:60] for w in escaped] == []
    assert result.text == "found it"
    assert result.content[0]["content"] == [{"type": "web_search_result", "url": 5}]
    assert any("could not read as typed" in r.getMessage() for r in caplog.records)


def test_warnings_and_log_records_go_to_a_private_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    from tui_chat.cli.logs import send_logs_to_file

    target = tmp_path / "state" / "tui-chat.log"
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        with warnings.catch_warnings():  # pytest's own recording of warnings is set aside
            warnings.simplefilter("always")
            send_logs_to_file(target)
            assert not target.exists()  # made when there is something to log
            warnings.warn("a library's warning", UserWarning, stacklevel=1)
            logging.getLogger("tui_chat.llm.plain").warning("the endpoint sent something odd")
    finally:
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
    err = capsys.readouterr().err
    assert "a library's warning" not in err and "odd" not in err
    text = target.read_text()
    assert "a library's warning" in text and "the endpoint sent something odd" in text
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
