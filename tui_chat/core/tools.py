"""MCP servers as configured in ``mcp.json``, and the names their tools are sent under.

``mcp.json`` is Claude Desktop's format::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~"],
                  "env": {"TOKEN": "${FILES_TOKEN}"}},
        "search": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}}}}

``${VAR}`` (and ``${VAR:-default}``) are expanded in ``env`` and ``headers`` from the
environment given; a variable that is unset, or one that would hand the API key to a server,
makes that server fail with the reason (the others still start). A file that is not JSON or
not of this shape is one error naming its line. Pure: the caller reads the file and passes the
environment.

A server's process gets :data:`BASE_ENV_KEYS`, the few variables a program needs to run (PATH,
HOME, LANG …), and its own ``env``, through :func:`tui_chat.child_env.child_env` — never the
whole environment of the user, never the key.

Tool names are namespaced ``server__tool`` (:func:`namespaced`), so two servers' tools never
collide; the API's name limit (64 characters of ``[a-zA-Z0-9_-]``) is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "BASE_ENV_KEYS",
    "CALL_TIMEOUT",
    "START_TIMEOUT",
    "McpConfigError",
    "ServerSpec",
    "namespaced",
    "parse_mcp_json",
]

START_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools (``startupTimeout`` overrides)."""

CALL_TIMEOUT = 60.0
"""Seconds one tool call may take (``callTimeout`` overrides)."""

BASE_ENV_KEYS = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
)
"""The variables of the user's environment a server's process gets (besides its own ``env``)."""

SECRET_NAMES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""Variables never expanded into a server's ``env`` or ``headers``."""

NAME_LIMIT = 64
SEPARATOR = "__"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_KEYS = {
    "stdio": {"command", "args", "env", "type", "cwd", "startupTimeout", "callTimeout"},
    "http": {"url", "headers", "type", "startupTimeout", "callTimeout"},
}


class McpConfigError(ValueError):
    """``mcp.json`` cannot be used; the message names the line."""


@dataclass(frozen=True)
class ServerSpec:
    """One configured server."""

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The server's own variables, expanded (may hold its secrets: never shown)."""
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    start_timeout: float = START_TIMEOUT
    call_timeout: float = CALL_TIMEOUT
    problem: str | None = None
    """Why this server cannot start (an unset variable …); ``None`` when it can."""
    line: int = 0
    """The line of ``mcp.json`` that names it."""

    @property
    def target(self) -> str:
        """What it runs or reaches, for lists (no env, no headers)."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])


def _line_of_key(text: str, key: str) -> int:
    """The first line where ``"key":`` appears (1-based; 0 when not found)."""
    pattern = re.compile(rf'"{re.escape(key)}"\s*:')
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            return number
    return 0


def _expand(
    value: str, env: Mapping[str, str], secrets: Sequence[str], where: str
) -> tuple[str, str | None]:
    """``value`` with ``${VAR}`` expanded; the problem when a variable cannot be used."""
    problems: list[str] = []

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in SECRET_NAMES:
            problems.append(f"{where}: ${{{name}}} would pass the API key to the server")
            return ""
        if name in env:
            return env[name]
        if default is not None:
            return default
        problems.append(f"{where}: ${{{name}}} is not set")
        return ""

    expanded = _VAR.sub(one, value)
    if not problems and any(secret and secret in expanded for secret in secrets):
        problems.append(f"{where}: the value holds the API key; it is never passed to a server")
    return expanded, (problems[0] if problems else None)


def _strings(raw: object, what: str) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise ValueError(f"{what} must be an object of strings")
    return dict(raw)


def _seconds(raw: object, key: str, default: float) -> float:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= 3600:
        raise ValueError(f"{key} must be a number of seconds (0 < s <= 3600)")
    return float(raw)


def _server(name: str, raw: object, env: Mapping[str, str], secrets: Sequence[str]) -> ServerSpec:
    """One entry of ``mcpServers`` (raises ValueError saying what is wrong with it)."""
    if not isinstance(raw, dict):
        raise ValueError("expected an object")
    kind = raw.get("type", "stdio" if "command" in raw else "http" if "url" in raw else None)
    if kind in ("streamable-http", "streamableHttp"):
        kind = "http"
    if kind not in _KEYS:
        raise ValueError('needs "command" (stdio) or "type": "http" with "url"')
    unknown = sorted(set(raw) - _KEYS[kind])
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} for a {kind} server")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", name):
        raise ValueError("a server's name is 1 to 40 letters, digits, '_' or '-'")
    start = _seconds(raw.get("startupTimeout"), "startupTimeout", START_TIMEOUT)
    call = _seconds(raw.get("callTimeout"), "callTimeout", CALL_TIMEOUT)
    problems: list[str] = []

    def expanded(table: dict[str, str], what: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, value in table.items():
            out[key], problem = _expand(value, env, secrets, f"{what}.{key}")
            if problem:
                problems.append(problem)
        return out

    if kind == "http":
        url = raw.get("url")
        if not isinstance(url, str) or not re.match(r"https?://", url):
            raise ValueError('"url" must be an http(s) URL')
        headers = expanded(_strings(raw.get("headers", {}), '"headers"'), "headers")
        return ServerSpec(
            name,
            "http",
            url=url,
            headers=headers,
            problem=next(iter(problems), None),
            start_timeout=start,
            call_timeout=call,
        )
    command, args = raw.get("command"), raw.get("args", [])
    if not isinstance(command, str) or not command.strip():
        raise ValueError('"command" must be a non-empty string')
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError('"args" must be a list of strings')
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError('"cwd" must be a string')
    own = expanded(_strings(raw.get("env", {}), '"env"'), "env")
    return ServerSpec(
        name,
        "stdio",
        command=command,
        args=tuple(args),
        env=own,
        cwd=cwd,
        problem=next(iter(problems), None),
        start_timeout=start,
        call_timeout=call,
    )


def parse_mcp_json(
    text: str, env: Mapping[str, str], secrets: Sequence[str] = (), source: str = "mcp.json"
) -> tuple[ServerSpec, ...]:
    """The servers of an ``mcp.json`` text, in the file's order.

    Args:
        text: The file's text.
        env: Where ``${VAR}`` is looked up.
        secrets: Values never passed to a server (the API key).
        source: How errors name the file.

    Raises:
        McpConfigError: not JSON, or not ``{"mcpServers": {name: {...}}}``; the message
            names the line.
    """
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        line = _line_of_key(text, "mcpServers") or 1
        raise McpConfigError(f'{source}:{line}: expected {{"mcpServers": {{"name": {{...}}}}}}')
    servers: list[ServerSpec] = []
    for name, raw in data.get("mcpServers", {}).items():
        line = _line_of_key(text, name)
        try:
            spec = _server(name, raw, env, secrets)
        except ValueError as exc:
            raise McpConfigError(f"{source}:{line}: server {name!r}: {exc}") from None
        servers.append(replace(spec, line=line))
    return tuple(servers)


def namespaced(server: str, tool: str) -> str:
    """The name a server's tool is sent under: ``server__tool``, within the API's limit.

    Characters the API refuses become ``_``; a name over 64 characters is cut and ends with a
    hash of the whole, so two long names never meet.
    """
    name = _NAME_CHARS.sub("_", f"{server}{SEPARATOR}{tool}")
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: NAME_LIMIT - 9]}_{digest}"
