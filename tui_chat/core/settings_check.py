"""Checking a conversation's stored settings as a whole.

Settings reach the database from ``tui-chat set`` (checked key by key), from imports and from
older versions of tui-chat. :func:`settings_problems` lists everything wrong with a settings
object, so an import can be refused whole, and :func:`usable_settings` keeps only the valid
keys, so a conversation whose settings are invalid still opens (on the defaults for the rest).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui_chat.core.presets import DEFAULT_PRESET, PRESETS, RULES, PolicyError, parse_setting


def _problem(key: str, raw: object) -> str | None:
    """What is wrong with one stored setting (``None`` when it is valid)."""
    if key == "preset":
        # A stored preset is a name as written, not a word typed in any case.
        return (
            None
            if isinstance(raw, str) and raw in PRESETS
            else f"preset: unknown preset {raw!r}; known: {', '.join(PRESETS)}"
        )
    if key not in RULES:
        return f"unknown setting {key!r}"
    try:
        parse_setting(key, raw)
    except PolicyError as exc:
        return f"{key}: {exc}"
    return None


def settings_problems(settings: object) -> list[str]:
    """Every problem of a settings object, one line each (empty when it is valid)."""
    if not isinstance(settings, Mapping):
        return [f"settings must be an object, not {type(settings).__name__}"]
    return [p for key, raw in settings.items() if (p := _problem(key, raw)) is not None]


def usable_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without its invalid keys (an invalid preset falls back to the default)."""
    if not isinstance(settings, Mapping):
        return {}
    return {key: raw for key, raw in settings.items() if _problem(key, raw) is None}


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
