"""The environment a child process starts with: the user's, without the API key or the settings
of the Anthropic endpoint.

Every program tui-chat starts (clipboard tools, an editor, a pager, an MCP server) gets
:func:`child_env` as its environment (an MCP server the minimal one, ``only=``), never
``os.environ`` as it is: a clipboard tool, an ``$EDITOR`` plugin or a third-party server has
no business holding the key. Left out are

* every ``ANTHROPIC_*`` variable (the key, an auth token, the endpoint, the SDK's other
  settings) and every ``TUI_CHAT_*`` variable but ``TUI_CHAT_HOME``;
* any variable whose value holds a secret the running process was given (an ``api_key`` read
  from ``config.toml``, registered with :func:`hide`), whatever its name.

A test walks the package for the calls that start a process and fails on one that is not given
``env=child_env(...)``. Like :mod:`tui_chat.files` this module sits outside the layers and
imports nothing of tui-chat.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

_PREFIXES = ("ANTHROPIC_", "TUI_CHAT_")
_KEPT = frozenset({"TUI_CHAT_HOME"})
_secrets: set[str] = set()


def hide(secret: str | None) -> None:
    """Keep every variable whose value holds ``secret`` out of children's environments (the
    API key, however it was given); blank values are ignored."""
    if secret and secret.strip():
        _secrets.add(secret.strip())


def child_env(
    extra: Mapping[str, str] | None = None, *, only: Iterable[str] | None = None
) -> dict[str, str]:
    """The environment for a child process: ``os.environ`` less the key and the endpoint's
    settings (see the module), plus ``extra`` (which may not add a secret either).

    Args:
        extra: Variables the child needs (a server's own settings), added last.
        only: Take just these of ``os.environ`` (an MCP server gets PATH, HOME, LANG… and its
            own ``env``, never the whole environment of the user); exported shell functions
            (values starting ``()``) are left out then.
    """
    if only is None:
        base = dict(os.environ)
    else:
        base = {k: os.environ[k] for k in only if k in os.environ}
        base = {k: v for k, v in base.items() if not v.startswith("()")}
    merged = {**base, **(extra or {})}
    return {name: value for name, value in merged.items() if not _withheld(name, value)}


def _withheld(name: str, value: str) -> bool:
    upper = name.upper()
    if upper.startswith(_PREFIXES) and upper not in _KEPT:
        return True
    return any(secret in value for secret in _secrets)
