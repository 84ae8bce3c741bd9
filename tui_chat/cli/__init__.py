"""The ``tui-chat`` command: the TUI with no subcommand, a scriptable CLI otherwise.

Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 usage error, 130 interrupted.
Importing this package stays light: the engine, the SDK, Textual and the subcommands' handlers
load only when a command runs (the TUI never loads the handlers).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from tui_chat import paths
from tui_chat.child_env import hide
from tui_chat.cli.logs import send_logs_to_file
from tui_chat.cli.parser import Args, build_parser
from tui_chat.cli.process import Stopped, silence_stdout, stop_on_signals
from tui_chat.config import Config, ConfigError, load_config

__all__ = ["main"]


async def _run(command: str, args: Args, config: Config) -> int:
    """Open the service, run one subcommand's handler, close the service.

    SIGTERM and SIGHUP stop it cleanly (:class:`~tui_chat.cli.process.Stopped`); database
    errors a user can act on (read-only, full disk, a folder) become one line with the path.
    """
    import sqlite3

    from tui_chat.cli.commands import HANDLERS, CliError  # the TUI needs none of them
    from tui_chat.engine.failures import database_problem, is_database_damage
    from tui_chat.engine.service import ChatService
    from tui_chat.files import TargetExistsError

    path = args.db or config.db_path
    access = None
    with stop_on_signals():
        try:
            service = await ChatService.open(config, path)
            access = service.access
            service.subscribe(_say_notice)  # e.g. compaction fell back to another summarizer
            try:
                return await HANDLERS[command](service, args)
            finally:
                for notice in service.notices:  # e.g. a conversation's invalid settings
                    print(f"tui-chat: warning: {notice}", file=sys.stderr)
                await service.close()
        except TargetExistsError as exc:
            raise CliError(f"{exc}; pass --force to replace it") from None
        except Exception as exc:
            # Damage the open-time check could not see (it reads only the header and schema).
            if is_database_damage(exc):
                raise CliError(
                    f"{path} is damaged ({exc}); it was not changed. "
                    "`tui-chat doctor` checks it; restore a backup or try `sqlite3 FILE .recover`."
                ) from None
            # An OSError after the open is about another file (an export): said as it is.
            about_database = isinstance(exc, sqlite3.Error) or access is None
            line = database_problem(exc, path, access) if about_database else None
            if line is None:
                raise
            raise CliError(line) from None


def _say_notice(event: object) -> None:
    """A notice of an engine event (said once by the engine), on stderr."""
    notice = getattr(event, "notice", None)
    if isinstance(notice, str) and notice:
        print(f"tui-chat: note: {notice}", file=sys.stderr, flush=True)


def _fail(reason: str) -> int:
    print(f"tui-chat: {reason}", file=sys.stderr)
    return 1


FRAMES_PER_SECOND = 120
"""The TUI's frame rate limit (Textual's ``TEXTUAL_FPS``; its default is 60)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Args:
        argv: The arguments after the program name; by default ``sys.argv[1:]``.
    """
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal gets \u escapes, no crash
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    args = build_parser().parse_args(argv, namespace=Args())
    command = args.command
    try:
        config = load_config()
    except ConfigError as exc:
        from tui_chat.engine.failures import error_line

        return _fail(error_line(exc))
    for warning in config.warnings:
        print(f"tui-chat: warning: {warning}", file=sys.stderr)
    hide(config.api_key)  # no child process gets it, under whatever name it came
    send_logs_to_file(paths.log_path())  # warnings never print over the TUI
    if command is None or command == "open":
        # Start-up allocates much and frees little: the cyclic collector would only walk the
        # new modules and widgets again and again (about 10 % of the first frame's CPU time).
        # The app turns it back on once its first frame is drawn.
        gc.disable()
        # Textual draws at most 60 frames a second: a key's echo waits up to 16.7 ms for the
        # next one. At 120, keys typed while a reply streams were echoed sooner in each of
        # three back-to-back pairs (p95 34.1/26.3/27.7 -> 28.7/22.0/18.5 ms at 120x36;
        # docs/decisions/frame-rate.md). Read when Textual is first imported; a TEXTUAL_FPS
        # the user set wins.
        os.environ.setdefault("TEXTUAL_FPS", str(FRAMES_PER_SECOND))
        try:
            from tui_chat.tui import run_app

            return run_app(config, args.db, args.conv if command == "open" else None)
        finally:
            gc.enable()
    try:
        return asyncio.run(_run(command, args, config))
    except KeyboardInterrupt:
        print("tui-chat: interrupted", file=sys.stderr)
        return 130
    except Stopped as exc:
        print(f"tui-chat: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `tui-chat list | head`: the reader has what it wanted
        silence_stdout()
        return 0
    except Exception as exc:  # every failure becomes one clear line
        from tui_chat.engine.failures import failure_line

        return _fail(failure_line(exc))
