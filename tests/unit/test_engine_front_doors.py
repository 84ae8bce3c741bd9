"""The engine is grouped by what it does, and each group is entered by one front door.

``tui_chat/engine/`` holds packages (``build``, ``compaction``, ``conversations``, ``files``,
``send``, ``tools``, ``transfer``, ``usage``) and, at its root, only the wiring
(``service``, ``parts``) and what every group shares (``events``, ``failures``,
``settings``, ``catalog``, ``maintenance``, ``watch``). Code outside the engine -- the TUI, the
CLI, the benchmarks, the screenshots -- imports a package's ``__init__`` (its front door) or a
root module, never a module inside a package. The tests may import inside modules to test them
alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "tui_chat" / "engine"
MAX_ROOT_MODULES = 10
"""Modules at the engine's root besides ``__init__``: the wiring and the shared kinds only."""


def engine_packages(engine: Path = ENGINE) -> set[str]:
    return {p.parent.name for p in engine.glob("*/__init__.py")}


def inside_imports(paths: list[Path], packages: set[str], root: Path = ROOT) -> list[str]:
    """Places in ``paths`` that import ``tui_chat.engine.<package>.<module>``."""
    found: list[str] = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[:2] == ["tui_chat", "engine"] and len(parts) > 3 and parts[2] in packages:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {module}")
    return found


def _outside_sources() -> list[Path]:
    sources = [
        path for path in sorted((ROOT / "tui_chat").rglob("*.py")) if ENGINE not in path.parents
    ]
    for folder in ("benchmarks", "screenshots"):
        sources += sorted((ROOT / folder).rglob("*.py"))
    return sources


def test_inside_import_check_can_fail(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from tui_chat.engine.build.tail import TailCache\n"
        "import tui_chat.engine.usage.usage_text\n"
        "from tui_chat.engine.usage import usd\n"
        "from tui_chat.engine.service import ChatService\n"
    )
    assert inside_imports([probe], {"build", "usage"}, tmp_path) == [
        "probe.py:1 tui_chat.engine.build.tail",
        "probe.py:2 tui_chat.engine.usage.usage_text",
    ]


def test_outside_the_engine_only_front_doors_are_imported() -> None:
    found = inside_imports(_outside_sources(), engine_packages())
    assert not found, "imports past a front door:\n" + "\n".join(found)


def test_every_front_door_names_what_it_exports() -> None:
    for package in sorted(engine_packages()):
        tree = ast.parse((ENGINE / package / "__init__.py").read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"engine/{package}/__init__.py says what the package does"
        exported = [
            node
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ]
        assert exported, f"engine/{package}/__init__.py has no __all__"


def test_the_engine_root_holds_only_the_wiring_and_shared_kinds() -> None:
    assert {"build", "conversations", "files", "transfer", "usage"} <= engine_packages()
    root_modules = sorted(p.stem for p in ENGINE.glob("*.py") if p.stem != "__init__")
    assert len(root_modules) <= MAX_ROOT_MODULES, f"the engine's root holds {root_modules}"
