"""Layering rules that keep the core UI-free and start-up light (DESIGN.md section 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def modules_after(statement: str) -> set[str]:
    """The top-level packages imported by running ``statement`` in a fresh interpreter."""
    code = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


@pytest.mark.parametrize(
    "package", ["tui_chat.core", "tui_chat.store", "tui_chat.llm", "tui_chat.engine"]
)
def test_ui_free_layers_do_not_import_textual(package: str) -> None:
    statement = (
        "import importlib, pkgutil\n"
        f"pkg = importlib.import_module({package!r})\n"
        "for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "    importlib.import_module(info.name)"
    )
    loaded = modules_after(statement)
    assert "textual" not in loaded
    assert "rich" not in loaded


def test_core_is_pure() -> None:
    statement = (
        "import importlib, pkgutil, tui_chat.core as pkg\n"
        "for info in pkgutil.walk_packages(pkg.__path__, 'tui_chat.core.'):\n"
        "    importlib.import_module(info.name)"
    )
    loaded = modules_after(statement)
    assert not loaded & {"textual", "aiosqlite", "anthropic", "httpx", "httpx2"}


def test_cli_entry_point_imports_no_heavy_packages() -> None:
    loaded = modules_after("import tui_chat.cli")
    assert not loaded & {"textual", "anthropic", "aiosqlite", "tiktoken", "httpx2"}
