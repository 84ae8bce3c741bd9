"""The ``tui-chat`` command: the TUI with no subcommand, a scriptable CLI otherwise.

Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from tui_chat.config import ConfigError, load_config
from tui_chat.core.inert import inert

Handler = Callable[[Any, argparse.Namespace], Awaitable[int]]


class CliError(Exception):
    """A failure to report on stderr with exit code 1."""


def _parser() -> argparse.ArgumentParser:
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
    target.add_argument("-c", "--conv", metavar="CONV", help="conversation (default: last)")
    target.add_argument("--new", action="store_true", help="start a new conversation")
    p.add_argument("--model", help="model for a new conversation")
    p.add_argument("--system", help="system prompt for a new conversation")
    p.add_argument("--json", action="store_true")
    p.add_argument("text", metavar="TEXT", help="the message, or - to read standard input")

    p = sub.add_parser("retry", help="ask again for the reply to the last message")
    p.add_argument("conv", metavar="CONV", nargs="?", default="last")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("list", help="list conversations")
    p.add_argument("--all", action="store_true", help="include archived conversations")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("show", help="show a conversation's messages")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("search", help="full-text search across conversations")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("-c", "--conv", metavar="CONV", help="search one conversation")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("set", help="set a conversation setting (model, system, preset, …)")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("key", metavar="KEY")
    p.add_argument("value", metavar="VALUE")

    p = sub.add_parser("context", help="the exact next request and its token breakdown")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--message", help="a draft to include as the new message")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("compact", help="compact now and print the new version")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--instructions", help="instructions for the summarizer")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("summaries", help="list summary versions")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("summary", help="show one summary version")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("rollback", help="put an earlier (or later) version in force")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION", help="0 sends no summary at all")

    p = sub.add_parser("regenerate", help="a new version over the same span as VERSION")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("version", type=int, metavar="VERSION")
    p.add_argument("--instructions", help="e.g. 'keep every SQL statement'")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("pin", help="pin a message (always sent verbatim)")
    p.add_argument("message_id", type=int, metavar="MESSAGE_ID")
    p.add_argument("--note", default="")

    p = sub.add_parser("unpin", help="unpin a message")
    p.add_argument("message_id", type=int, metavar="MESSAGE_ID")

    p = sub.add_parser("export", help="export a conversation")
    p.add_argument("conv", metavar="CONV")
    p.add_argument("--format", choices=("json", "md"), default="md")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")

    p = sub.add_parser("import", help="import our JSON or an Anthropic Messages list")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("doctor", help="check paths, key, tokenizer and database")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("backup", help="copy the database with SQLite's online backup")
    p.add_argument("file", type=Path, metavar="FILE")
    return parser


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
"""json.dumps leaves DEL and the C1 controls (U+0080-U+009F, e.g. CSI) raw; a terminal may act
on them, so JSON for the terminal escapes them too (still the same JSON)."""


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2).translate(_C1_ESCAPES)


def _json_out(value: Any) -> None:
    _out(_json_text(value))


def message_json(message: Any, pinned: set[int]) -> dict[str, Any]:
    """The stable JSON shape of a message (``show --json``)."""
    return {
        "id": message.id,
        "role": message.role,
        "text": message.text,
        "content": message.content,
        "token_count": message.token_count,
        "status": message.status,
        "pinned": message.id in pinned,
        "turn": message.turn,
        "model": message.model,
        "usage": message.usage.to_dict() if message.usage else None,
        "stop_reason": message.stop_reason,
        "error": message.error,
        "created_at": message.created_at,
    }


def conversation_json(conversation: Any) -> dict[str, Any]:
    """The stable JSON shape of a conversation."""
    return {
        "id": conversation.id,
        "title": conversation.title,
        "model": conversation.model,
        "system": conversation.system_prompt,
        "settings": conversation.settings,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "archived": conversation.archived_at is not None,
        "active_summary_id": conversation.active_summary_id,
    }


def summary_json(summary: Any, active_id: int | None, versions: dict[int, int]) -> dict[str, Any]:
    """The stable JSON shape of a summary version (``summaries --json``)."""
    return {
        "version": summary.version,
        "active": summary.id == active_id,
        "status": summary.status,
        "strategy": summary.strategy,
        "trigger": summary.trigger,
        "covers_to_message_id": summary.covers_to_message_id,
        "covered_messages": summary.covered_messages,
        "source_tokens": summary.source_tokens,
        "summary_tokens": summary.summary_tokens,
        "reduction": round(summary.reduction, 4),
        "summarizer": summary.summarizer,
        "identifiers_kept": summary.identifiers_kept,
        "identifiers_total": summary.identifiers_total,
        "parent_version": versions.get(summary.parent_id) if summary.parent_id else None,
        "instructions": summary.instructions,
        "error": summary.error,
        "text": summary.text,
        "segments": [s.to_dict() for s in summary.segments],
        "fields": summary.fields,
        "created_at": summary.created_at,
        "completed_at": summary.completed_at,
    }


# -- handlers ------------------------------------------------------------------------------


async def _send(service: Any, args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    if not text.strip():
        raise CliError("the message is empty; nothing was sent")
    if args.new:
        conversation = await service.new_conversation(model=args.model, system=args.system)
    else:
        try:
            conversation = await service.resolve(args.conv or "last")
        except Exception:
            if args.conv:
                raise
            conversation = await service.new_conversation(model=args.model, system=args.system)

    return await _reply(
        service,
        conversation.id,
        args,
        lambda on_event: service.send(conversation.id, text, on_event),
    )


async def _retry(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    return await _reply(
        service, conversation.id, args, lambda on_event: service.retry(conversation.id, on_event)
    )


async def _reply(
    service: Any,
    conversation_id: str,
    args: argparse.Namespace,
    start: Callable[[Callable[[Any], None]], Awaitable[Any]],
) -> int:
    """Stream (or print as JSON) a reply that ``start`` asks for, then report its error."""
    from tui_chat.engine.events import ReplyDelta

    streamed = not args.json

    def on_event(event: Any) -> None:
        if streamed and isinstance(event, ReplyDelta):
            sys.stdout.write(inert(event.text))
            sys.stdout.flush()

    outcome = await start(on_event)
    if streamed:
        sys.stdout.write("\n")
        sys.stdout.flush()
    else:
        pinned: set[int] = set()
        _json_out(
            {
                "conversation_id": conversation_id,
                "user": message_json(outcome.user, pinned) if outcome.user else None,
                "reply": message_json(outcome.reply, pinned),
                "error": None
                if outcome.error is None
                else {
                    "kind": outcome.error.kind,
                    "message": outcome.error.message,
                    "hint": outcome.error.hint,
                },
            }
        )
    # The reply is out; now let any compaction that became due finish before exiting.
    await service.finish_background()
    if outcome.error is not None:
        raise CliError(
            f"{outcome.error.message} — {outcome.error.hint} "
            f"(your message is saved in conversation {conversation_id}; "
            f"reply status: {outcome.reply.status}; `tui-chat retry {conversation_id}` "
            "asks again)"
        )
    return 0


async def _list(service: Any, args: argparse.Namespace) -> int:
    infos = await service.list_conversations(include_archived=args.all)
    if args.json:
        _json_out(
            [
                {
                    **conversation_json(i.conversation),
                    "messages": i.message_count,
                    "tokens": i.token_count,
                }
                for i in infos
            ]
        )
        return 0
    if not infos:
        _out("No conversations yet. Start one with: tui-chat send --new 'hello'")
        return 0
    for info in infos:
        c = info.conversation
        flag = " (archived)" if c.archived_at else ""
        _out(
            f"{c.id}  {c.updated_at[:16].replace('T', ' ')}  {info.message_count:>5} msgs "
            f"{info.token_count:>8} tok  {inert(c.title)}{flag}"
        )
    return 0


async def _show(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    messages = await service.store.messages.history(conversation.id)
    pinned = await service.pinned_ids(conversation.id)
    if args.json:
        _json_out(
            {
                "conversation": conversation_json(conversation),
                "messages": [message_json(m, pinned) for m in messages],
            }
        )
        return 0
    _out(f"# {inert(conversation.title)}  ({conversation.id}, {conversation.model})")
    for m in messages:
        marks = [m.status] if m.status != "complete" else []
        if m.id in pinned:
            marks.append("pinned")
        suffix = f" [{', '.join(marks)}]" if marks else ""
        _out(f"\n--- #{m.id} {m.role} {m.created_at[:19].replace('T', ' ')}{suffix}")
        _out(inert(m.text))
    return 0


async def _search(service: Any, args: argparse.Namespace) -> int:
    conversation_id = (await service.resolve(args.conv)).id if args.conv else None
    hits = await service.search(args.query, conversation_id, limit=args.limit)
    if args.json:
        _json_out(
            [
                {
                    "message_id": h.message_id,
                    "conversation_id": h.conversation_id,
                    "conversation_title": h.conversation_title,
                    "role": h.role,
                    "snippet": h.marked(),
                    "created_at": h.created_at,
                    "rank": h.rank,
                }
                for h in hits
            ]
        )
        return 0
    if not hits:
        _out("No matches.")
    for h in hits:
        _out(f"{h.conversation_id} #{h.message_id} {h.role}: {inert(h.marked())}")
    return 0


async def _set(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    updated = await service.set_setting(conversation.id, args.key, args.value)
    policy = service.policy_for(updated)
    _out(f"{updated.id}: {args.key} = {args.value} (preset {policy.preset})")
    return 0


async def _context(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    built = await service.context(conversation.id, args.message)
    b = built.breakdown
    data = {
        "request": built.request,
        "breakdown": {
            "window": b.window,
            "max_output": b.max_output,
            "usable": b.usable,
            "input_tokens": b.input_tokens,
            "calibrated_tokens": b.calibrated_tokens,
            "trigger_tokens": b.trigger_tokens,
            "warn_tokens": b.warn_tokens,
            "sections": dict(b.sections),
            "warnings": list(b.warnings),
        },
        "sent_message_ids": list(built.sent_message_ids),
        "anchor_ids": list(built.anchor_ids),
        "recalled_ids": list(built.recalled_ids),
        "dropped_message_ids": list(built.dropped_message_ids),
        "fits": built.fits,
        "preset": service.policy_for(conversation).preset,
    }
    if args.json:
        _json_out(data)
        return 0
    _out(f"{conversation.id}  model {conversation.model}  preset {data['preset']}")
    _out(
        f"input {b.input_tokens} tokens (calibrated {b.calibrated_tokens}) of {b.usable} usable "
        f"(window {b.window} - max output {b.max_output})"
    )
    for name, tokens in b.sections.items():
        _out(f"  {name:<12}{tokens:>8}")
    for warning in b.warnings:
        _out(f"warning: {inert(warning)}")
    _out(_json_text(built.request))
    return 0


async def _summary_view(service: Any, conversation_id: str, summary: Any, as_json: bool) -> None:
    conversation = await service.store.conversations.get(conversation_id)
    versions = {s.id: s.version for s in await service.summaries(conversation_id)}
    data = summary_json(summary, conversation.active_summary_id, versions)
    if as_json:
        _json_out(data)
        return
    active = " (active)" if data["active"] else ""
    _out(
        f"version {summary.version}{active}: {summary.status}, {summary.strategy}, "
        f"covers to message #{summary.covers_to_message_id}, "
        f"{summary.source_tokens} -> {summary.summary_tokens} tokens, "
        f"identifiers {summary.identifiers_kept}/{summary.identifiers_total}, "
        f"by {summary.summarizer or '-'}"
    )
    if summary.error:
        _out(f"error: {inert(summary.error)}")
    if summary.text:
        _out("")
        _out(inert(summary.text))


async def _compact(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    summary = await service.compact(conversation.id, args.instructions)
    await _summary_view(service, conversation.id, summary, args.json)
    return 0


async def _summaries(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    summaries = await service.summaries(conversation.id)
    versions = {s.id: s.version for s in summaries}
    rows = [summary_json(s, conversation.active_summary_id, versions) for s in summaries]
    if args.json:
        _json_out(rows)
        return 0
    if not rows:
        _out("No summary versions yet.")
    for r in rows:
        mark = "*" if r["active"] else " "
        parent = f"v{r['parent_version']}" if r["parent_version"] else "-"
        _out(
            f"{mark} v{r['version']:<3} {r['status']:<11} to #{r['covers_to_message_id']:<6} "
            f"{r['source_tokens']:>7} -> {r['summary_tokens']:<6} tok  "
            f"ids {r['identifiers_kept']}/{r['identifiers_total']}  parent {parent}  "
            f"{r['summarizer'] or ''}" + (f"  error: {inert(r['error'])}" if r["error"] else "")
        )
    return 0


async def _summary(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    summary = await service.summary(conversation.id, args.version)
    await _summary_view(service, conversation.id, summary, args.json)
    return 0


async def _rollback(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    summary = await service.activate(conversation.id, args.version)
    if summary is None:
        _out(f"{conversation.id}: no summary in force; the whole history is sent raw")
    else:
        _out(f"{conversation.id}: version {summary.version} is now in force")
    return 0


async def _regenerate(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    summary = await service.regenerate(conversation.id, args.version, args.instructions)
    await _summary_view(service, conversation.id, summary, args.json)
    return 0


async def _pin(service: Any, args: argparse.Namespace) -> int:
    await service.pin(args.message_id, args.note)
    _out(f"pinned message #{args.message_id}")
    return 0


async def _unpin(service: Any, args: argparse.Namespace) -> int:
    if not await service.unpin(args.message_id):
        raise CliError(f"message #{args.message_id} was not pinned")
    _out(f"unpinned message #{args.message_id}")
    return 0


async def _export(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.resolve(args.conv)
    text = await service.export(conversation.id, args.format)
    if args.output:
        import os

        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"exported {conversation.id} to {args.output}", file=sys.stderr)
    else:
        _out(text.translate(_C1_ESCAPES) if args.format == "json" else inert(text))
    return 0


async def _import(service: Any, args: argparse.Namespace) -> int:
    conversation = await service.import_file(args.file)
    count, _ = await service.store.messages.stats(conversation.id)
    if args.json:
        _json_out({**conversation_json(conversation), "messages": count})
    else:
        _out(f"imported {count} messages as {conversation.id} ({inert(conversation.title)})")
    return 0


async def _doctor(service: Any, args: argparse.Namespace) -> int:
    report = await service.doctor()
    if args.json:
        _json_out(report)
    else:
        for key, value in report.items():
            _out(f"{key:<14}{value}")
    return 0 if report["integrity"] == "ok" and str(report["tokenizer"]).startswith("ok") else 1


async def _backup(service: Any, args: argparse.Namespace) -> int:
    await service.store.backup(args.file)
    _out(f"backed up {service.store.path} to {args.file}")
    return 0


HANDLERS: dict[str, Handler] = {
    "send": _send,
    "retry": _retry,
    "list": _list,
    "show": _show,
    "search": _search,
    "set": _set,
    "context": _context,
    "compact": _compact,
    "summaries": _summaries,
    "summary": _summary,
    "rollback": _rollback,
    "regenerate": _regenerate,
    "pin": _pin,
    "unpin": _unpin,
    "export": _export,
    "import": _import,
    "doctor": _doctor,
    "backup": _backup,
}


async def _run(args: argparse.Namespace) -> int:
    from tui_chat.engine.service import ChatService

    config = load_config()
    service = await ChatService.open(config, args.db)
    try:
        return await HANDLERS[args.command](service, args)
    except sqlite3.DatabaseError as exc:
        # Damage the open-time check could not see (it reads only the header and schema).
        if getattr(exc, "sqlite_errorname", "") not in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
            raise
        raise CliError(
            f"{service.store.path} is damaged ({exc}); it was not changed. "
            "`tui-chat doctor` checks it; restore a backup or try `sqlite3 FILE .recover`."
        ) from None
    finally:
        await service.close()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return inert(" ".join(text.split()))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command in (None, "open"):
        try:
            config = load_config()
        except ConfigError as exc:
            print(f"tui-chat: {_reason(exc)}", file=sys.stderr)
            return 1
        from tui_chat.tui import run_app

        return run_app(config, args.db, getattr(args, "conv", None))
    try:
        return asyncio.run(_run(args))
    except KeyboardInterrupt:
        print("tui-chat: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every failure becomes one clear line
        from tui_chat.llm.errors import scrub

        print(f"tui-chat: {scrub(_reason(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
