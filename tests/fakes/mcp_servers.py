"""Real MCP servers for tests, written with the official SDK's server side (``MCPServer``).

Run one as a stdio server::

    python tests/fakes/mcp_servers.py tools          # echo, add, big, read_file, escapes, crash …
    python tests/fakes/mcp_servers.py garbage        # prints junk on stdout, then serves
    python tests/fakes/mcp_servers.py fail           # writes to stderr and exits at once
    python tests/fakes/mcp_servers.py hang           # never answers the handshake
    python tests/fakes/mcp_servers.py stubborn       # never sees its stdin close
    python tests/fakes/mcp_servers.py http PORT      # the same tools over Streamable HTTP

``env`` returns the server process's environment as JSON (the tests check what a child gets).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build(name: str = "tools") -> MCPServer:
    """The test tools."""
    from mcp.server.mcpserver import MCPServer  # after the hand-over: a fork has it already

    server = MCPServer(name)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text as given."""
        return text

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    def big(size: int = 1_000_000) -> str:
        """Return ``size`` characters of text."""
        line = "0123456789 abcdefghij ABCDEFGHIJ /tmp/big/file.txt id-4242\n"
        return (line * (size // len(line) + 1))[:size]

    @server.tool()
    def read_file(path: str, lines: int = 400) -> str:
        """A source file as a file-reading tool returns it: numbered lines, an id and a
        figure set in its middle, a word found nowhere else."""
        stem = path.rsplit("/", 1)[-1].split(".")[0]
        body = [f"{i:>5}  total = step(total, {i}) + offset" for i in range(lines)]
        body[lines // 2] = f"{lines // 2:>5}  ORDER_ID = 'ORD-{stem.upper()}-0427'  # 375 ms"
        body[lines // 2 + 1] = f"{lines // 2 + 1:>5}  # the {stem} module calls frobnicate_{stem}"
        return f"# {path}\n" + "\n".join(body)

    @server.tool()
    def escapes() -> str:
        """Return text full of terminal escapes and markup."""
        return "\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 [bold]markup[/bold] \x1b[2J done"

    @server.tool()
    async def slow(seconds: float = 30.0) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool()
    def crash() -> str:
        """Kill this server mid-call."""
        sys.stderr.write("crashing now\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    def env() -> str:
        """This process's environment as JSON."""
        return json.dumps(dict(os.environ))

    @server.tool()
    def pid() -> str:
        """This process's id."""
        return str(os.getpid())

    @server.tool()
    def fails() -> str:
        """Raise an error (the result comes back with is_error)."""
        raise RuntimeError("the tool failed on purpose")

    return server


def main(argv: list[str]) -> int:
    kind = argv[1] if len(argv) > 1 else "tools"
    if kind == "fail":
        sys.stderr.write("fatal: cannot open the database /nowhere/db\n")
        return 2
    if kind == "hang":
        time.sleep(3600)
        return 0
    if kind == "garbage":
        sys.stdout.write('this is not JSON-RPC\n{"broken": \n')
        sys.stdout.flush()
    if kind == "stubborn":
        # Holds its own stdin open for writing (Linux): it never sees the pipe close when
        # tui-chat dies, as a server behind a wrapper would not; only a kill ends it.
        os.open(f"/proc/{os.getpid()}/fd/0", os.O_WRONLY)
    if kind == "http":
        build("http").run("streamable-http", host="127.0.0.1", port=int(argv[2]))
        return 0
    build(kind).run()
    return 0


if __name__ == "__main__":
    import mcp_zygote  # beside this file: served by a fork of the test process's zygote

    mcp_zygote.hand_over(sys.argv)  # returns only when there is none
    sys.exit(main(sys.argv))
