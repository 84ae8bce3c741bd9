"""Layering rules that keep the core UI-free and start-up light (docs/design.md, "Layers")."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest


def modules_after(statement: str) -> set[str]:
    """The top-level packages imported by running ``statement`` in a fresh interpreter."""
    code = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


@pytest.mark.slow  # a real process
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


@pytest.mark.slow  # a real process
def test_core_is_pure() -> None:
    statement = (
        "import importlib, pkgutil, tui_chat.core as pkg\n"
        "for info in pkgutil.walk_packages(pkg.__path__, 'tui_chat.core.'):\n"
        "    importlib.import_module(info.name)"
    )
    loaded = modules_after(statement)
    assert not loaded & {"textual", "aiosqlite", "anthropic", "httpx", "httpx2"}


@pytest.mark.slow  # a real process
def test_cli_entry_point_imports_no_heavy_packages() -> None:
    loaded = modules_after("import tui_chat.cli")
    assert not loaded & {"textual", "anthropic", "aiosqlite", "tiktoken", "httpx2"}


ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tui_chat"
MAX_MODULE_LINES = 500
"""No module of the package grows past this: one concept per file (ARCHITECTURE.md)."""
MAX_COPIED_LINES = 10
"""A run of more identical significant lines than this in two places is a copied block."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.slow  # a real process
def test_import_contracts_hold() -> None:
    """The import-linter contracts in pyproject.toml (layers, config, UI-free, pure core)."""
    pytest.importorskip("importlinter")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_no_module_over_the_line_limit() -> None:
    too_long = {
        str(path.relative_to(ROOT)): count
        for path in _modules()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines: {too_long}"


def _significant(path: Path) -> list[tuple[int, str]]:
    """Lines that carry code: stripped, no blanks, comments, imports or lone punctuation."""
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = " ".join(raw.split())
        if not line or line.startswith(("#", "import ", "from ")) or len(line) <= 2:
            continue
        out.append((number, line))
    return out


def copied_blocks(paths: list[Path], run: int, root: Path = ROOT) -> list[str]:
    """Places where ``run`` identical significant lines stand in two places."""
    seen: dict[tuple[str, ...], str] = {}
    found: list[str] = []
    for path in paths:
        lines = _significant(path)
        last_reported = -1
        for start in range(len(lines) - run + 1):
            window = tuple(text for _, text in lines[start : start + run])
            place = f"{path.relative_to(root)}:{lines[start][0]}"
            first = seen.setdefault(window, place)
            if first != place and start > last_reported:
                found.append(f"{place} repeats {first}")
                last_reported = start + run
    return found


def test_copied_block_check_can_fail(tmp_path: Path) -> None:
    body = "\n".join(f"value_{i} = compute({i})" for i in range(MAX_COPIED_LINES + 1))
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text(body)
    two.write_text("x = 1\n" + body)
    assert copied_blocks([one, two], MAX_COPIED_LINES + 1, tmp_path)
    assert not copied_blocks([one], MAX_COPIED_LINES + 1, tmp_path)


def test_no_copied_blocks_in_the_package() -> None:
    found = copied_blocks(_modules(), MAX_COPIED_LINES + 1)
    assert not found, "copied blocks:\n" + "\n".join(found)


def test_cli_is_typed_without_any() -> None:
    cli = PACKAGE / "cli"
    sources = sorted(cli.rglob("*.py")) if cli.is_dir() else [PACKAGE / "cli.py"]
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sources
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bAny\b", line)
    ]
    assert not offenders, f"Any in the CLI: {offenders}"


MAX_CLASS_MEMBERS = 40
"""No class of the package has more members than this, counting what its bases defined in the
package add: cohesion, not inheritance chains."""


def class_members(node: ast.ClassDef) -> set[str]:
    """What a class body defines: methods, properties, nested classes and class attributes
    (a dataclass's fields are its data, not members; dunder names are left out)."""
    decorators = [ast.unparse(d) for d in node.decorator_list]
    dataclass = any(d.split("(")[0].endswith("dataclass") for d in decorators)
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
        elif (
            isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and (not dataclass or "ClassVar" in ast.unparse(item.annotation))
        ):
            names.add(item.target.id)
    return {name for name in names if not (name.startswith("__") and name.endswith("__"))}


def _base_names(node: ast.ClassDef) -> list[str]:
    """The simple names of a class's bases (``Screen``, ``widgets.Static`` -> ``Static``)."""
    names = []
    for base in node.bases:
        if isinstance(base, ast.Subscript):  # Screen[None]
            base = base.value
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def big_classes(paths: list[Path], limit: int, root: Path = ROOT) -> dict[str, int]:
    """Classes of ``paths`` with more than ``limit`` members, counting what every base class
    defined in ``paths`` adds (a chain of package classes is one class to its reader), with
    their count. A base is found by its name; one named like a class of ``paths`` counts."""
    classes: list[tuple[Path, ast.ClassDef]] = [
        (path, node)
        for path in paths
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]
    by_name: dict[str, list[ast.ClassDef]] = {}
    for _path, node in classes:
        by_name.setdefault(node.name, []).append(node)

    def members(node: ast.ClassDef, seen: set[int]) -> set[str]:
        seen.add(id(node))
        found = class_members(node)
        for name in _base_names(node):
            for base in by_name.get(name, []):
                if id(base) not in seen:
                    found |= members(base, seen)
        return found

    found: dict[str, int] = {}
    for path, node in classes:
        if len(counted := members(node, set())) > limit:
            found[f"{path.relative_to(root)}:{node.name}"] = len(counted)
    return found


def test_member_check_can_fail(tmp_path: Path) -> None:
    methods = "".join(f"    def m{i}(self) -> None: ...\n" for i in range(MAX_CLASS_MEMBERS))
    big = tmp_path / "big.py"
    big.write_text(f"class Big:\n    LIMIT = 1\n    size: int = 2\n{methods}")
    fields = "".join(f"    f{i}: int = {i}\n" for i in range(MAX_CLASS_MEMBERS + 1))
    data = tmp_path / "data.py"
    data.write_text(f"from dataclasses import dataclass\n\n@dataclass\nclass Data:\n{fields}")
    assert big_classes([big, data], MAX_CLASS_MEMBERS, tmp_path) == {
        "big.py:Big": MAX_CLASS_MEMBERS + 2
    }


def test_member_check_counts_the_package_bases(tmp_path: Path) -> None:
    half = MAX_CLASS_MEMBERS // 2 + 1
    lower = "".join(f"    def low{i}(self) -> None: ...\n" for i in range(half))
    upper = "".join(f"    def up{i}(self) -> None: ...\n" for i in range(half))
    base = tmp_path / "base.py"
    base.write_text(f"from textual.screen import Screen\n\nclass View(Screen[None]):\n{lower}")
    top = tmp_path / "top.py"
    top.write_text(
        "from base import View\n\n"
        f"class Main(View):\n    def low0(self) -> None: ...\n{upper}"  # an override is one
    )
    assert big_classes([base, top], MAX_CLASS_MEMBERS, tmp_path) == {"top.py:Main": 2 * half}
    # Each alone is under the limit: only the chain is over it.
    assert big_classes([top], MAX_CLASS_MEMBERS, tmp_path) == {}


def test_no_class_over_the_member_limit() -> None:
    found = big_classes(_modules(), MAX_CLASS_MEMBERS)
    assert not found, f"classes over {MAX_CLASS_MEMBERS} members: {found}"


ENGINE_INSIDES = {"_store", "_client", "_worker", "_session", "_engine", "_counter"}
"""What ChatService holds for its own use (underscored): the front ends go through its
use-case services (conversations, messages, requests, costs, drafts, summaries, branches,
transfer, maintenance), never through these."""

ROOT_MEMBERS = 15
"""ChatService is a small root: construction, sending and the services it holds, no more."""


def test_chat_service_is_a_small_root() -> None:
    tree = ast.parse((PACKAGE / "engine" / "service.py").read_text(encoding="utf-8"))
    (root,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ChatService"]
    members = class_members(root)
    assert len(members) <= ROOT_MEMBERS, f"ChatService has {len(members)}: {sorted(members)}"


def engine_insides_reached(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Places in ``paths`` that read ``service.<one of ENGINE_INSIDES>``."""
    found: list[str] = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute) or node.attr not in ENGINE_INSIDES:
                continue
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            if name in ("service", "_service"):
                found.append(f"{path.relative_to(root)}:{node.lineno} service.{node.attr}")
    return found


def test_front_ends_reach_no_engine_insides(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("async def f(app):\n    await app.service._store.messages.get(1)\n")
    assert engine_insides_reached([probe], tmp_path) == ["probe.py:2 service._store"]
    front_ends = sorted((PACKAGE / "tui").rglob("*.py")) + sorted((PACKAGE / "cli").rglob("*.py"))
    found = engine_insides_reached(front_ends)
    assert not found, "the front ends reach inside the engine:\n" + "\n".join(found)
