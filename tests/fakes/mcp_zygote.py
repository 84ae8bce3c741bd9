"""Starts the test MCP servers (``mcp_servers.py``) as forks of one process that imported the
SDK already.

A stdio server the engine starts is its own process with its own pipes and environment, as
always: ``python mcp_servers.py KIND`` (run through the engine's guard). But importing the
SDK's server side costs about 0.7 s of CPU, most of a short test's; so, on Linux, a test process
keeps one *zygote* that imported it (started by ``mcp_fixtures.stdio``, once). The server
process first asks the zygote of its parent (the test process) for a fork
(:func:`hand_over`): it passes its standard streams, arguments, environment, working
directory and umask; the fork serves on those streams; the server process waits for the fork
and ends as it ended (its exit code, or the signal that killed it). Killed itself (the
engine's ``terminate``, or the kernel when the engine's process dies), the server process's
fork is killed too. With no zygote (a ``tui-chat`` process started by a test, another
platform, a zygote still importing) the server process serves itself, as before.

The zygote never starts a thread or an event loop, so a fork is safe.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!i")
_STREAMS = 3  # stdin, stdout, stderr


def address(owner: int) -> str:
    """The zygote's socket of test process ``owner`` (Linux's abstract namespace: no file)."""
    return f"\0tui-chat-mcp-zygote-{os.getuid()}-{owner}"


# -- the server process's side ----------------------------------------------------------------


def hand_over(argv: list[str]) -> None:
    """Serve ``argv`` in a fork of the parent's zygote and end as the fork ended (its exit
    code; a signal that killed it kills this process the same way). Returns only when there
    is no zygote to ask."""
    if not sys.platform.startswith("linux"):
        return
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(address(os.getppid()))
    except OSError:
        conn.close()
        return
    request = json.dumps(
        {
            "argv": argv,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "umask": _umask(),
        }
    ).encode()
    fds = array.array("i", range(_STREAMS))
    conn.sendmsg(
        [_HEADER.pack(len(request)), request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]
    )
    for fd in range(_STREAMS):  # only the fork holds the pipes now: their ends close with it
        os.close(fd)
    status = _read(conn, _STATUS.size)
    if len(status) < _STATUS.size:  # the zygote died before the fork ended
        os._exit(1)
    (code,) = _STATUS.unpack(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


# -- the test process's side ------------------------------------------------------------------

_started: subprocess.Popen[bytes] | None = None


def ensure_started() -> None:
    """Start this test process's zygote once (Linux; elsewhere every server serves itself).

    Nothing waits for it: a server started while it still imports serves itself."""
    global _started
    if _started is not None or not sys.platform.startswith("linux"):
        return
    _started = subprocess.Popen(
        [sys.executable, str(Path(__file__)), str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    atexit.register(_stop, _started)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()


# -- the zygote -------------------------------------------------------------------------------


def _child(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> int:
    """In the fork: become the server process that asked, and serve."""
    import mcp_servers

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.umask(request["umask"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.argv = list(request["argv"])

    def watch() -> None:  # the server process gone (killed): so is this fork
        with contextlib.suppress(OSError):
            while conn.recv(1):
                pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True).start()
    try:
        return mcp_servers.main(sys.argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1


def _serve(owner: int) -> None:
    with contextlib.suppress(Exception):  # the kernel ends the zygote with its test process
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    if os.getppid() != owner:
        return
    import anyio._backends._asyncio  # noqa: F401  (what a server's run imports first)
    import mcp.server.stdio  # noqa: F401
    import mcp_servers

    mcp_servers.build("warm")
    import gc

    gc.freeze()  # a fork's collections leave the zygote's objects (and their pages) alone
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address(owner))
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                pid = _fork(conn, [listener, wake_read, wake_write, *waiting.values()])
                if pid is None:
                    conn.close()
                else:
                    waiting[pid] = conn
            else:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 512)
        _reap(waiting)


def _fork(conn: socket.socket, inherited: list[Any]) -> int | None:
    """Read one request and fork its server; the fork's id (``None``: a broken request)."""
    size = socket.CMSG_SPACE(_STREAMS * array.array("i").itemsize)
    data, ancillary, _, _ = conn.recvmsg(_HEADER.size, size)
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += array.array("i", payload[: len(payload) - len(payload) % 4]).tolist()
    if len(data) < _HEADER.size or len(fds) != _STREAMS:
        for fd in fds:
            os.close(fd)
        return None
    (length,) = _HEADER.unpack(data)
    request = json.loads(_read(conn, length))
    pid = os.fork()
    if pid == 0:
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for held in inherited:
                if isinstance(held, int):
                    os.close(held)
                else:
                    held.close()
            code = _child(conn, request, fds)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code & 0xFF)
    for fd in fds:
        os.close(fd)
    return pid


def _reap(waiting: dict[int, socket.socket]) -> None:
    """Tell each server process whose fork ended how it ended."""
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.sendall(_STATUS.pack(os.waitstatus_to_exitcode(status)))
            conn.close()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
