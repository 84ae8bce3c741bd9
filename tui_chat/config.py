"""The configuration: ``config.toml`` plus the environment.

Every setting is documented by its attribute docstring. Errors name the file, the key and the
line. The API key is held in memory only; it is never written anywhere by tui-chat.
"""

from __future__ import annotations

import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tui_chat import paths
from tui_chat.core.policy import Policy
from tui_chat.core.presets import PRESETS, PolicyError, parse_setting
from tui_chat.llm.models import model_info

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."


class ConfigError(Exception):
    """A config file that cannot be used; the message names file, key and line."""


@dataclass(frozen=True)
class Config:
    """Settings for one run of tui-chat."""

    model: str = DEFAULT_MODEL
    """Model for new conversations (``[chat] model``)."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    """System prompt for new conversations (``[chat] system_prompt``)."""
    base_url: str | None = None
    """Anthropic-compatible endpoint (``[api] base_url``; ``ANTHROPIC_BASE_URL`` wins)."""
    api_key: str | None = field(default=None, repr=False)
    """API key (``ANTHROPIC_API_KEY`` or ``[api] api_key``). Never stored or printed."""
    timeout: float = 600.0
    """Seconds before a reply request is abandoned (``[api] timeout``)."""
    max_retries: int = 2
    """SDK retries on 429/5xx/connection errors (``[api] max_retries``)."""
    db_path: Path = field(default_factory=paths.default_db_path)
    """Database file (``[storage] db_path``; ``--db`` wins)."""
    compaction: Mapping[str, Any] = field(default_factory=dict)
    """Defaults for every conversation's policy (``[compaction]``: preset and any policy key)."""
    models: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per-model overrides of window/max output/prices (``[models."claude-x"]``)."""
    source: Path | None = None
    """The file this config was read from, if any."""
    warnings: tuple[str, ...] = ()
    """Problems that do not stop tui-chat (e.g. a config holding ``api_key`` others can read)."""

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        return bool(self.api_key)


_SECTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "chat": {"model": str, "system_prompt": str},
    "api": {"base_url": str, "api_key": str, "timeout": (int, float), "max_retries": int},
    "storage": {"db_path": str},
}


def _is_http_url(value: str) -> bool:
    return re.fullmatch(r"https?://[^\s/?#]+\S*", value.strip()) is not None


_RANGES: dict[tuple[str, str], tuple[Callable[[Any], bool], str]] = {
    ("chat", "model"): (lambda v: bool(v.strip()), "must not be empty"),
    ("api", "base_url"): (_is_http_url, "must be an http:// or https:// URL"),
    ("api", "timeout"): (lambda v: math.isfinite(v) and v > 0, "must be seconds above 0"),
    ("api", "max_retries"): (lambda v: 0 <= v <= 100, "must be between 0 and 100"),
    ("storage", "db_path"): (lambda v: bool(v.strip()), "must not be empty"),
}
"""Range checks run after the type checks of ``_SECTIONS``: (test, what a good value is)."""

_MODEL_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "context_window": (lambda v: isinstance(v, int) and v > 0, "must be a whole number above 0"),
    "max_output": (lambda v: isinstance(v, int) and v > 0, "must be a whole number above 0"),
    "input_price": (lambda v: math.isfinite(v) and v >= 0, "must be 0 or more (USD/Mtok)"),
    "output_price": (lambda v: math.isfinite(v) and v >= 0, "must be 0 or more (USD/Mtok)"),
}
"""``[models."id"]`` keys and their ranges (values are numbers by then)."""


_KEY_PART = r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)"""
_DOTTED_KEY = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER = re.compile(rf"^\[\[?\s*({_DOTTED_KEY})\s*\]\]?")
_ASSIGNMENT = re.compile(rf"^({_DOTTED_KEY})\s*=")


def _key_parts(dotted: str) -> list[str]:
    return [p[1:-1] if p[:1] in "\"'" else p for p in re.findall(_KEY_PART, dotted)]


def _line_of(text: str, section: str, key: str) -> int:
    """Best-effort line number of ``key`` inside ``[section]`` (0 when unknown).

    Follows every TOML spelling of a key: bare or quoted, in a ``[table]`` or ``[[array]]``
    header, dotted (``api.timeout = …``) or inside an inline table (``api = { timeout = … }``).
    With ``key == section`` it finds the table itself.
    """
    table: list[str] = []
    inline_key = re.compile(rf"""(?:^|[{{,\s])["']?{re.escape(key)}["']?\s*=""")
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = _HEADER.match(stripped)
        if header:
            table = _key_parts(header.group(1))
            if key == section and ".".join(table) == section:
                return number
            continue
        assignment = _ASSIGNMENT.match(stripped)
        if assignment is None:
            continue
        path = ".".join([*table, *_key_parts(assignment.group(1))])
        if path == f"{section}.{key}" or (key == section and path == section):
            return number
        if path == section and inline_key.search(stripped[assignment.end() :]):
            return number
    return 0


def _fail(path: Path, text: str, section: str, key: str, message: str) -> ConfigError:
    line = _line_of(text, section, key)
    where = f"{path}:{line}" if line else str(path)
    return ConfigError(f"{where}: [{section}] {key}: {message}")


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Read ``config.toml`` (if present) and the environment.

    Args:
        path: Config file; defaults to :func:`tui_chat.paths.config_path`.
        env: Environment mapping; defaults to ``os.environ``.

    Raises:
        ConfigError: on unreadable TOML, unknown keys or values of the wrong type.
    """
    env = os.environ if env is None else env
    path = path or paths.config_path()
    values: dict[str, Any] = {}
    compaction: dict[str, Any] = {}
    models: dict[str, dict[str, Any]] = {}
    source: Path | None = None
    if path.exists():
        source = path
        if not path.is_file():  # a FIFO would block the read for ever, a folder fails it
            raise ConfigError(f"{path}: cannot read: not a regular file")
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        for section, table in data.items():
            if not isinstance(table, dict):
                raise _fail(path, text, section, section, "expected a [table]")
            if section == "compaction":
                for key, raw in table.items():
                    if key == "preset":
                        if not isinstance(raw, str) or raw not in PRESETS:
                            raise _fail(
                                path,
                                text,
                                section,
                                key,
                                f"unknown preset {raw!r}; known: " + ", ".join(PRESETS),
                            )
                        compaction[key] = raw
                        continue
                    try:
                        compaction[key] = parse_setting(key, raw)
                    except PolicyError as exc:
                        raise _fail(path, text, section, key, str(exc)) from None
                continue
            if section == "models":
                for name, overrides in table.items():
                    models[name] = _model_overrides(path, text, name, overrides)
                continue
            if section not in _SECTIONS:
                raise _fail(path, text, section, section, "unknown section")
            spec = _SECTIONS[section]
            for key, raw in table.items():
                if key not in spec:
                    raise _fail(path, text, section, key, "unknown key")
                expected = spec[key]
                if isinstance(raw, bool) or not isinstance(raw, expected):
                    names = (
                        " or ".join(t.__name__ for t in expected)
                        if isinstance(expected, tuple)
                        else expected.__name__
                    )
                    # Never echo what was meant to be the API key.
                    shown = "" if key == "api_key" else f" {raw!r}"
                    raise _fail(
                        path,
                        text,
                        section,
                        key,
                        f"expected {names}, got {type(raw).__name__}{shown}",
                    )
                check = _RANGES.get((section, key))
                if check is not None and not check[0](raw):
                    raise _fail(path, text, section, key, f"{check[1]}, got {raw!r}")
                values[key] = raw
    if "db_path" in values:
        values["db_path"] = Path(values["db_path"]).expanduser()
    if "timeout" in values:
        values["timeout"] = float(values["timeout"])
    warnings = (_exposed_key_warning(path),) if source and "api_key" in values else ()
    if env.get("ANTHROPIC_API_KEY"):
        values["api_key"] = env["ANTHROPIC_API_KEY"]
    if env.get("ANTHROPIC_BASE_URL"):
        values["base_url"] = env["ANTHROPIC_BASE_URL"]
    return Config(
        **values,
        compaction=compaction,
        models=models,
        source=source,
        warnings=tuple(w for w in warnings if w),
    )


def _model_overrides(path: Path, text: str, name: str, overrides: object) -> dict[str, Any]:
    """``[models."name"]``, each key checked on its own and then the table as a whole."""
    if not isinstance(overrides, dict):
        raise _fail(path, text, "models", name, "expected a table")
    section = f"models.{name}"
    for key, raw in overrides.items():
        if key not in _MODEL_RANGES:
            raise _fail(path, text, section, key, "unknown key")
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise _fail(path, text, section, key, "must be a number")
        check, expected = _MODEL_RANGES[key]
        if not check(raw):
            raise _fail(path, text, section, key, f"{expected}, got {raw!r}")
    try:
        model_info(name, overrides)
    except ValueError as exc:  # max_output against context_window: point at the former
        key = "max_output" if "max_output" in overrides else "context_window"
        raise _fail(path, text, section, key, str(exc)) from None
    return dict(overrides)


def _exposed_key_warning(path: Path) -> str:
    """A warning when the file holding ``api_key`` can be read by its group or by others."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return ""
    if not mode & (stat.S_IRGRP | stat.S_IROTH):
        return ""
    return (
        f"{path} holds api_key and others can read it (mode {mode:04o}); "
        f"run `chmod 600 {path}` or set ANTHROPIC_API_KEY instead"
    )


def policy_keys() -> list[str]:
    """Every key the ``[compaction]`` table accepts."""
    return ["preset", *(f.name for f in fields(Policy) if f.name != "preset")]
