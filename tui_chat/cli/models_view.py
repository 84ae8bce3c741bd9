"""``tui-chat models``: the models on offer with their window, output limit and features."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_chat.cli import render
from tui_chat.cli.parser import Args

if TYPE_CHECKING:
    from tui_chat.engine.service import ChatService


async def models(service: ChatService, args: Args) -> int:
    """List the endpoint's models (read again when a day old, or with ``--refresh``) and the
    model table's, each with the figures tui-chat uses for it and where they come from."""
    from tui_chat.engine.catalog import limits, model_choices

    choices = await model_choices(service.catalog, service.catalog.info, force=args.refresh)
    rows: list[render.JsonObject] = []
    for model in choices.all:
        info = service.catalog.info(model)
        rows.append(
            {
                "id": model,
                "listed_by_endpoint": model in choices.endpoint,
                "context_window": info.context_window,
                "max_output": info.max_output,
                "features": list(info.features),
                "source": info.source if info.known else "fallback",
            }
        )
    if args.as_json:
        render.json_out(
            {
                "fetched_at": service.catalog.fetched_at,
                "problem": choices.problem or None,
                "models": rows,
            }
        )
        return 0
    when = service.catalog.fetched_at
    render.out(
        f"endpoint list read {when[:19].replace('T', ' ')} UTC"
        if when
        else "endpoint list never read"
    )
    if choices.problem:
        render.out(f"note: {choices.problem}")
    for model in choices.all:  # every feature, and said so when the endpoint listed none
        info = service.catalog.info(model)
        unknown = (
            "no features listed by the endpoint"
            if model in choices.endpoint
            else "features unknown (not on the endpoint's list)"
        )
        features = ", ".join(info.features) or unknown
        render.out(f"{model}  {limits(info)} · {features}")
    return 0
