"""One handler per subcommand: read the arguments, call the engine, print through ``render``.

A handler returns the exit code (0, or 1 for a failed check) and raises on failure; the caller
turns every exception into one line on stderr and exit code 1 (:class:`CliError` is the one
the handlers raise themselves).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_chat.cli import (
    branches_view,
    compaction_view,
    mcp_view,
    models_view,
    render,
    usage_view,
)
from tui_chat.cli.parser import Args
from tui_chat.cli.process import silence_stdout
from tui_chat.core.inert import inert

if TYPE_CHECKING:
    from tui_chat.core.models import Summary
    from tui_chat.engine.events import EngineEvent, EventCallback
    from tui_chat.engine.send import SendOutcome
    from tui_chat.engine.service import ChatService

__all__ = ["HANDLERS", "CliError", "Handler"]

Handler = Callable[["ChatService", Args], Awaitable[int]]
"""A subcommand: given the open service and the parsed arguments, returns the exit code."""


class CliError(Exception):
    """A failure to report on stderr with exit code 1."""


# -- sending -------------------------------------------------------------------------------


async def _send(service: ChatService, args: Args) -> int:
    from tui_chat.engine.files import AttachmentError, read_attachment

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        # Every file is read and checked before anything is stored or sent.
        files = [read_attachment(path) for path in args.attach]
    except AttachmentError as exc:
        raise CliError(f"{exc}; nothing was sent") from None
    if not text.strip() and not files:
        raise CliError("the message is empty; nothing was sent")
    if args.new:
        conversation = await service.conversations.new(model=args.model, system=args.system)
    else:
        try:  # `-c ""` is an empty id (refused), not the last conversation
            conversation = await service.conversations.resolve(
                "last" if args.within is None else args.within
            )
        except Exception:
            if args.within is not None:
                raise
            conversation = await service.conversations.new(model=args.model, system=args.system)

    await mcp_view.started(service)  # each server within its start timeout
    approve = mcp_view.allow_all if args.allow_tools else None

    def start(on_event: EventCallback) -> Awaitable[SendOutcome]:
        return service.send(conversation.id, text, on_event, files, approve)

    return await _reply(service, conversation.id, args.as_json, start)


async def _fork(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    fork = await service.branches.fork(conversation.id, args.at, args.title)
    if args.as_json:
        count = await service.messages.count(fork.id)
        origin = await service.branches.parent(fork.id)
        render.json_out(
            {**render.conversation_json(fork), "messages": count, **render.fork_json(origin)}
        )
    else:
        render.out(fork.id)
    return 0


async def _retry(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)

    def start(on_event: EventCallback) -> Awaitable[SendOutcome]:
        return service.retry(conversation.id, on_event)

    return await _reply(service, conversation.id, args.as_json, start)


async def _reply(
    service: ChatService,
    conversation_id: str,
    as_json: bool,
    start: Callable[[EventCallback], Awaitable[SendOutcome]],
) -> int:
    """Stream (or print as JSON) a reply that ``start`` asks for, then report its error."""
    from tui_chat.core.web import stream_note
    from tui_chat.engine.events import FileUploading, ReplyDelta, ReplyFinished, SendWaiting

    streamed = not as_json
    thinking = False  # thinking is being written to stderr

    def on_event(event: EngineEvent) -> None:
        nonlocal streamed, thinking
        if streamed and (line := mcp_view.note(event)) is not None:
            sys.stderr.write(("\n" if thinking else "") + line + "\n")
            sys.stderr.flush()
            thinking = False
        elif isinstance(event, SendWaiting):
            held = f" ({event.holder})" if event.holder else ""
            print(
                f"tui-chat: waiting for another send to conversation {conversation_id} "
                f"to finish{held}…",
                file=sys.stderr,
                flush=True,
            )
        elif isinstance(event, FileUploading):
            said = "uploading…" if event.problem is None else event.problem
            print(f"tui-chat: {inert(event.name)}: {inert(said)}", file=sys.stderr, flush=True)
        elif isinstance(event, ReplyFinished) and event.notice:
            print(f"tui-chat: warning: {inert(event.notice)}", file=sys.stderr, flush=True)
        elif streamed and isinstance(event, ReplyDelta) and event.kind != "text":
            # Thinking and what the reply searched go to stderr; stdout is the reply alone.
            note = event.text if event.kind == "thinking" else stream_note(event.block)
            if event.kind == "thinking" and not thinking:
                note = "[thinking] " + note
            elif event.kind != "thinking" and thinking:
                note = "\n" + note
            thinking = event.kind == "thinking"
            sys.stderr.write(inert(note))
            sys.stderr.flush()
        elif streamed and isinstance(event, ReplyDelta):
            if thinking:
                thinking = False
                sys.stderr.write("\n")
            try:
                sys.stdout.write(inert(event.text))
                sys.stdout.flush()
            except BrokenPipeError:
                # The reader went away (`| head`): the reply is still received and stored.
                streamed = False
                silence_stdout()

    outcome = await start(on_event)
    if streamed:
        sys.stdout.write("\n")
        sys.stdout.flush()
    else:
        render.json_out(render.reply_json(conversation_id, outcome))
    if outcome.notice:
        print(f"note: {outcome.notice}", file=sys.stderr)
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


# -- reading -------------------------------------------------------------------------------


async def _list(service: ChatService, args: Args) -> int:
    infos = await service.conversations.list(include_archived=args.include_archived, with_cost=True)
    if args.as_json:
        forks = await service.branches.forks()
        render.json_out([render.info_json(i, forks.get(i.conversation.id)) for i in infos])
        return 0
    if not infos:
        render.out("No conversations yet. Start one with: tui-chat send --new 'hello'")
    if args.branches:
        for info in infos:
            render.out(render.conversation_line(info))
        return 0
    from tui_chat.core.family import family_rows

    # One line per family, as the TUI's list: the branch it opens, ⑂n when it has n branches.
    for row in family_rows(infos, await service.branches.families(), None):
        branches = f"  ⑂{row.branches}" if row.branches > 1 else ""
        render.out(render.conversation_line(row.info, row.title) + branches)
    return 0


SHOW_PAGE = 1_000
"""Messages read and printed at a time by ``show`` (memory stays flat in the length)."""


async def _show(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    pinned = await service.messages.pinned_ids(conversation.id)
    if args.as_json:
        origin = await service.branches.parent(conversation.id)
        shown: render.JsonObject = {
            **render.conversation_json(conversation),
            **render.fork_json(origin),
        }
        # The same JSON as one json_out of the whole, written a page of messages at a time.
        head = render.json_text({"conversation": shown, "messages": []})
        sys.stdout.write(head[: head.rindex("[]")] + "[")
        after, first = 0, True
        while page := await service.messages.page(conversation.id, after_id=after, limit=SHOW_PAGE):
            for m in page:
                item = render.json_text(render.message_json(m, pinned))
                sys.stdout.write(("\n" if first else ",\n") + textwrap.indent(item, "    "))
                first = False
            after = page[-1].id
        sys.stdout.write("]\n}\n" if first else "\n  ]\n}\n")
    else:  # a page of messages at a time, as the JSON
        render.print_heading(conversation)
        after = 0
        while page := await service.messages.page(conversation.id, after_id=after, limit=SHOW_PAGE):
            render.print_messages(page, pinned)
            after = page[-1].id
    return 0


async def _search(service: ChatService, args: Args) -> int:
    conversation_id = (await service.conversations.resolve(args.within)).id if args.within else None
    hits = await service.messages.search(args.query, conversation_id, limit=args.limit)
    if args.as_json:
        render.json_out([render.hit_json(h) for h in hits])
        return 0
    if not hits:
        render.out("No matches.")
    for h in hits:
        render.out(f"{h.conversation_id} #{h.message_id} {h.role}: {inert(h.marked())}")
    return 0


async def _context(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    if args.count and await service.requests.check_count(conversation.id) is None:
        print("not counted: no API key, or the endpoint has no count_tokens", file=sys.stderr)
    built = await service.requests.context(conversation.id, args.draft)
    preset = service.conversations.policy_for(conversation).preset
    path = await service.branches.path(conversation.id)
    if args.as_json:
        render.json_out(
            {**render.context_json(built, preset), "path": branches_view.path_json(path)}
        )
    else:
        if line := path.describe():
            render.out(f"Path: {line}")
        render.print_context(conversation, built, preset)
    return 0


# -- settings and pins ---------------------------------------------------------------------


async def _set(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    updated = await service.conversations.set_setting(conversation.id, args.key, args.value)
    policy = service.conversations.policy_for(updated)
    render.out(f"{updated.id}: {args.key} = {args.value} (preset {policy.preset})")
    return 0


async def _pin(service: ChatService, args: Args) -> int:
    await service.messages.pin(args.message_id, args.note)
    render.out(f"pinned message #{args.message_id}")
    return 0


async def _unpin(service: ChatService, args: Args) -> int:
    if not await service.messages.unpin(args.message_id):
        raise CliError(f"message #{args.message_id} was not pinned")
    render.out(f"unpinned message #{args.message_id}")
    return 0


async def _archive(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.archive(
        (await service.conversations.resolve(args.conv)).id
    )
    render.out(f"archived {conversation.id[:8]} (tui-chat list --all shows it)")
    return 0


async def _unarchive(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    if conversation.archived_at is None:
        raise CliError(f"conversation {conversation.id[:8]} is not archived")
    await service.conversations.archive(conversation.id, archived=False)
    render.out(f"unarchived {conversation.id[:8]}")
    return 0


# -- summary versions ----------------------------------------------------------------------


async def _summary_view(
    service: ChatService, conversation_id: str, summary: Summary, as_json: bool
) -> int:
    """Print one version, fresh from the engine (its parent, whether it is in force, and its
    one retention figure)."""
    summary = await service.summaries.version(conversation_id, summary.version)
    conversation = await service.conversations.get(conversation_id)
    active = summary.id == conversation.active_summary_id
    if as_json:
        versions = {s.id: s.version for s in await service.summaries.versions(conversation_id)}
        data = render.summary_json(summary, conversation.active_summary_id, versions)
        data["retention"] = (await service.summaries.retention(conversation_id, summary)).to_json()
        render.json_out(data)
    else:
        render.print_summary(summary, active)
        compaction_view.print_retention(await service.summaries.retention(conversation_id, summary))
    return 0


async def _compact(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    if args.upto is not None:
        summary = await service.branches.compact_upto(conversation.id, args.upto, args.instructions)
    else:
        summary = await service.summaries.compact(
            conversation.id, args.instructions, compaction_view.compact_progress
        )
    return await _summary_view(service, conversation.id, summary, args.as_json)


async def _summary(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    summary = await service.summaries.version(conversation.id, args.version)
    return await _summary_view(service, conversation.id, summary, args.as_json)


async def _regenerate(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    summary = await service.summaries.regenerate(conversation.id, args.version, args.instructions)
    return await _summary_view(service, conversation.id, summary, args.as_json)


async def _summaries(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    summaries = await service.summaries.versions(conversation.id)
    versions = {s.id: s.version for s in summaries}
    active_id = conversation.active_summary_id
    if args.as_json:
        render.json_out([render.summary_json(s, active_id, versions) for s in summaries])
        return 0
    if not summaries:
        render.out("No summary versions yet.")
    for s in summaries:
        parent = versions.get(s.parent_id) if s.parent_id else None
        render.out(render.summary_line(s, s.id == active_id, parent))
    return 0


async def _rollback(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    summary = await service.summaries.activate(conversation.id, args.version)
    if summary is None:
        render.out(f"{conversation.id}: no summary in force; the whole history is sent raw")
    else:
        render.out(f"{conversation.id}: version {summary.version} is now in force")
    return 0


# -- files and diagnostics -----------------------------------------------------------------


async def _export(service: ChatService, args: Args) -> int:
    conversation = await service.conversations.resolve(args.conv)
    if args.output:
        await service.transfer.export_to(conversation.id, args.output, args.fmt, force=args.force)
        print(f"exported {conversation.id} to {args.output}", file=sys.stderr)
        return 0
    # Written as it is read: memory flat in the conversation's length.
    if (fmt := args.fmt or "md") == "md":  # each piece ends a line: no \r\n is split
        await service.transfer.export_stream(
            conversation.id, lambda part: sys.stdout.write(inert(part)), fmt
        )
        return 0
    await service.transfer.export_stream(
        conversation.id, lambda part: sys.stdout.write(part.translate(render.C1_ESCAPES)), fmt
    )
    sys.stdout.write("\n")
    return 0


def _import_progress(done: int) -> None:
    """Messages written so far, on one rewritten stderr line (a terminal only)."""
    print(f"\rimporting: {done:,} messages written", end="", file=sys.stderr, flush=True)


async def _import(service: ChatService, args: Args) -> int:
    shown = sys.stderr.isatty()
    try:
        progress = _import_progress if shown else None
        conversation = await service.transfer.import_file(args.file, progress, force=args.force)
    finally:
        if shown:
            print(file=sys.stderr, flush=True)
    count = await service.messages.count(conversation.id)
    if args.as_json:
        render.json_out({**render.conversation_json(conversation), "messages": count})
    else:
        render.out(f"imported {count} messages as {conversation.id} ({inert(conversation.title)})")
    return 0


async def _doctor(service: ChatService, args: Args) -> int:
    from tui_chat import paths

    config_file = paths.config_path()
    if args.repair:
        count, removed = await service.maintenance.repair()
        print(f"search index rebuilt from {count} messages", file=sys.stderr)
        print(f"{removed} attached file(s) nothing refers to removed", file=sys.stderr)
    checks = await service.maintenance.doctor()
    # The database first, then the config file (which the CLI, not the engine, reads).
    report: dict[str, str | int | bool] = {
        "database": checks["database"],
        "config": str(config_file),
        "config_exists": config_file.exists(),
        **checks,
    }
    if args.as_json:
        render.json_out(report)
    else:
        for key, value in report.items():
            render.out(f"{key:<14}{value}")
    healthy = (
        report["integrity"] == "ok"
        and str(report["search_index"]).startswith(("ok", "not checked"))
        and str(report["tokenizer"]).startswith("ok")
        and str(report.get("summaries", "ok")) == "ok"
    )
    return 0 if healthy else 1


async def _backup(service: ChatService, args: Args) -> int:
    await service.maintenance.backup(args.file, force=args.force)
    render.out(f"backed up {service.db_path} to {args.file}")
    return 0


HANDLERS: dict[str, Handler] = {
    "send": _send,
    "fork": _fork,
    "branches": branches_view.branches,
    "switch": branches_view.switch,
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
    "archive": _archive,
    "unarchive": _unarchive,
    "export": _export,
    "import": _import,
    "doctor": _doctor,
    "models": models_view.models,
    "usage": usage_view.usage,
    "backup": _backup,
    "mcp": mcp_view.mcp,
}
"""The handler of each subcommand (``open`` and no command start the TUI instead)."""
