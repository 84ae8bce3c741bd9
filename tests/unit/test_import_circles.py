"""No import circles anywhere in the tree, ``TYPE_CHECKING`` imports included.

A circle hides in a ``TYPE_CHECKING`` block as easily as in a real import (a helper typed with
the concrete screen that builds it), and the 40-member rule cannot see it. The package's own
circles are also held by import-linter (``pyproject.toml``: the TUI's layers and the
``acyclic_siblings`` contract); this test walks every module of the package, the tests, the
benchmarks and the screenshot scripts, in this process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parents[2]
TREE = ("tui_chat", "tests", "benchmarks", "screenshots")
"""Every importable package of the repository."""


def circles(graph: Any, packages: Iterable[str]) -> list[list[str]]:
    """Every set of modules that import one another in a circle (Tarjan's strongly connected
    components of more than one module), sorted."""
    roots = set(packages)
    modules = sorted(m for m in graph.modules if m.split(".")[0] in roots)
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def imported(module: str) -> Iterator[str]:
        yield from sorted(graph.find_modules_directly_imported_by(module) & inside)

    for start in modules:  # iterative Tarjan: deep chains would pass the recursion limit
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, imported(start))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, imported(child)))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _graph(packages: Iterable[str], where: Path) -> Any:
    sys.path.insert(0, str(where))
    try:
        return grimp.build_graph(*packages, exclude_type_checking_imports=False, cache_dir=None)
    finally:
        sys.path.remove(str(where))


def test_no_import_circle_in_the_tree() -> None:
    present = [name for name in TREE if (ROOT / name).is_dir()]
    assert circles(_graph(present, ROOT), present) == []


def test_a_circle_through_type_checking_is_found(tmp_path: Path) -> None:
    package = tmp_path / "circled_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "screen.py").write_text("from circled_pkg.helper import Helper\n")
    (package / "helper.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from circled_pkg.screen import Screen\n"
        "class Helper: ...\n"
    )
    (package / "alone.py").write_text("import circled_pkg.helper\n")
    graph = _graph(["circled_pkg"], tmp_path)
    assert circles(graph, ["circled_pkg"]) == [["circled_pkg.helper", "circled_pkg.screen"]]
