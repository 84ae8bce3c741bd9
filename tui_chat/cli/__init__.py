"""The ``tui-chat`` command: the TUI with no subcommand, a scriptable CLI otherwise.

Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 usage error, 130 interrupted.
Importing this package stays light: the engine, the SDK and Textual load only when a command
runs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from tui_chat.cli.commands import HANDLERS, CliError
from tui_chat.cli.parser import Args, build_parser
from tui_chat.config import ConfigError, load_config

__all__ = ["main"]


async def _run(command: str, args: Args) -> int:
    """Open the service, run one subcommand's handler, close the service."""
    from tui_chat.engine.failures import is_database_damage
    from tui_chat.engine.service import ChatService

    config = load_config()
    path = args.db or config.db_path
    try:
        service = await ChatService.open(config, path)
        try:
            return await HANDLERS[command](service, args)
        finally:
            await service.close()
    except Exception as exc:
        # Damage the open-time check could not see (it reads only the header and schema).
        if not is_database_damage(exc):
            raise
        raise CliError(
            f"{path} is damaged ({exc}); it was not changed. "
            "`tui-chat doctor` checks it; restore a backup or try `sqlite3 FILE .recover`."
        ) from None


def _fail(reason: str) -> int:
    print(f"tui-chat: {reason}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Args:
        argv: The arguments after the program name; by default ``sys.argv[1:]``.
    """
    args = build_parser().parse_args(argv, namespace=Args())
    command = args.command
    if command is None or command == "open":
        from tui_chat.engine.failures import one_line

        try:
            config = load_config()
        except ConfigError as exc:
            return _fail(one_line(exc))
        from tui_chat.tui import run_app

        return run_app(config, args.db, args.conv if command == "open" else None)
    try:
        return asyncio.run(_run(command, args))
    except KeyboardInterrupt:
        print("tui-chat: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every failure becomes one clear line
        from tui_chat.engine.failures import failure_line

        return _fail(failure_line(exc))
