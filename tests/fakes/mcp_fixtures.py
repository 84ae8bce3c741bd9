"""Specs of the test MCP servers (``tests/fakes/mcp_servers.py``) and a Streamable HTTP one."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.mcp_zygote import ensure_started
from tui_chat.core.tools import ServerSpec

SERVERS = Path(__file__).with_name("mcp_servers.py")


def stdio(name: str, kind: str = "tools", **kw: Any) -> ServerSpec:
    """A stdio server of ``kind`` run by this Python (a fork of this process's zygote:
    ``mcp_zygote.py``)."""
    ensure_started()
    return ServerSpec(name, "stdio", command=sys.executable, args=(str(SERVERS), kind), **kw)


def mcp_json(**servers: str) -> str:
    """An ``mcp.json`` text of stdio servers, ``name=kind``."""
    import json

    entries = {
        name: {"command": sys.executable, "args": [str(SERVERS), kind]}
        for name, kind in servers.items()
    }
    return json.dumps({"mcpServers": entries}, indent=2)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serving(process: subprocess.Popen[bytes], url: str) -> bool | None:
    """Whether our server answers HTTP at ``url``: ``None`` once it has exited (its port was
    taken meanwhile), ``False`` while nothing answers yet."""
    if process.poll() is not None:
        return None
    try:
        urllib.request.urlopen(url, timeout=5).close()
    except urllib.error.HTTPError:
        pass  # an MCP endpoint refuses a plain GET: it answers, so it serves
    except OSError:
        return False
    return process.poll() is None  # the answer came from our process, not a port's earlier owner


@pytest.fixture
def mcp_http_url() -> Iterator[str]:
    """A Streamable HTTP MCP server on 127.0.0.1 (its URL), stopped after the test.

    The state waited for is the server answering HTTP from its own process; a port another
    process took between choosing it and binding it starts the server again on another."""
    for _attempt in range(5):
        port = _free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        process = subprocess.Popen(
            [sys.executable, str(SERVERS), "http", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60  # a bound on a server that never starts, not a wait
        try:
            while (state := _serving(process, url)) is False and time.monotonic() < deadline:
                time.sleep(0.05)
            if state:
                yield url
                return
        finally:
            process.terminate()
            process.wait(10)
    raise RuntimeError("the HTTP MCP server did not start")
