"""Runs ``python -m tui_chat`` commands as forks of one process that imported the CLI already.

Every command of the CLI tests is its own process, with its own exit code, standard streams
and environment, as ``subprocess.run([sys.executable, "-m", "tui_chat", ...])`` makes it, but
it is forked from a *zygote* started once per test process: the SDK, the engine and the
tokenizer's table are imported and read once, not for each of the suite's hundreds of commands
(a command's start-up is about a second of CPU, most of a short command). What start-up
itself does is tested with real ``python -m tui_chat`` processes (``run(..., fresh=True)``).

The zygote never starts a thread or an event loop, so a fork is safe; each child seeds
``random`` again (a fork copies its state) and ends as a process does (``sys.exit``).
"""

from __future__ import annotations

import atexit
import gc
import json
import locale
import os
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, BinaryIO


def _child(request: dict[str, Any]) -> int:
    """In the forked child: run ``python -m tui_chat ARGS``; its exit code (the caller exits
    with it as a process does: atexit handlers, threads joined, streams flushed)."""
    import random

    random.seed()  # a fork copies the zygote's state
    os.umask(request["umask"])  # the caller's, as a process it started would have
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name, mode in (
        (0, "stdin", os.O_RDONLY),
        (1, "stdout", os.O_WRONLY),
        (2, "stderr", os.O_WRONLY),
    ):
        opened = os.open(request[name], mode)
        os.dup2(opened, fd)
        os.close(opened)
    encoding = request["encoding"]
    sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.argv = [sys.executable, *request["args"]]
    from tui_chat.cli import main

    try:
        return main(request["args"])
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1


PRELOADED = (
    "anthropic",  # the SDK (the client imports it when it first sends)
    "tui_chat.cli",
    "tui_chat.cli.commands",
    "tui_chat.engine.service",
    "tui_chat.llm.client",
)
"""What the zygote imports before it forks."""


def serve() -> None:
    """The zygote: import what a command needs, then fork one child per request line."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    import anthropic

    from tui_chat.core.tokens import get_counter

    get_counter().count("warm")  # reads the tokenizer's table once
    anthropic.AsyncAnthropic(api_key="unused")  # builds the SDK's models' schemas (no I/O)
    gc.freeze()  # a child's collections leave the zygote's objects (and their pages) alone
    inbox: BinaryIO = sys.stdin.buffer
    outbox: BinaryIO = sys.stdout.buffer
    outbox.write(b"ready\n")
    outbox.flush()
    for line in inbox:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            sys.exit(_child(request))
        outbox.write(f"{pid}\n".encode())
        outbox.flush()
        _, status = os.waitpid(pid, 0)
        outbox.write(f"{os.waitstatus_to_exitcode(status)}\n".encode())
        outbox.flush()


_UMASK_LOCK = threading.Lock()


def _caller_umask() -> int:
    """This process's umask (read by setting it and setting it back: under a lock, so two
    threads starting commands at once cannot leave each other's read behind as the umask)."""
    with _UMASK_LOCK:
        umask = os.umask(0o022)
        os.umask(umask)
    return umask


class Zygote:
    """The client side: one zygote per test process, started on first use."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
            env.pop("TUI_CHAT_HOME", None)
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.integration.cli_runner"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,  # select() sees every line: nothing waits in a buffer
                cwd=Path(__file__).resolve().parents[2],
                env=env,
            )
            assert self._process.stdout is not None
            if self._process.stdout.readline() != b"ready\n":
                raise RuntimeError("the CLI zygote did not start")
            atexit.register(self.close)
        return self._process

    def run(
        self, args: list[str], env: dict[str, str], stdin: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """What ``subprocess.run([python, -m, tui_chat, *args], text=True,
        capture_output=True)`` returns, from a fork of the zygote."""
        encoding = env.get("PYTHONIOENCODING") or locale.getpreferredencoding(False)
        with self._lock, tempfile.TemporaryDirectory() as tmp:
            files = {name: Path(tmp, name) for name in ("stdin", "stdout", "stderr")}
            files["stdin"].write_text(stdin or "", encoding=encoding)
            for name in ("stdout", "stderr"):
                files[name].touch()
            umask = _caller_umask()
            request = {
                "args": args,
                "env": env,
                "umask": umask,
                "cwd": os.getcwd(),
                "encoding": encoding,
                **{name: str(path) for name, path in files.items()},
            }
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            pid = int(process.stdout.readline())
            ready, _, _ = select.select([process.stdout], [], [], timeout)
            if not ready:
                os.kill(pid, 9)
                process.stdout.readline()
                raise subprocess.TimeoutExpired(args, timeout)
            returncode = int(process.stdout.readline())
            out = files["stdout"].read_text(encoding=encoding, errors="replace")
            err = files["stderr"].read_text(encoding=encoding, errors="replace")
        return subprocess.CompletedProcess(args, returncode, out, err)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=30)


class Zygotes:
    """Zygotes for commands run at the same time (from several threads): each run takes an
    idle zygote, or starts one, so two commands are two processes running at once, as two
    ``subprocess.run`` calls from two threads are."""

    def __init__(self) -> None:
        self._idle: list[Zygote] = []
        self._lock = threading.Lock()

    def run(
        self, args: list[str], env: dict[str, str], stdin: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """See :meth:`Zygote.run`."""
        with self._lock:
            zygote = self._idle.pop() if self._idle else Zygote()
        try:
            return zygote.run(args, env, stdin, timeout)
        finally:
            with self._lock:
                self._idle.append(zygote)


ZYGOTE = Zygotes()


if __name__ == "__main__":
    serve()
