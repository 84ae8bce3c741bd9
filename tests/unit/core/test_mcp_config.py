"""``mcp.json`` in Claude Desktop's format: servers, ``${VAR}``, secrets, errors naming lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tui_chat.child_env import child_env
from tui_chat.config import load_config
from tui_chat.core.tools import (
    BASE_ENV_KEYS,
    McpConfigError,
    namespaced,
    parse_mcp_json,
)

DESKTOP = """{
  "mcpServers": {
    "files": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"],
      "env": {"TOKEN": "${FILES_TOKEN}", "MODE": "${MODE:-ro}"}
    },
    "search": {
      "type": "http",
      "url": "https://example.com/mcp",
      "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}
    }
  }
}
"""


def test_claude_desktops_file_is_read_with_variables_expanded() -> None:
    env = {"FILES_TOKEN": "f-1", "SEARCH_TOKEN": "s-2"}
    files, search = parse_mcp_json(DESKTOP, env)
    assert (files.name, files.transport, files.command) == ("files", "stdio", "npx")
    assert files.args[-1] == "/home/me"
    assert dict(files.env) == {"TOKEN": "f-1", "MODE": "ro"}
    assert files.problem is None and files.line == 3
    assert (search.transport, search.url) == ("http", "https://example.com/mcp")
    assert dict(search.headers) == {"Authorization": "Bearer s-2"}
    assert "f-1" not in repr(files) and "s-2" not in repr(search)  # secrets never shown


def test_an_unset_variable_fails_that_server_only() -> None:
    files, search = parse_mcp_json(DESKTOP, {"SEARCH_TOKEN": "s"})
    assert files.problem == "env.TOKEN: ${FILES_TOKEN} is not set"
    assert search.problem is None


def test_the_api_key_is_never_expanded_into_a_server() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "a": {"command": "x", "env": {"K": "${ANTHROPIC_API_KEY}"}},
                "b": {"command": "x", "env": {"K": "${COPY}"}},
            }
        }
    )
    a, b = parse_mcp_json(text, {"ANTHROPIC_API_KEY": "sk-1", "COPY": "sk-1"}, ["sk-1"])
    assert a.problem and "would pass the API key" in a.problem
    assert b.problem and "holds the API key" in b.problem
    assert "sk-1" not in json.dumps(dict(a.env))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}', "mcp.json:3: invalid JSON"),
        ('{\n  "mcpServers": [1]\n}', "mcp.json:2: expected"),
        ('{"mcpServers": {\n\n "a": {"args": ["x"]}}}', "mcp.json:3: server 'a': needs"),
        (
            '{"mcpServers": {\n "a": {"command": "x", "nope": 1}}}',
            "mcp.json:2: server 'a': unknown",
        ),
        ('{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}', "url"),
        ('{"mcpServers": {"a": {"command": "x", "callTimeout": -1}}}', "callTimeout"),
    ],
)
def test_a_malformed_file_is_one_error_naming_its_line(text: str, expected: str) -> None:
    with pytest.raises(McpConfigError) as error:
        parse_mcp_json(text, {})
    assert expected in str(error.value)


def test_a_child_gets_a_few_variables_and_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PATH": "/bin", "HOME": "/h", "LANG": "C", "ANTHROPIC_API_KEY": "sk", "OTHER": "x"}
    monkeypatch.setattr(os, "environ", env)
    assert child_env({"OWN": "1"}, only=BASE_ENV_KEYS) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
        "OWN": "1",
    }
    assert "ANTHROPIC_API_KEY" not in child_env({"ANTHROPIC_API_KEY": "sk"}, only=BASE_ENV_KEYS)


def test_names_are_namespaced_within_the_apis_limit() -> None:
    assert namespaced("files", "read_file") == "files__read_file"
    assert namespaced("my.server", "a b") == "my_server__a_b"
    long_a, long_b = namespaced("s", "x" * 80 + "a"), namespaced("s", "x" * 80 + "b")
    assert len(long_a) == 64 and long_a != long_b


def test_load_config_reads_mcp_json_beside_config_toml(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    (tmp_path / "mcp.json").write_text(DESKTOP)
    loaded = load_config(config, env={"FILES_TOKEN": "f", "SEARCH_TOKEN": "s"})
    assert [s.name for s in loaded.mcp_servers] == ["files", "search"]
    assert loaded.mcp_error is None


def test_a_malformed_mcp_json_leaves_the_chat_working(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    (tmp_path / "mcp.json").write_text('{\n  "mcpServers": {\n    "a": \n}')
    loaded = load_config(config, env={})
    assert loaded.mcp_servers == ()
    assert loaded.mcp_error and f"{tmp_path / 'mcp.json'}:4: invalid JSON" in loaded.mcp_error
    assert loaded.mcp_error in loaded.warnings
