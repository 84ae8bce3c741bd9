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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_chat import paths
from tui_chat.core.presets import PRESETS, PolicyError, parse_setting
from tui_chat.core.tools import McpConfigError, ServerSpec, parse_mcp_json
from tui_chat.llm.models import model_info

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The current Sonnet (models overview, 2026-10): new conversations start on it; a
conversation keeps the model it was created with, so one made on an older default stays there."""
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
    mcp_servers: tuple[ServerSpec, ...] = ()
    """The MCP servers of ``mcp.json`` beside the config file (none when it is absent)."""
    mcp_error: str | None = None
    """Why ``mcp.json`` could not be used (its line named); the chat runs without its servers."""

    @property
    def has_key(self) -> bool:
        """True when an API key is configured."""
        return bool(self.api_key)


def _is_http_url(value: str) -> bool:
    return re.fullmatch(r"https?://[^\s/?#]+\S*", value.strip()) is not None


def _anything(value: object) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class _Key:
    """One key of the file: the types it takes, then a range check and what a good value is."""

    types: tuple[type, ...]
    check: Callable[[Any], bool] = _anything
    good: str = ""
    wrong_type: str | None = None
    """The message for a value of another type; by default "expected <types>, got <value>"."""
    secret: bool = False
    """Never echo the value (what was meant to be the API key)."""

    def problem(self, raw: object) -> str | None:
        """What is wrong with ``raw`` (``None`` when it is good). A boolean is not a number."""
        if isinstance(raw, bool) or not isinstance(raw, self.types):
            if self.wrong_type is not None:
                return self.wrong_type
            names = " or ".join(t.__name__ for t in self.types)
            shown = "" if self.secret else f" {raw!r}"
            return f"expected {names}, got {type(raw).__name__}{shown}"
        if not self.check(raw):
            return f"{self.good}, got {raw!r}"
        return None


_TEXT = _Key((str,))
_NAME = _Key((str,), lambda v: bool(v.strip()), "must not be empty")
_NUMBER = (int, float)

_SECTIONS: dict[str, dict[str, _Key]] = {
    "chat": {"model": _NAME, "system_prompt": _TEXT},
    "api": {
        "base_url": _Key((str,), _is_http_url, "must be an http:// or https:// URL"),
        "api_key": _Key((str,), secret=True),
        "timeout": _Key(_NUMBER, lambda v: math.isfinite(v) and v > 0, "must be seconds above 0"),
        "max_retries": _Key((int,), lambda v: 0 <= v <= 100, "must be between 0 and 100"),
    },
    "storage": {"db_path": _NAME},
}
"""The plain sections and their keys (``[compaction]`` and ``[models]`` are read by rules of
their own: the policy's :data:`~tui_chat.core.presets.RULES`, and :data:`_MODEL_KEYS`)."""

_WINDOW = _Key(
    _NUMBER,
    lambda v: isinstance(v, int) and v > 0,
    "must be a whole number above 0",
    "must be a number",
)
_PRICE = _Key(
    _NUMBER,
    lambda v: math.isfinite(v) and v >= 0,
    "must be 0 or more (USD/Mtok)",
    "must be a number",
)
_MODEL_KEYS: dict[str, _Key] = {
    "context_window": _WINDOW,
    "max_output": _WINDOW,
    "input_price": _PRICE,
    "output_price": _PRICE,
}
"""``[models."id"]`` keys."""


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


@dataclass(frozen=True, slots=True)
class _File:
    """The config file being read: errors name it, the section, the key and the line."""

    path: Path
    text: str

    def fail(self, section: str, key: str, message: str) -> ConfigError:
        line = _line_of(self.text, section, key)
        where = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{where}: [{section}] {key}: {message}")


def _read(path: Path) -> tuple[_File, dict[str, Any]]:
    """The file's text and its TOML, or a :class:`ConfigError` saying why it cannot be read."""
    if not path.is_file():  # a FIFO would block the read for ever, a folder fails it
        raise ConfigError(f"{path}: cannot read: not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
        return _File(path, text), tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise ConfigError(
            f"{path}: invalid TOML: arrays or tables nested too deeply to read"
        ) from None


def _plain(file: _File, section: str, table: dict[str, Any]) -> dict[str, Any]:
    """A section of :data:`_SECTIONS`: every key known and good, in the file's order."""
    spec = _SECTIONS[section]
    for key, raw in table.items():
        if key not in spec:
            raise file.fail(section, key, "unknown key")
        problem = spec[key].problem(raw)
        if problem is not None:
            raise file.fail(section, key, problem)
    return table


def _compaction(file: _File, section: str, table: dict[str, Any]) -> dict[str, Any]:
    """``[compaction]``: a preset by its exact name, and any policy key by its rule."""
    settings: dict[str, Any] = {}
    for key, raw in table.items():
        if key == "preset":
            if not isinstance(raw, str) or raw not in PRESETS:
                known = ", ".join(PRESETS)
                raise file.fail(section, key, f"unknown preset {raw!r}; known: {known}")
            settings[key] = raw
            continue
        try:
            settings[key] = parse_setting(key, raw)
        except PolicyError as exc:
            raise file.fail(section, key, str(exc)) from None
    return {"compaction": settings}


def _models(file: _File, section: str, table: dict[str, Any]) -> dict[str, Any]:
    """``[models."name"]``, each key checked on its own and then the table as a whole."""
    models: dict[str, dict[str, Any]] = {}
    for name, overrides in table.items():
        if not isinstance(overrides, dict):
            raise file.fail(section, name, "expected a table")
        where = f"{section}.{name}"
        for key, raw in overrides.items():
            if key not in _MODEL_KEYS:
                raise file.fail(where, key, "unknown key")
            problem = _MODEL_KEYS[key].problem(raw)
            if problem is not None:
                raise file.fail(where, key, problem)
        try:
            model_info(name, overrides)
        except ValueError as exc:  # max_output against context_window: point at the former
            key = "max_output" if "max_output" in overrides else "context_window"
            raise file.fail(where, key, str(exc)) from None
        models[name] = dict(overrides)
    return {"models": models}


_Section = Callable[[_File, str, dict[str, Any]], dict[str, Any]]
_READERS: dict[str, _Section] = {
    **dict.fromkeys(_SECTIONS, _plain),
    "compaction": _compaction,
    "models": _models,
}
"""How each section of the file is read into :class:`Config` fields."""


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
    source = path if path.exists() else None
    if source is not None:
        file, data = _read(source)
        for section, table in data.items():
            if not isinstance(table, dict):
                raise file.fail(section, section, "expected a [table]")
            read = _READERS.get(section)
            if read is None:
                raise file.fail(section, section, "unknown section")
            values.update(read(file, section, table))
    if "db_path" in values:
        values["db_path"] = Path(values["db_path"]).expanduser()
    if "timeout" in values:
        values["timeout"] = float(values["timeout"])
    warnings = (_exposed_key_warning(path),) if source and "api_key" in values else ()
    key_source = f"[api] api_key in {path}"
    if env.get("ANTHROPIC_API_KEY"):
        values["api_key"] = env["ANTHROPIC_API_KEY"]
        key_source = "ANTHROPIC_API_KEY"
    _check_key(values.get("api_key"), key_source)
    if env.get("ANTHROPIC_BASE_URL"):
        values["base_url"] = env["ANTHROPIC_BASE_URL"]
    values["mcp_servers"], values["mcp_error"] = _mcp(paths.mcp_path(path), env, values)
    if values["mcp_error"]:
        warnings = (*warnings, values["mcp_error"])
    return Config(**values, source=source, warnings=tuple(w for w in warnings if w))


def _check_key(key: object, source: str) -> None:
    """Refuse a key no endpoint can take, at start, in plain words (a key with a newline was
    sent, refused by the HTTP library on every retry and reported as a network problem)."""
    if not isinstance(key, str):
        return
    if "\n" in key or "\r" in key:
        raise ConfigError(f"the API key contains a newline ({source}); set it on one line")
    if any(c.isspace() or not c.isprintable() for c in key):
        raise ConfigError(
            f"the API key contains a space or a control character ({source}); set it again"
        )


def _mcp(
    path: Path, env: Mapping[str, str], values: Mapping[str, Any]
) -> tuple[tuple[ServerSpec, ...], str | None]:
    """The servers of ``mcp.json`` (none when absent), or why the file cannot be used."""
    if not path.exists():
        return (), None
    if not path.is_file():
        return (), f"{path}: cannot read: not a regular file"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return (), f"{path}: cannot read: {exc}"
    secrets = [str(values["api_key"])] if values.get("api_key") else []
    try:
        return parse_mcp_json(text, env, secrets, source=str(path)), None
    except McpConfigError as exc:
        return (), str(exc)


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
