"""No child process gets the API key or the endpoint's settings: every process tui-chat starts
is given :func:`tui_chat.child_env.child_env` (a walk of the package finds each call that
starts one), and the clipboard tools, run for real as stand-ins on ``PATH``, see neither
``ANTHROPIC_API_KEY`` nor a variable holding the key under another name.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from tests.reliability.helpers import MARKER_KEY, ROOT
from tui_chat import child_env
from tui_chat.tui import clipboard

PACKAGE = ROOT / "tui_chat"

_STARTERS = {
    "subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "os": {"system", "popen", "posix_spawn", "posix_spawnp"}
    | {f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")},
}
_NO_ENV = {"system", "popen", "getoutput"}  # no way to give them an environment: never used
_PARAMETERS = {"StdioServerParameters"}  # an MCP stdio server: the SDK starts it with this env


def _starts_a_process(call: ast.Call, imported: dict[str, str]) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = func.value.id
        if func.attr in _STARTERS.get(module, ()):
            return f"{module}.{func.attr}"
    if isinstance(func, ast.Name) and func.id in imported:
        return imported[func.id]
    if isinstance(func, ast.Name) and func.id in _PARAMETERS:
        return f"mcp.{func.id}"
    return None


def _given_child_env(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "env":
            value = keyword.value
            return isinstance(value, ast.Call) and (
                (isinstance(value.func, ast.Name) and value.func.id == "child_env")
                or (isinstance(value.func, ast.Attribute) and value.func.attr == "child_env")
            )
    return False


def test_every_process_tui_chat_starts_is_given_the_child_environment() -> None:
    found: list[str] = []
    bare: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name: f"{node.module}.{alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module in _STARTERS
            for alias in node.names
            if alias.name in _STARTERS[node.module]
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (name := _starts_a_process(node, imported)):
                where = f"{path.relative_to(ROOT)}:{node.lineno} {name}"
                found.append(where)
                if name.rsplit(".", 1)[1] in _NO_ENV or not _given_child_env(node):
                    bare.append(where)
    assert found, "the walk found no process started: it looks in the wrong place"
    assert bare == [], "started without env=child_env(...): " + ", ".join(bare)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-ins for the X11 clipboard tools that write their environment to a file."""
    folder = tmp_path / "bin"
    folder.mkdir()
    seen = tmp_path / "seen"
    seen.mkdir()
    for name in ("xclip", "xsel"):
        tool = folder / name
        tool.write_text(f'#!/bin/sh\nenv > "{seen}/{name}.$$"\ncat >/dev/null\necho pasted\n')
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(clipboard.sys, "platform", "linux")
    return seen


def test_the_clipboard_tools_never_see_the_key(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", MARKER_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/private-gateway")
    from_config = "sk-ant-api03-FROM-CONFIG-TOML-0a1b2c"
    monkeypatch.setenv("MY_SCRIPT_TOKEN", f"Bearer {from_config}")
    monkeypatch.setattr(child_env, "_secrets", set())
    child_env.hide(from_config)  # as the CLI does with the key it was configured with
    assert clipboard.write_clipboard("hello") == "xclip"
    assert clipboard.read_clipboard().text.strip() == "pasted"
    dumps = sorted(tools.iterdir())
    assert len(dumps) >= 2  # a copy and a paste (which asks for the types first)
    for dump in dumps:
        seen = dump.read_text()
        assert "DISPLAY=:99" in seen  # the user's environment is passed on
        assert MARKER_KEY not in seen and from_config not in seen, dump.name
        assert "ANTHROPIC_" not in seen and "private-gateway" not in seen, dump.name


def test_extra_variables_cannot_bring_a_secret_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_env, "_secrets", set())
    child_env.hide(MARKER_KEY)
    monkeypatch.setenv("TUI_CHAT_HOME", "/somewhere")
    env = child_env.child_env({"SERVER_PORT": "8080", "LEAK": MARKER_KEY})
    assert env["SERVER_PORT"] == "8080" and env["TUI_CHAT_HOME"] == "/somewhere"
    assert "LEAK" not in env
