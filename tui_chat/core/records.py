"""The JSON shape of a conversation, a message and a summary version, written once.

This project's export (:mod:`tui_chat.engine.transfer.transfer`,
:mod:`tui_chat.engine.transfer.restore`) and
the CLI's ``--json`` output (:mod:`tui_chat.cli.render`) both start from these records and add
what only they carry (pins and notes, the archive flag, a version's parent, …), so a field is
named and written the same way everywhere.
"""

from __future__ import annotations

from typing import Any

from tui_chat.core.models import Conversation, Message, Summary


def conversation_record(conversation: Conversation) -> dict[str, Any]:
    """A conversation's own fields: id, title, model, system prompt, settings and times."""
    return {
        "id": conversation.id,
        "title": conversation.title,
        "model": conversation.model,
        "system": conversation.system_prompt,
        "settings": conversation.settings,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
    }


def message_record(message: Message) -> dict[str, Any]:
    """A message's own fields: content and text, counts, status, model, usage and its end."""
    return {
        "id": message.id,
        "role": message.role,
        "content": message.content,
        "text": message.text,
        "turn": message.turn,
        "token_count": message.token_count,
        "status": message.status,
        "model": message.model,
        "usage": message.usage.to_dict() if message.usage else None,
        "stop_reason": message.stop_reason,
        "error": message.error,
        "created_at": message.created_at,
    }


def summary_record(summary: Summary) -> dict[str, Any]:
    """A summary version's own fields: what it covers, its text, figures, call and times."""
    return {
        "version": summary.version,
        "status": summary.status,
        "strategy": summary.strategy,
        "trigger": summary.trigger,
        "covers_to_message_id": summary.covers_to_message_id,
        "covered_messages": summary.covered_messages,
        "source_tokens": summary.source_tokens,
        "summary_tokens": summary.summary_tokens,
        "summarizer": summary.summarizer,
        "identifiers_kept": summary.identifiers_kept,
        "identifiers_total": summary.identifiers_total,
        "instructions": summary.instructions,
        "error": summary.error,
        "text": summary.text,
        "segments": [s.to_dict() for s in summary.segments],
        "fields": summary.fields,
        "call": summary.call.to_dict() if summary.call else None,
        "compaction_block": summary.compaction_block,
        "created_at": summary.created_at,
        "completed_at": summary.completed_at,
    }
