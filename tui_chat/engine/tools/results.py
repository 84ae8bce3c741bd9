"""A tool call's outcome as the ``tool_result`` block stored and sent back.

The result is stored whole (text, images as base64); the request builder cuts a long one
when it is sent (:data:`tui_chat.core.request.clip.TOOL_RESULT_CHARS`). Control characters
are kept in the store as received: every screen shows results through the inert text
helpers, never as markup.
"""

from __future__ import annotations

import json
from typing import Any

from tui_chat.core.models import ContentBlock

__all__ = ["error_result", "result_block"]

_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def error_result(tool_use_id: str, message: str) -> ContentBlock:
    """A ``tool_result`` with ``is_error`` (denied, failed, cancelled, timed out …)."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": [{"type": "text", "text": message}],
        "is_error": True,
    }


def _item(part: Any) -> ContentBlock:
    kind = getattr(part, "type", None)
    if kind == "text":
        return {"type": "text", "text": str(part.text)}
    if kind == "image" and getattr(part, "mime_type", None) in _IMAGE_TYPES:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": part.mime_type, "data": str(part.data)},
        }
    if kind == "resource":
        resource = part.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return {"type": "text", "text": f"[{resource.uri}]\n{text}"}
        return {"type": "text", "text": f"[{resource.uri}: binary resource not shown]"}
    dumped = (
        part.model_dump(mode="json", exclude_none=True) if hasattr(part, "model_dump") else part
    )
    return {"type": "text", "text": json.dumps(dumped, ensure_ascii=False)}


def result_block(tool_use_id: str, result: Any) -> ContentBlock:
    """The SDK's ``CallToolResult`` as a ``tool_result`` block."""
    items = [_item(part) for part in result.content or ()]
    if not items and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
        items = [{"type": "text", "text": text}]
    if not items:
        items = [{"type": "text", "text": "(no output)"}]
    block: ContentBlock = {"type": "tool_result", "tool_use_id": tool_use_id, "content": items}
    if result.is_error:
        block["is_error"] = True
    return block
