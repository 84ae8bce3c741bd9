"""The chat screen's parts call one another only through what each makes public.

A helper the chat screen holds (the reply's turn, the summary and conversation commands, the
outside watch) takes the screen through a small protocol of public names; no module of the
TUI calls or reads another object's underscored name (Textual's own internals, reached by
widgets that extend its Markdown, are not parts of the screen: ``widgets/`` is left out).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUI = ROOT / "tui_chat" / "tui"
ALLOWED = {"os._exit"}
"""Underscored names of the standard library that are its public API."""


def private_reaches(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Places in ``paths`` that reach ``<something other than self>._name``."""
    found: list[str] = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if node.attr.startswith("__"):
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
                continue
            if (text := ast.unparse(node)) not in ALLOWED:
                found.append(f"{path.relative_to(root)}:{node.lineno} {text}")
    return found


def test_private_reach_check_can_fail(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "class Flow:\n"
        "    def go(self, screen):\n"
        "        screen._send_edit(1)\n"
        "        self._mine()\n"
        "        super()._theirs()\n"
    )
    assert private_reaches([probe], tmp_path) == ["probe.py:3 screen._send_edit"]


def test_no_part_of_the_chat_screen_reaches_another_private_name() -> None:
    paths = [p for p in sorted(TUI.rglob("*.py")) if "widgets" not in p.parts]
    found = private_reaches(paths)
    assert not found, "private names reached across parts:\n" + "\n".join(found)


def test_the_reply_turn_takes_the_screen_by_a_protocol() -> None:
    source = (TUI / "screens" / "reply_flow.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    init = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and node.name == "__init__"
        and any(a.arg == "screen" for a in node.args.args)
    )
    screen = next(a for a in init.args.args if a.arg == "screen")
    assert screen.annotation is not None and ast.unparse(screen.annotation) == "ReplyScreen"
    assert "class ReplyScreen(Protocol)" in source


PARTS = {
    "drafting.py": "Drafting",
    "branching.py": "Branches",
    "exchange.py": "Exchange",
    "chat_view.py": "ChatView",
    "conversation_commands.py": "ConversationCommands",
    "summary_commands.py": "SummaryCommands",
    "message_deleting.py": "MessageDeleting",
    "outside.py": "OutsideWatch",
}
"""The chat screen's parts (``ReplyFlow`` takes its own ``ReplyScreen``, tested above)."""


def _class(path: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def test_the_chat_screen_is_one_class_with_one_action_for_its_parts() -> None:
    screen = _class(TUI / "screens" / "main.py", "MainScreen")
    assert [ast.unparse(b) for b in screen.bases] == ["Screen[None]"]  # no base of ours
    actions = [
        item.name
        for item in screen.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        and item.name.startswith("action_")
    ]
    assert actions == ["action_part"], "a screen action forwards to a part: name the part's"


def test_every_part_takes_the_screen_by_its_protocol_and_imports_no_screen() -> None:
    for module, name in PARTS.items():
        path = TUI / "screens" / module
        init = next(
            item
            for item in _class(path, name).body
            if isinstance(item, ast.FunctionDef) and item.name == "__init__"
        )
        screen = next(a for a in init.args.args if a.arg == "screen")
        assert screen.annotation is not None, module
        assert ast.unparse(screen.annotation) == "ChatScreen", module
        source = path.read_text(encoding="utf-8")
        assert "screens.main import" not in source, module
