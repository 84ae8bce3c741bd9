"""The command line's grammar: :func:`build_parser` and the typed result :class:`Args`."""

from __future__ import annotations

import argparse
import re
from datetime import date
from pathlib import Path

__all__ = ["Args", "build_parser"]


class Args(argparse.Namespace):
    """The parsed command line, typed.

    Every option of every command is declared here; a command sets only its own, so a
    handler reads only the attributes its command defines.
    """

    db: Path | None
    """``--db``: the database file instead of the configured one."""
    command: str | None
    """The subcommand; ``None`` opens the TUI."""
    as_json: bool
    """``--json``: print JSON instead of text."""
    conv: str
    """The conversation (id, unique prefix or ``last``) a command works on."""
    within: str | None
    """``-c/--conv`` of ``send`` and ``search``: the conversation, when given."""
    new: bool
    model: str | None
    system: str | None
    text: str
    include_archived: bool
    branches: bool
    """``list --branches``: a line per branch, not per family."""
    query: str
    limit: int
    key: str
    value: str
    draft: str | None
    count: bool
    """``context --count``: have the API count the request first and learn from it."""
    instructions: str | None
    version: int
    message_id: int
    note: str
    fmt: str | None
    output: Path | None
    file: Path
    attach: list[Path]
    """``send --attach``: files sent with the message (repeatable)."""
    upto: int | None
    """``compact --upto``: fold every whole turn up to this message's turn."""
    dry_run: bool
    """``compact --dry-run``: say what it would fold and lose; compact nothing."""
    at: int
    """``fork --at``: the last message the fork holds."""
    title: str | None
    branch: str
    """``switch``: the branch to show (id, unique prefix or its number in ``branches``)."""
    force: bool
    """``export -o``/``backup --force``: replace an existing file (never following a link);
    ``import --force``: import a file imported before again."""
    repair: bool
    """``doctor --repair``: rebuild the search index from the messages."""
    refresh: bool
    """``models --refresh``: read the endpoint's model list now."""
    month: bool
    """``usage --month``: a row per month instead of per day."""
    since: str | None
    """``usage --since``: the first local day counted (``YYYY-MM-DD``)."""
    allow_tools: bool
    """``send --allow-tools``: run every tool call of this send (none runs without it)."""
    mcp_command: str | None
    """``mcp list``: the MCP subcommand."""


def since_day(value: str) -> str:
    """``--since``: a day (``2026-11-01``) or a month (``2026-11``, its first day)."""
    if not re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", value):
        raise argparse.ArgumentTypeError(f"{value!r}: give a day (2026-11-01) or a month (2026-11)")
    day = value if len(value) == 10 else f"{value}-01"
    try:
        date.fromisoformat(day)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: no such day") from None
    return day


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", dest="as_json", action="store_true")


def _force_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force", action="store_true", help="replace an existing file (a symlink is replaced)"
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``tui-chat`` parser; parse into an :class:`Args` (``namespace=Args()``)."""
    parser = argparse.ArgumentParser(
        prog="tui-chat",
        description="A terminal chat client for Claude with open, versioned context compaction.",
    )
    parser.add_argument("--db", type=Path, help="database file (default: the user data dir)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("open", help="open the TUI on a conversation")
    p.add_argument("conv", metavar="CONV")

    p = sub.add_parser("send", help="send a message and print the reply")
    target = p.add_mutually_exclusive_group()
    target.add_argument(
        "-c", "--conv", dest="within", metavar="CONV", help="conversation (default: last)"
    )
    target.add_argument("--new", action="store_true", help="start a new conversation")
    p.add_argument("--model", help="model for a new conversation")
    p.add_argument("--system", help="system prompt for a new conversation")
    p.add_argument(
        "--attach",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="attach an image (PNG, JPEG, GIF, WebP), a PDF or a text file (repeatable)",
    )
    p.add_argument(
        "--allow-tools",
        action="store_true",
        help="run the MCP tool calls of this send (without it each is answered: needs approval)",
    )
    _json_flag(p)
    p.add_argument("text", metavar="TEXT", help="the message, or - to read standard input")

    p = sub.add_parser("fork", help="a new conversation with the messages up to MSG")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--at", type=int, required=True, metavar="MSG", help="its last message")
    p.add_argument("--title", help="the fork's title (default: the parent's + ' (fork)')")
    _json_flag(p)

    p = sub.add_parser("branches", help="a conversation's branches (edits and forks) as a tree")
    p.add_argument("conv", metavar="CONV", nargs="?", default="last")
    _json_flag(p)

    p = sub.add_parser("switch", help="show BRANCH when the conversation is opened")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("branch", metavar="BRANCH", help="its id, a unique prefix or its number")

    p = sub.add_parser("retry", help="ask again for the reply to the last message")
    p.add_argument("conv", metavar="CONV", nargs="?", default="last")
    _json_flag(p)

    p = sub.add_parser("list", help="list conversations (one line per family of branches)")
    p.add_argument(
        "--all", dest="include_archived", action="store_true", help="include archived conversations"
    )
    p.add_argument(
        "--branches", action="store_true", help="a line for every branch (--json always has them)"
    )
    _json_flag(p)

    p = sub.add_parser("show", help="show a conversation's messages")
    p.add_argument("conv", metavar="CONV")
    _json_flag(p)

    p = sub.add_parser("search", help="full-text search across conversations")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("-c", "--conv", dest="within", metavar="CONV", help="search one conversation")
    p.add_argument("--limit", type=int, default=50)
    _json_flag(p)

    p = sub.add_parser("set", help="set a conversation setting (model, system, preset, …)")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("key", metavar="KEY")
    p.add_argument("value", metavar="VALUE")

    p = sub.add_parser("context", help="the exact next request and its token breakdown")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--message", dest="draft", help="a draft to include as the new message")
    p.add_argument(
        "--count",
        action="store_true",
        help="have the API count the request first (count_tokens; needs a key) and learn from it",
    )
    _json_flag(p)

    p = sub.add_parser("compact", help="compact now and print the new version")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--instructions", help="instructions for the summarizer")
    p.add_argument(
        "--upto", type=int, metavar="MSG", help="fold every whole turn up to this message's turn"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only say what it would fold and what the next request would lose by it",
    )
    p.add_argument("--draft", metavar="TEXT", help="--dry-run: the message you are about to send")
    _json_flag(p)

    p = sub.add_parser("summaries", help="list summary versions")
    p.add_argument("conv", metavar="CONV")
    _json_flag(p)

    p = sub.add_parser("summary", help="show one summary version")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION")
    _json_flag(p)

    p = sub.add_parser("rollback", help="put an earlier (or later) version in force")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION", help="0 sends no summary at all")

    p = sub.add_parser("regenerate", help="a new version over the same span as VERSION")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION")
    p.add_argument("--instructions", help="e.g. 'keep every SQL statement'")
    _json_flag(p)

    p = sub.add_parser("pin", help="pin a message (always sent verbatim)")
    p.add_argument("message_id", type=int, metavar="MESSAGE_ID")
    p.add_argument("--note", default="")

    p = sub.add_parser("unpin", help="unpin a message")
    p.add_argument("message_id", type=int, metavar="MESSAGE_ID")

    p = sub.add_parser(
        "delete", aliases=["rm"], help="delete a message (with its tool call or result)"
    )
    p.add_argument("message_id", type=int, metavar="MESSAGE_ID")
    _json_flag(p)

    p = sub.add_parser("archive", help="hide a conversation from the list (kept; list --all)")
    p.add_argument("conv", metavar="CONV")

    p = sub.add_parser("unarchive", help="bring an archived conversation back to the list")
    p.add_argument("conv", metavar="CONV")

    p = sub.add_parser("export", help="export a conversation")
    p.add_argument("conv", metavar="CONV")
    p.add_argument(
        "--format",
        dest="fmt",
        choices=("json", "md", "html"),
        help="default: json for an -o file ending .json, html for .html, else md",
    )
    p.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    _force_flag(p)

    p = sub.add_parser("import", help="import our JSON or an Anthropic Messages list")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument(
        "--force", action="store_true", help="import a file imported before again (a copy)"
    )
    _json_flag(p)

    p = sub.add_parser("models", help="models with their window, output limit and features")
    p.add_argument(
        "--refresh", action="store_true", help="read the endpoint's list now (else once a day)"
    )
    _json_flag(p)

    p = sub.add_parser("usage", help="what replies and summaries cost, per day or month")
    p.add_argument("--month", action="store_true", help="a row per month (default: per day)")
    p.add_argument("--since", type=since_day, metavar="DAY", help="from this day or month on")
    _json_flag(p)

    p = sub.add_parser("doctor", help="check paths, key, tokenizer, database and search index")
    _json_flag(p)
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild the search index from the messages (which are not changed)",
    )

    p = sub.add_parser("mcp", help="the MCP servers of mcp.json (beside config.toml)")
    mcp = p.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    p = mcp.add_parser("list", help="each server: its state, its tools, what they cost")
    _json_flag(p)

    p = sub.add_parser("backup", help="copy the database with SQLite's online backup")
    p.add_argument("file", type=Path, metavar="FILE")
    _force_flag(p)
    return parser
