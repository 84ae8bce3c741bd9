"""Specs of the test MCP servers (``tests/fakes/mcp_servers.py``) and a Streamable HTTP one."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_chat.core.tools import ServerSpec

SERVERS = Path(__file__).with_name("mcp_servers.py")


def stdio(name: str, kind: str = "tools", **kw: Any) -> ServerSpec:
    """A stdio server of ``kind`` run by this Python."""
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


@pytest.fixture
def mcp_http_url() -> Iterator[str]:
    """A Streamable HTTP MCP server on 127.0.0.1 (its URL), stopped after the test."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    try:
        while True:  # the port accepting connections is the state waited for
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the HTTP MCP server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
