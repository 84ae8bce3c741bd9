"""No test reaches a private attribute of the engine or the store.

A test that reads ``service._store`` is welded to how the service is put together: it breaks
when the wiring changes and tests what no user can reach. Tests take the parts they need from
the seam instead (``tests/seam.py``: ``engine_of(service).store``, ``.worker``, ``.counter``,
``.files``, ``.clock``, or the ``make_engine`` fixture). This walks every test module for an
attribute read ``x._name`` where ``_name`` is a private attribute or method of a class of
``tui_chat/engine`` or ``tui_chat/store`` (``self`` and ``cls`` are a class's own business;
what a test reaches through a module it imported from elsewhere, or inside another object's
private part, is not the engine's).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSIDES = ("engine", "store")
SHARED = frozenset(
    {"_active", "_lock", "_pruning", "_ready", "_render", "_run", "_stderr", "_task", "_tasks"}
    | {"_timeout", "_work"}
)
"""Private names the engine's classes share with Textual's (a ``Timer``'s ``_task``): a reach
to one of these counts only through an engine-looking owner (see :data:`OWNERS`)."""
OWNERS = ("service", "store", "engine", "worker", "session", "requests", "sql", "parts")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def engine_privates(packages: Iterable[Path]) -> set[str]:
    """The private attributes (``self._x``) and methods of every class in ``packages``."""
    names: set[str] = set()
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                    and _private(node.attr)
                ):
                    names.add(node.attr)
                elif isinstance(node, ast.ClassDef):
                    names.update(
                        item.name
                        for item in node.body
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                        and _private(item.name)
                    )
    return names


def _imported_modules(tree: ast.Module) -> set[str]:
    """Names a module binds by importing a module (``from tui_chat.core import ledger``)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            bound.update(alias.asname or alias.name for alias in node.names)
    return bound


def _root(node: ast.expr) -> tuple[str | None, bool]:
    """The name an attribute chain starts from, and whether it passes a private hop."""
    through_private = False
    while isinstance(node, ast.Attribute):
        through_private = through_private or _private(node.attr)
        node = node.value
    while isinstance(node, ast.Call | ast.Subscript | ast.Await):
        node = node.func if isinstance(node, ast.Call) else node.value
        while isinstance(node, ast.Attribute):
            node = node.value
    return (node.id if isinstance(node, ast.Name) else None), through_private


def private_reaches(paths: Iterable[Path], privates: set[str], root: Path = ROOT) -> list[str]:
    """Every ``x._name`` read in ``paths`` with ``_name`` one of ``privates``."""
    found: list[str] = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = _imported_modules(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in privates:
                continue
            name, through_private = _root(node.value)
            if name in ("self", "cls") or through_private:
                continue
            if isinstance(node.value, ast.Name) and name in modules:
                continue  # a module's own private (``ledger._render``), not an object's
            owner = ast.unparse(node.value)
            if node.attr in SHARED and not any(word in owner for word in OWNERS):
                continue  # Textual's object, most likely (``timer._task``)
            found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    return sorted(
        found,
        key=lambda line: (
            line.split(" ")[0].rsplit(":", 1)[0],
            int(line.split(" ")[0].rsplit(":", 1)[1]),
        ),
    )


def test_the_reach_check_can_fail(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from tui_chat.core import ledger\n"
        "async def test(service, app, counter):\n"
        "    await service._store.messages.get(1)\n"
        "    app.service._worker.poke()\n"
        "    ledger._render.cache_info()\n"  # a core module's private: not the engine's
        "    counter._cache._store\n"  # inside another object's private part
        "    timer._task.cancel()\n"  # a name Textual's objects share: not through the engine
        "    service.requests._task\n"
        "class Fake:\n"
        "    def f(self):\n"
        "        return self._store\n"
    )
    privates = {"_store", "_worker", "_render", "_task"}
    assert private_reaches([probe], privates, tmp_path) == [
        "test_probe.py:3 service._store",
        "test_probe.py:4 app.service._worker",
        "test_probe.py:8 service.requests._task",
    ]


def test_no_test_reaches_inside_the_engine_or_the_store() -> None:
    privates = engine_privates(ROOT / "tui_chat" / name for name in INSIDES)
    assert {"_store", "_worker", "_sql"} <= privates  # the walk sees the classes
    found = private_reaches(sorted((ROOT / "tests").rglob("*.py")), privates)
    assert not found, "tests reach private attributes of the engine or store:\n" + "\n".join(found)
