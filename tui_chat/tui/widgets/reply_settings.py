"""The settings screen's rows for what a reply may use: thinking, effort and the web tools.

Each row edits one setting of :data:`tui_chat.core.reply_options.REPLY_KEYS`;
:func:`reply_changes` lists those whose value differs from the policy in force, as
``tui-chat set`` would write them (the engine validates them again).
"""

from __future__ import annotations

from collections.abc import Iterator

from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.validation import Integer
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Switch

from tui_chat.core.policy import Policy

__all__ = ["reply_changes", "reply_rows"]

_EFFORTS = ("default", "low", "medium", "high", "xhigh", "max")
_SWITCHES = (
    ("thinking", "Thinking (adaptive where the model has it)"),
    ("web_search", "Web search (server side, billed per search)"),
    ("web_fetch", "Web fetch (reads the pages you name)"),
    ("fast", "Fast mode (where the model has it, at its fast price)"),
)
_INPUTS = (
    (
        "thinking_budget",
        "Thinking budget, tokens (models without adaptive)",
        Integer(1024, 128_000),
    ),
    ("web_max_uses", "Web tool uses per reply", Integer(1, 100)),
)
_DOMAINS = (
    ("web_allowed_domains", "Only these domains (comma separated)"),
    ("web_blocked_domains", "Never these domains (comma separated)"),
)


def reply_rows(policy: Policy) -> Iterator[Widget]:
    """One row per setting, showing the policy's values."""
    for key, label in _SWITCHES:
        value = policy.thinking == "on" if key == "thinking" else bool(getattr(policy, key))
        yield Horizontal(Label(label), Switch(value, id=key), classes="row")
    yield Horizontal(
        Label("Effort"),
        Select([(e, e) for e in _EFFORTS], value=policy.effort, allow_blank=False, id="effort"),
        classes="row",
    )
    for key, label, validator in _INPUTS:
        field = Input(str(getattr(policy, key)), id=key, validators=[validator])
        yield Horizontal(Label(label), field, classes="row")
    for key, label in _DOMAINS:
        field = Input(", ".join(getattr(policy, key)), id=key, placeholder="none")
        yield Horizontal(Label(label), field, classes="row")


def reply_changes(screen: DOMNode, policy: Policy) -> list[tuple[str, str]]:
    """The reply settings whose field differs from ``policy``, as ``(key, value)``."""
    out: list[tuple[str, str]] = []
    for key, _ in _SWITCHES:
        value = screen.query_one(f"#{key}", Switch).value
        current = policy.thinking == "on" if key == "thinking" else bool(getattr(policy, key))
        if value != current:
            out.append((key, "on" if value else "off"))
    effort = str(screen.query_one("#effort", Select).value)
    if effort != policy.effort:
        out.append(("effort", effort))
    for key, _, _ in _INPUTS:
        typed = screen.query_one(f"#{key}", Input).value.strip()
        if typed != str(getattr(policy, key)):
            out.append((key, typed))
    # Cleared domains go first, so one list can replace the other in a single save.
    domains = [
        (key, screen.query_one(f"#{key}", Input).value.strip() or "none") for key, _ in _DOMAINS
    ]
    for key, typed in sorted(domains, key=lambda item: item[1] != "none"):
        if typed != (", ".join(getattr(policy, key)) or "none"):
            out.append((key, typed))
    return out
