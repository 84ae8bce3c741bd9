"""The named presets, one per seed design (docs/seeds.md), and settings on top of them.

:func:`resolve_policy` layers a preset, the config defaults and a conversation's own settings,
in that order, into a :class:`~tui_chat.core.policy.Policy`; :func:`parse_setting` validates one
setting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from tui_chat.core.policy import Policy
from tui_chat.core.reply_options import REPLY_KEYS

DEFAULT_BUDGET = 100_000
"""The default working budget in tokens (docs/context.md, "Why 100k")."""

SEED_RECALL: dict[str, Any] = {"recall_fill": True, "recall_max_excerpts": 200}
"""Recall in every seed preset: the seeds say nothing of recall (tui-chat adds it), and with a
fixed 1,500-token budget of at most 32 excerpts the seeds' requests at a 4k window spent the rest
on summary text the strong plain search beat: dev LoCoMo at 4k, seed minus the strong probe,
threshold -1.3 -> +3.0, turns -1.1 -> +0.4, window -1.1 -> +2.0, hybrid 0.0 -> +3.0, session
-0.9 -> +2.8 points. Recall takes the room the other parts leave (``recall_fill``, up to
``recall_max_tokens``), as ``adaptive``'s does; where the cost cap applies it still binds."""

PRESETS: dict[str, Policy] = {
    "threshold": Policy(
        preset="threshold",
        **SEED_RECALL,
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
        **SEED_RECALL,
        trigger="turns",
        every_turns=3,
        strategy="segments",
        keep_recent=0,
        compression_rate=0.3,
    ),
    "window": Policy(
        preset="window",
        **SEED_RECALL,
        trigger="ratio",
        ratio=0.75,
        strategy="running",
        keep_recent=4,
        warn_ratio=0.8,
    ),
    "hybrid": Policy(
        preset="hybrid",
        **SEED_RECALL,
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
        **SEED_RECALL,
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
The shares were chosen on the dev LoCoMo conversations (docs/presets.md, "Why adaptive is the
default"). Its trigger is ``budget`` (:mod:`tui_chat.core.triggers`): nothing is folded until
the next turn, as large as the last one, would take the request past the working budget
(``budget``, 100k tokens by default); then raw turns are folded down to their share. ``tui-chat
set CONV trigger cost`` gives the earlier cost trigger (:mod:`tui_chat.core.payback`: fold as
soon as it pays for itself within ``payback_turns`` given prompt-cache prices) and ``trigger
tokens`` the raw-turns budget (docs/presets.md, "Compact when it pays")."""

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
    *REPLY_KEYS,
)
"""Per-conversation keys settable with ``tui-chat set CONV KEY VALUE`` besides model/system."""


class PolicyError(ValueError):
    """A setting name or value that cannot be used."""


_UNSET_WORDS = ("", "none", "off", "default")
"""What unsets a setting that may be unset (the policy's ``None``)."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a few words, compared without case."""

    options: tuple[str, ...]

    def parse(self, key: str, raw: object) -> str:
        value = str(raw).strip().lower()
        if value not in self.options:
            raise PolicyError(f"{key} must be one of {', '.join(self.options)}, not {raw!r}")
        return value


@dataclass(frozen=True, slots=True)
class Switch:
    """On or off: a boolean, or a word for one (``on``/``off``, ``yes``/``no``, ``1``/``0``)."""

    def parse(self, key: str, raw: object) -> bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise PolicyError(f"{key} must be on or off, not {raw!r}")


@dataclass(frozen=True, slots=True)
class Name:
    """A name that must not be empty (a summarizer, a model)."""

    def parse(self, key: str, raw: object) -> str:
        text = str(raw).strip()
        if not text:
            raise PolicyError(f"{key} must not be empty")
        return text


@dataclass(frozen=True, slots=True)
class Number:
    """A number between ``low`` and ``high``: whole (an int) unless ``whole`` is False; with
    ``unset``, one of :data:`_UNSET_WORDS` (or ``None``) gives ``None``."""

    low: float = 0
    high: float = 10_000_000
    whole: bool = True
    unset: bool = False

    def parse(self, key: str, raw: object) -> int | float | None:
        if self.unset and (raw is None or str(raw).strip().lower() in _UNSET_WORDS):
            return None
        if isinstance(raw, bool) or raw is None:
            raise PolicyError(f"{key} must be a number, not {raw!r}")
        try:
            number = raw if isinstance(raw, int | float) else float(str(raw))
        except ValueError:
            raise PolicyError(f"{key} must be a number, not {raw!r}") from None
        if not self.low <= number <= self.high:
            raise PolicyError(f"{key} must be between {self.low:g} and {self.high:g}, not {raw!r}")
        if not self.whole:
            return float(number)
        if number != int(number):
            raise PolicyError(f"{key} must be a whole number, not {raw!r}")
        return int(number)


_DOMAIN = re.compile(r"^(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:/\S*)?$")


@dataclass(frozen=True, slots=True)
class Domains:
    """Domains for Claude's web tools, from a list or a comma/space separated text (``none``
    empties it); written without a scheme (``example.com``, ``docs.example.com/api``), and a
    given ``https://`` is removed."""

    def parse(self, key: str, raw: object) -> tuple[str, ...]:
        if raw is None:
            return ()
        items = [str(x) for x in raw] if isinstance(raw, list | tuple) else str(raw).split(",")
        domains: list[str] = []
        for item in (part for chunk in items for part in chunk.split()):
            text = item.strip().lower().removeprefix("https://").removeprefix("http://")
            if text in ("none", "off"):
                continue
            if not _DOMAIN.match(text):
                raise PolicyError(f"{key}: {item!r} is not a domain (write it as example.com)")
            if text not in domains:
                domains.append(text)
        return tuple(domains)


Rule = Choice | Switch | Name | Number | Domains
"""How one setting is read: :meth:`parse` converts a typed or stored value, or raises
:class:`PolicyError` with the message the user sees."""

_FRACTION = Number(0, 10_000_000, whole=False)
_COUNT = Number()
_LIMIT = Number(unset=True)

RULES: dict[str, Rule] = {
    "preset": Choice(tuple(PRESETS)),
    "trigger": Choice(("tokens", "turns", "ratio", "cost", "budget")),
    "budget": Number(1_000, 10_000_000, unset=True),
    "cache_ttl": Choice(("auto", "5m", "1h")),
    "budget_keep": Number(0.05, 0.9, whole=False),
    "threshold_tokens": Number(100, 10_000_000),
    "every_turns": Number(1, 1_000),
    "ratio": Number(0.1, 1.0, whole=False),
    "emergency_ratio": Number(0.1, 1.0, whole=False),
    "strategy": Choice(("running", "segments")),
    "keep_recent": Number(0, 1_000),
    "keep_recent_tokens": _LIMIT,
    "compression_rate": Number(0.1, 0.5, whole=False),
    "summary_max_tokens": _COUNT,
    "summary_max_chars": _LIMIT,
    "anchor_budget_tokens": Number(0, 1_000_000),
    "max_anchors": _LIMIT,
    "recall": Switch(),
    "recall_budget_tokens": Number(0, 1_000_000),
    "recall_max_excerpts": _COUNT,
    "message_char_limit": _LIMIT,
    "prompt_char_limit": _LIMIT,
    "single_user_message": Switch(),
    "summarizer": Name(),
    "summarizer_model": Name(),
    "summarizer_max_tokens": _COUNT,
    "summarizer_timeout": _FRACTION,
    "warn_ratio": _FRACTION,
    "context_window": Number(1_000, 10_000_000, unset=True),
    "max_output": _LIMIT,
    "structured_fields": Switch(),
    "importance": Switch(),
    "summary_share": Number(0.01, 0.9, whole=False, unset=True),
    "recall_share": Number(0.0, 0.9, whole=False, unset=True),
    "recent_share": Number(0.01, 0.9, whole=False, unset=True),
    "pins_share": Number(0.0, 0.9, whole=False, unset=True),
    "ledger_share": Number(0.0, 0.5, whole=False),
    "recall_fill": Switch(),
    "recall_max_tokens": _COUNT,
    "payback_turns": Number(1, 100),
    "cache_cold_share": Number(0.0, 1.0, whole=False),
    "thinking": Choice(("off", "on")),
    "thinking_budget": Number(1_024, 128_000),
    "thinking_display": Choice(("summarized", "omitted")),
    "effort": Choice(("default", "low", "medium", "high", "xhigh", "max")),
    "web_search": Switch(),
    "web_fetch": Switch(),
    "web_max_uses": Number(1, 100),
    "web_allowed_domains": Domains(),
    "web_blocked_domains": Domains(),
    "fast": Switch(),
}
"""Every :class:`Policy` field and how a value for it is read (a test keeps the two in step),
but :data:`MODEL_FIELDS`."""

MODEL_FIELDS = ("prices", "summarizer_prices")
"""The :class:`Policy` fields no setting names: the engine fills them from the model table."""


def parse_setting(key: str, raw: object) -> Any:
    """Validate and convert one policy setting by its rule in :data:`RULES`.

    Args:
        key: A :class:`Policy` field name.
        raw: The value, as typed by the user (string) or read from TOML/JSON.

    Returns:
        The value converted to the field's type.

    Raises:
        PolicyError: when the key is unknown or the value is out of range.
    """
    rule = RULES.get(key)
    if rule is None:
        raise PolicyError(f"unknown setting {key!r}; known: {', '.join(sorted(RULES))}")
    return rule.parse(key, raw)


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
    known = {f.name for f in fields(Policy)} - set(MODEL_FIELDS)
    changes: dict[str, Any] = {}
    # Config defaults apply only where the conversation picked no other preset explicitly.
    layers = [defaults] if "preset" not in settings else []
    layers.append(settings)
    for layer in layers:
        for key, raw in layer.items():
            if key == "preset" or key not in known:
                continue
            changes[key] = parse_setting(key, raw)
    if changes.get("web_allowed_domains") and changes.get("web_blocked_domains"):
        raise PolicyError(
            "web_allowed_domains and web_blocked_domains cannot both be set (Claude's web "
            "tools take one or the other); clear one with `none`"
        )
    return replace(policy, **changes) if changes else policy
