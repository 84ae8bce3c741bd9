"""One MCP server: its process or HTTP session, its tools, its calls.

A server runs in a task of its own, which holds the SDK's client open (the SDK's transports
are anyio contexts: entered and left by one task) until :meth:`McpServer.stop`. A stdio
server's process gets a minimal environment (:func:`tui_chat.child_env.child_env`),
its stderr goes to a private temporary file whose tail explains a failure, and on Linux it is
started through a guard that has the kernel kill it when tui-chat dies (``PR_SET_PDEATHSIG``),
so no server outlives the app, however the app ends.

The ``mcp`` SDK is imported here, only when a server starts (:meth:`McpServer.run`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Literal

from tui_chat.child_env import child_env
from tui_chat.core.tools import BASE_ENV_KEYS, ServerSpec, namespaced

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["GUARD", "McpServer", "ServerState", "ToolCallFailed", "ToolInfo"]

ServerState = Literal["starting", "ready", "failed", "stopped"]

STDERR_TAIL = 2_000
"""Characters of a server's stderr shown with its failure."""

STOP_WAIT = 5.0
"""Seconds a server is given to stop before its task is cancelled."""

GUARD = (
    "import ctypes,os,signal,sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot run {sys.argv[2]!r}: {exc.strerror}\\n')\n"
    "    os._exit(127)\n"
)
"""Runs a server's command so that the kernel kills it when its parent dies (Linux)."""


class ToolCallFailed(Exception):
    """A call that produced no result: the server crashed, timed out or is not running."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool of a server, as listed."""

    server: str
    name: str
    """The server's own name for it."""
    api_name: str
    """The name it is sent under (``server__tool``)."""
    description: str
    input_schema: dict[str, Any]

    def definition(self) -> dict[str, Any]:
        """Its definition in a Messages request."""
        schema = self.input_schema if self.input_schema.get("type") == "object" else {}
        return {
            "name": self.api_name,
            "description": self.description,
            "input_schema": schema or {"type": "object", "properties": {}},
        }


class McpServer:
    """One configured server and its connection."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.state: ServerState = "starting"
        self.error: str | None = spec.problem
        self.tools: tuple[ToolInfo, ...] = ()
        self.started_at = 0.0
        self.ready_in: float | None = None
        self._client: Client | None = None
        self._stderr: IO[str] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self) -> None:
        """Start its task (once)."""
        if self._task is None:
            self.started_at = time.monotonic()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def wait_ready(self) -> None:
        """Until it is ready or has failed."""
        await self._ready.wait()

    def stderr_tail(self) -> str:
        """The end of what a stdio server wrote to stderr."""
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_TAIL * 4))
            return self._stderr.read()[-STDERR_TAIL:].strip()
        return ""

    def _fail(self, message: str) -> None:
        tail = self.stderr_tail()
        self.error = f"{message}\n{tail}" if tail else message
        self.state = "failed"
        self.tools = ()
        self._ready.set()

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        spec = self.spec
        if spec.transport == "http":
            http = create_mcp_http_client(headers=dict(spec.headers))
            return streamable_http_client(spec.url, http_client=http)
        command, args = spec.command, list(spec.args)
        if sys.platform.startswith("linux"):
            args = ["-c", GUARD, str(os.getpid()), command, *args]
            command = sys.executable
        # Kept open while the server runs (its tail explains a failure); gone when closed.
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=command,
            args=args,
            env=child_env(spec.env, only=BASE_ENV_KEYS),  # never the key
            cwd=os.path.expanduser(spec.cwd) if spec.cwd else None,
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=self._stderr)

    async def _run(self) -> None:
        if self.spec.problem:
            self._fail(self.spec.problem)
            return
        try:
            # About two seconds of imports: in a thread, never on the event loop (the TUI's).
            await asyncio.to_thread(importlib.import_module, "mcp.client.streamable_http")
            from mcp import Client

            async with asyncio.timeout(self.spec.start_timeout):
                client = Client(self._transport(), mode="legacy", raise_exceptions=False)
                await client.__aenter__()
            try:
                async with asyncio.timeout(self.spec.start_timeout):
                    listed = await _list_all(client)
                self.tools = tuple(
                    ToolInfo(
                        self.name,
                        tool.name,
                        namespaced(self.name, tool.name),
                        tool.description or "",
                        dict(tool.input_schema or {}),
                    )
                    for tool in listed
                )
                self._client = client
                self.state = "ready"
                self.ready_in = time.monotonic() - self.started_at
                self._ready.set()
                await self._stop.wait()
            finally:
                self._client = None
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(STOP_WAIT):
                        await client.__aexit__(None, None, None)
        except TimeoutError:
            self._fail(f"did not start within {self.spec.start_timeout:g} s")
        except asyncio.CancelledError:
            self._fail("stopped")
            raise
        except Exception as exc:
            self._fail(f"failed: {_reason(exc)}")
        else:
            self.state = "stopped"
            self._ready.set()
        if self.state == "ready":
            self.state = "stopped"
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """Call ``tool``; the SDK's ``CallToolResult``.

        Raises:
            ToolCallFailed: not running, crashed mid-call, or past the per-call timeout.
        """
        client = self._client
        if client is None or self.state != "ready":
            raise ToolCallFailed(f"the server {self.name!r} is not running ({self.state})")
        limit = self.spec.call_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(limit):
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            raise ToolCallFailed(f"no answer within {limit:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = f"the call failed: {_reason(exc)}"
            tail = self.stderr_tail()
            raise ToolCallFailed(f"{message}\n{tail}" if tail else message) from None

    async def stop(self) -> None:
        """Stop it (its process ended, its session closed); waits at most a few seconds."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            async with asyncio.timeout(STOP_WAIT):
                await asyncio.shield(task)
        except (TimeoutError, Exception):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def _list_all(client: Client) -> list[Any]:
    """Every tool, page after page."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _reason(exc: BaseException) -> str:
    """A one-line reason (an exception group's first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
