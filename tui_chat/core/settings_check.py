"""Checking a conversation's stored settings as a whole.

Settings reach the database from ``tui-chat set`` (checked key by key), from imports and from
older versions of tui-chat. :func:`settings_problems` lists everything wrong with a settings
object, so an import can be refused whole, and :func:`usable_settings` keeps only the valid
keys, so a conversation whose settings are invalid still opens (on the defaults for the rest).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from tui_chat.core.policy import Policy
from tui_chat.core.presets import DEFAULT_PRESET, PRESETS, PolicyError, parse_setting

_KEYS = frozenset(f.name for f in fields(Policy))
"""Every key a conversation's settings may hold (the policy's fields)."""


def settings_problems(settings: object) -> list[str]:
    """Every problem of a settings object, one line each (empty when it is valid)."""
    if not isinstance(settings, Mapping):
        return [f"settings must be an object, not {type(settings).__name__}"]
    problems: list[str] = []
    for key, raw in settings.items():
        if key == "preset":
            if raw not in PRESETS:
                problems.append(f"preset: unknown preset {raw!r}; known: {', '.join(PRESETS)}")
            continue
        if key not in _KEYS:
            problems.append(f"unknown setting {key!r}")
            continue
        try:
            parse_setting(key, raw)
        except PolicyError as exc:
            problems.append(f"{key}: {exc}")
    return problems


def usable_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without its invalid keys (an invalid preset falls back to the default)."""
    if not isinstance(settings, Mapping):
        return {}
    kept: dict[str, Any] = {}
    for key, raw in settings.items():
        if key == "preset":
            if raw in PRESETS:
                kept[key] = raw
            continue
        if key not in _KEYS:
            continue
        try:
            parse_setting(key, raw)
        except PolicyError:
            continue
        kept[key] = raw
    return kept


def settings_warning(conversation_id: str, title: str, settings: object) -> str | None:
    """What is wrong with a conversation's stored settings and how to reset them, if anything."""
    problems = settings_problems(settings)
    if not problems:
        return None
    return (
        f"conversation {conversation_id} ({title}) has invalid settings "
        f"({'; '.join(problems)}); they are ignored: "
        f"`tui-chat set {conversation_id} preset {DEFAULT_PRESET}` resets them"
    )
