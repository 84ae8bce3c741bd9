"""The named presets, one per seed design (DESIGN.md section 4), and settings on top of them.

:func:`resolve_policy` layers a preset, the config defaults and a conversation's own settings,
in that order, into a :class:`~tui_chat.core.policy.Policy`; :func:`parse_setting` validates one
setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from tui_chat.core.policy import Policy

DEFAULT_BUDGET = 100_000
"""The default working budget in tokens (README, "The working budget": why this figure)."""

PRESETS: dict[str, Policy] = {
    "threshold": Policy(
        preset="threshold",
        trigger="tokens",
        threshold_tokens=8_000,
        strategy="running",
        keep_recent=6,
        summary_max_tokens=1_024,
        message_char_limit=2_000,
        prompt_char_limit=3_000,
        summarizer_max_tokens=1_024,
        summarizer_timeout=60.0,
    ),
    "turns": Policy(
        preset="turns",
        trigger="turns",
        every_turns=3,
        strategy="segments",
        keep_recent=0,
        compression_rate=0.3,
    ),
    "window": Policy(
        preset="window",
        trigger="ratio",
        ratio=0.75,
        strategy="running",
        keep_recent=4,
        warn_ratio=0.8,
    ),
    "hybrid": Policy(
        preset="hybrid",
        trigger="ratio",
        ratio=0.85,
        emergency_ratio=0.95,
        strategy="segments",
        keep_recent=10,
        max_anchors=5,
        summary_max_tokens=500,
        importance=True,
        warn_ratio=0.85,
    ),
    "session": Policy(
        preset="session",
        trigger="tokens",
        threshold_tokens=800,
        strategy="running",
        keep_recent=0,
        keep_recent_tokens=800,
        summary_max_chars=700,
        structured_fields=True,
    ),
    "adaptive": Policy(
        preset="adaptive",
        trigger="budget",
        budget=DEFAULT_BUDGET,
        strategy="running",
        keep_recent=2,
        summary_share=0.10,
        ledger_share=0.05,
        recall_share=0.55,
        recent_share=0.25,
        pins_share=0.10,
        recall_fill=True,
        recall_max_tokens=6_000,
        recall_max_excerpts=200,
    ),
}
"""The named presets: the five seed designs exactly as their seeds describe them, and
``adaptive``, ours and the default: every part of the request has a budget that is a share of
the usable window (summary 10 %, identifier ledger 5 %, recall 55 % and whatever the others
leave, up to 6,000 tokens; raw turns 25 %, compacted down to half of it; pins 10 %).
The shares were chosen on the dev LoCoMo conversations (README, "Why adaptive is the
default"). Its trigger is ``cost`` (:mod:`tui_chat.core.payback`): raw turns are folded, down
to ``keep_recent`` messages, as soon as that pays for itself within ``payback_turns`` given
prompt-cache prices, and at the latest at ``ratio`` of the window; measured in the cost
benchmark against the raw-turns budget (``tokens``, still available with ``tui-chat set CONV
trigger tokens``), it costs far less at no loss on LoCoMo (README, "Compact when it pays")."""

DEFAULT_PRESET = "adaptive"

SETTING_KEYS: tuple[str, ...] = (
    "preset",
    "trigger",
    "threshold_tokens",
    "every_turns",
    "ratio",
    "keep_recent",
    "compression_rate",
    "budget",
    "budget_keep",
    "cache_ttl",
    "strategy",
    "summarizer",
    "context_window",
    "recall",
    "single_user_message",
)
"""Per-conversation keys settable with ``tui-chat set CONV KEY VALUE`` besides model/system."""

_CHOICES: dict[str, tuple[str, ...]] = {
    "preset": tuple(PRESETS),
    "trigger": ("tokens", "turns", "ratio", "cost", "budget"),
    "strategy": ("running", "segments"),
    "cache_ttl": ("auto", "5m", "1h"),
}
_RANGES: dict[str, tuple[float, float]] = {
    "threshold_tokens": (100, 10_000_000),
    "every_turns": (1, 1_000),
    "ratio": (0.1, 1.0),
    "keep_recent": (0, 1_000),
    "compression_rate": (0.1, 0.5),
    "context_window": (1_000, 10_000_000),
    "budget": (1_000, 10_000_000),
    "budget_keep": (0.05, 0.9),
    "recall_budget_tokens": (0, 1_000_000),
    "anchor_budget_tokens": (0, 1_000_000),
    "emergency_ratio": (0.1, 1.0),
    "payback_turns": (1, 100),
    "summary_share": (0.01, 0.9),
    "ledger_share": (0.0, 0.5),
    "recall_share": (0.0, 0.9),
    "recent_share": (0.01, 0.9),
    "pins_share": (0.0, 0.9),
    "cache_cold_share": (0.0, 1.0),
}


_SHARES = ("summary_share", "recall_share", "recent_share", "pins_share")
"""Shares of the usable window that may be unset (``none``)."""


class PolicyError(ValueError):
    """A setting name or value that cannot be used."""


def parse_setting(key: str, raw: object) -> Any:
    """Validate and convert one policy setting.

    Args:
        key: A :class:`Policy` field name.
        raw: The value, as typed by the user (string) or read from TOML/JSON.

    Returns:
        The value converted to the field's type.

    Raises:
        PolicyError: when the key is unknown or the value is out of range.
    """
    known = {f.name: f for f in fields(Policy)}
    if key not in known:
        raise PolicyError(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
    default = getattr(Policy(), key)
    if key in _CHOICES:
        value = str(raw).strip().lower()
        if value not in _CHOICES[key]:
            raise PolicyError(f"{key} must be one of {', '.join(_CHOICES[key])}, not {raw!r}")
        return value
    if isinstance(default, bool) or key in ("recall", "single_user_message"):
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise PolicyError(f"{key} must be on or off, not {raw!r}")
    if key in ("summarizer", "summarizer_model"):
        text = str(raw).strip()
        if not text:
            raise PolicyError(f"{key} must not be empty")
        return text
    if key in (
        "keep_recent_tokens",
        "summary_max_chars",
        "max_anchors",
        "message_char_limit",
        "prompt_char_limit",
        "max_output",
        "context_window",
        "budget",
        *_SHARES,
    ) and (raw is None or str(raw).strip().lower() in ("", "none", "off", "default")):
        return None
    number: float
    try:
        if isinstance(raw, bool):
            raise ValueError
        number = raw if isinstance(raw, int | float) else float(str(raw))
    except (TypeError, ValueError):
        raise PolicyError(f"{key} must be a number, not {raw!r}") from None
    low, high = _RANGES.get(key, (0, 10_000_000))
    if not low <= number <= high:
        raise PolicyError(f"{key} must be between {low:g} and {high:g}, not {raw!r}")
    if isinstance(default, float) or key in (
        "ratio",
        "compression_rate",
        "emergency_ratio",
        "budget_keep",
        *_SHARES,
    ):
        return float(number)
    if number != int(number):
        raise PolicyError(f"{key} must be a whole number, not {raw!r}")
    return int(number)


def resolve_policy(
    settings: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Policy:
    """Build the policy in force: preset, then config defaults, then conversation settings.

    Args:
        settings: The conversation's own settings (may name a ``preset``).
        defaults: Config-file defaults (may name a ``preset`` too).

    Returns:
        The resolved policy. Invalid stored values raise :class:`PolicyError`.
    """
    settings = dict(settings or {})
    defaults = dict(defaults or {})
    name = str(settings.get("preset") or defaults.get("preset") or DEFAULT_PRESET)
    if name not in PRESETS:
        raise PolicyError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    policy = PRESETS[name]
    known = {f.name for f in fields(Policy)}
    changes: dict[str, Any] = {}
    # Config defaults apply only where the conversation picked no other preset explicitly.
    layers = [defaults] if "preset" not in settings else []
    layers.append(settings)
    for layer in layers:
        for key, raw in layer.items():
            if key == "preset" or key not in known:
                continue
            changes[key] = parse_setting(key, raw)
    return replace(policy, **changes) if changes else policy
