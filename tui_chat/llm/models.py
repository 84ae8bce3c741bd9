"""The model table: context window, maximum output and prices of Claude models.

Figures change over time. An endpoint that answers ``GET /v1/models`` says each model's
``max_input_tokens`` (its context window), ``max_tokens`` (the output limit) and
``capabilities``; those win over the table, which stays as the fallback for endpoints whose
list lacks them (``model_info(model_id, overrides, endpoint)``). Every value can still be
overridden from the configuration. Unknown model ids fall back to a conservative
200,000-token window and 8,192 output tokens with ``known=False`` so the gauge can say
that it is guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tui_chat.core.models import Usage
from tui_chat.core.prices import FALLBACK_PRICES, Prices, Rates
from tui_chat.llm.model_table import ROWS

__all__ = [
    "FALLBACK_CONTEXT_WINDOW",
    "FALLBACK_MAX_OUTPUT",
    "WEB_SEARCH_PRICE",
    "ModelInfo",
    "base_model_id",
    "cost_usd",
    "known_models",
    "model_features",
    "model_info",
]

FALLBACK_CONTEXT_WINDOW = 200_000
"""Context window assumed for a model id that is not in the table."""

FALLBACK_MAX_OUTPUT = 8_192
"""Maximum output tokens assumed for a model id that is not in the table."""

WEB_SEARCH_PRICE = 10.0 / 1_000
"""USD per web search (Claude's web search tool page, "Usage and pricing": $10 per 1,000
searches, on top of the tokens its results add); web fetch costs only its tokens."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What tui-chat needs to know about one model.

    Attributes:
        id: The canonical model id (date suffixes and provider prefixes removed for
            known models; the id as given for unknown ones).
        context_window: Total tokens the model accepts (input + output).
        max_output: Maximum output tokens per response.
        prices: The model's price card (its own cache multipliers, tiers, fast mode).
        known: False when the figures are fallbacks for an id missing from the table
            (and not fully supplied by overrides or the endpoint).
        source: Where the window and output limit come from: ``"table"`` (or the fallback
            figures) or ``"endpoint"`` (``GET /v1/models``).
        features: What the endpoint says the model supports (:func:`model_features`);
            empty when it did not say.
        thinking: ``adaptive``, ``adaptive-always``, ``enabled`` (budget form) or ``none``
            (the table's; the endpoint's capabilities win in :mod:`tui_chat.core.reply_options`).
        effort: The model's default effort (``None``: it takes none, or unknown).
        tokenizer: 2 for the newer tokenizer of Claude 4.7 and later (about 30 % more tokens
            for the same text), 1 before; unknown models count as 2 (the larger count).
    """

    id: str
    context_window: int
    max_output: int
    prices: Prices
    known: bool
    source: str = "table"
    features: tuple[str, ...] = ()
    thinking: str = "enabled"
    effort: str | None = None
    tokenizer: int = 2

    @property
    def input_price(self) -> float:
        """USD per million uncached input tokens (the base tier)."""
        return self.prices.base.input

    @property
    def output_price(self) -> float:
        """USD per million output tokens (the base tier)."""
        return self.prices.base.output

    @property
    def priced(self) -> bool:
        """True when the prices are the table's or the configuration's, not the fallback."""
        return self.prices.known

    @property
    def usable_window(self) -> int:
        """Input tokens available once the maximum output is reserved."""
        return max(0, self.context_window - self.max_output)


# Alternative spellings that are not just a date suffix away from a table id.
_ALIASES: dict[str, str] = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}

_OVERRIDE_KEYS = ("context_window", "max_output", "input_price", "output_price")

# Bedrock ("us.anthropic.claude-…-v1:0"), Vertex ("claude-…@20250929") and gateway
# ("anthropic/claude-…") spellings of the same models.
_PROVIDER_PREFIX = re.compile(r"^(?:.*/)?(?:[a-z]{2,6}\.)?(?:anthropic\.)?")
_VERSION_SUFFIX = re.compile(r"-v\d+(?::\d+)?$")
_DATE_SUFFIX = re.compile(r"(?:[-@]\d{8}|-latest)$")


def base_model_id(model_id: str) -> str:
    """Strip provider prefixes, version and date suffixes from a model id.

    Args:
        model_id: A model id as configured, e.g. ``claude-haiku-4-5-20251001``.

    Returns:
        The id without decorations, e.g. ``claude-haiku-4-5``. Aliases such as
        ``claude-sonnet-4`` resolve to their table id.
    """
    name = model_id.strip().lower()
    name = _PROVIDER_PREFIX.sub("", name, count=1)
    name = _VERSION_SUFFIX.sub("", name)
    name = _DATE_SUFFIX.sub("", name)
    return _ALIASES.get(name, name)


def known_models() -> list[str]:
    """Return the canonical ids of every model in the table, newest families first."""
    return list(ROWS)


_FEATURES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("thinking", "types", "adaptive"), "adaptive thinking"),
    (("thinking", "types", "enabled"), "thinking"),
    (("effort",), "effort"),
    (("server_tools", "web_search"), "web search"),
    (("server_tools", "code_execution"), "code execution"),
    # Code the model runs can call the request's tools: the newest web tools' dynamic filtering.
    (("code_execution",), "dynamic filtering"),
    (("context_management", "compact_20260112"), "compaction"),
    (("compaction", "summarize"), "compaction"),  # the spelling of an older docs snapshot
    (("image_input",), "images"),
    (("pdf_input",), "PDF"),
    (("citations",), "citations"),
    (("structured_outputs",), "structured outputs"),
)
"""(path in ``capabilities``, label) of the features the picker names, in its order."""


def model_features(capabilities: Any) -> tuple[str, ...]:
    """The supported features of a model's ``capabilities`` (``GET /v1/models``).

    Each capability is an object with ``supported`` (Claude's Models API reference); a
    missing or malformed one counts as not supported. ``thinking`` is named once: adaptive
    when the model takes ``type: "adaptive"``, else the budget form.

    Args:
        capabilities: The model's ``capabilities`` object (``None`` when not given).

    Returns:
        Labels such as ``("adaptive thinking", "web search", "images")``.
    """
    found: list[str] = []
    for path, label in _FEATURES:
        node: Any = capabilities
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and node.get("supported") is True:
            if label in found or (label == "thinking" and "adaptive thinking" in found):
                continue
            found.append(label)
    return tuple(found)


def _limit(value: Any) -> int | None:
    """A positive token count from the endpoint, or ``None``."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _from_endpoint(info: ModelInfo, endpoint: Mapping[str, Any]) -> ModelInfo:
    """``info`` with the window, output limit and features the endpoint gave (where given)."""
    given_window = _limit(endpoint.get("max_input_tokens"))
    given_output = _limit(endpoint.get("max_tokens"))
    window = given_window or info.context_window
    output = given_output or info.max_output
    if output >= window:  # never a model with no room for input
        output = info.max_output if info.max_output < window else window // 2
    return replace(
        info,
        context_window=window,
        max_output=output,
        known=info.known or bool(given_window and given_output),
        source="endpoint" if given_window or given_output else info.source,
        features=model_features(endpoint.get("capabilities")),
    )


def model_info(
    model_id: str,
    overrides: Mapping[str, Any] | None = None,
    endpoint: Mapping[str, Any] | None = None,
) -> ModelInfo:
    """Look a model up: the endpoint's figures, else the table's, then the configuration's.

    Args:
        model_id: Any spelling of a model id (date suffix, provider prefix, alias).
        overrides: Optional values from the configuration for ``context_window``,
            ``max_output``, ``input_price`` and ``output_price``. Supplying both
            ``context_window`` and ``max_output`` makes an unknown model ``known``.
        endpoint: The model's entry of ``GET /v1/models`` (``max_input_tokens`` is taken
            as the context window, ``max_tokens`` as the output limit, ``capabilities`` as
            its features); a figure it lacks comes from the table.

    Returns:
        The model's figures, or the fallback figures with ``known=False``.

    Raises:
        ValueError: If ``overrides`` holds an unknown key or a value that is not a
            positive number (zero is allowed for prices).
    """
    base = base_model_id(model_id)
    row = ROWS.get(base)
    if row is None:
        info = ModelInfo(
            id=model_id.strip(),
            context_window=FALLBACK_CONTEXT_WINDOW,
            max_output=FALLBACK_MAX_OUTPUT,
            prices=FALLBACK_PRICES,
            known=False,
        )
    else:
        info = ModelInfo(
            base,
            row.window,
            row.max_output,
            row.prices,
            known=True,
            thinking=row.thinking,
            effort=row.effort,
            tokenizer=row.tokenizer,
        )
    if endpoint:
        info = _from_endpoint(info, endpoint)
    if not overrides:
        return info
    return _apply_overrides(info, overrides)


def _apply_overrides(info: ModelInfo, overrides: Mapping[str, Any]) -> ModelInfo:
    unknown = sorted(set(overrides) - set(_OVERRIDE_KEYS))
    if unknown:
        raise ValueError(
            f"unknown model setting(s) {', '.join(unknown)}; "
            f"expected one of {', '.join(_OVERRIDE_KEYS)}"
        )
    changes: dict[str, Any] = {}
    for key in ("context_window", "max_output"):
        if key in overrides:
            changes[key] = _positive_int(key, overrides[key])
    prices = {
        key: _non_negative_float(key, overrides[key])
        for key in ("input_price", "output_price")
        if key in overrides
    }
    if prices:
        changes["prices"] = _configured(info.prices, prices)
    if "context_window" in changes and "max_output" in changes:
        changes["known"] = True
    window = changes.get("context_window", info.context_window)
    max_output = changes.get("max_output", info.max_output)
    if max_output >= window:
        raise ValueError(
            f"max_output ({max_output}) must be smaller than context_window ({window})"
        )
    return replace(info, **changes)


def _configured(card: Prices, given: Mapping[str, float]) -> Prices:
    """The card with the configuration's prices: the cache rates keep the card's multipliers,
    and a configured price is one flat price (no long-prompt tier)."""
    base = card.base
    price_in = given.get("input_price", base.input)
    rates = Rates(
        input=price_in,
        output=given.get("output_price", base.output),
        write_5m=price_in * card.write_ratio,
        write_1h=price_in * card.write_1h_ratio,
        read=price_in * card.read_ratio,
    )
    return Prices(
        base=rates,
        fast=card.fast,
        batch=card.batch,
        known=True,
        source="configuration ([models] input_price / output_price)",
    )


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{key} must be a positive integer, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{key} must be a positive integer, got {value!r}") from None
    if number <= 0 or number != float(value):
        raise ValueError(f"{key} must be a positive integer, got {value!r}")
    return number


def _non_negative_float(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{key} must be a number of USD per million tokens, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(
            f"{key} must be a number of USD per million tokens, got {value!r}"
        ) from None
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"{key} must be a number of USD per million tokens, got {value!r}")
    return number


def cost_usd(info: ModelInfo, usage: Usage, prompt_tokens: int | None = None) -> float:
    """Price one response at its model's own card.

    The request's prompt (input + cache writes + cache reads) picks the tier: past a long-prompt
    threshold every token of the request, output included, is billed at the higher rates
    (Haiku 5.5 past 100,000). Cache writes are billed at the card's 5-minute or 1-hour rate
    (the part ``Usage.cache_creation_1h_input_tokens`` names), reads at the card's read rate
    (0.1x, 0.05x or 0.025x of input by model); a reply that ran in fast mode
    (``usage.speed == "fast"``) pays the card's fast multiplier; thinking is part of
    ``output_tokens``; each web search adds :data:`WEB_SEARCH_PRICE`.

    Args:
        info: The model's figures (see :func:`model_info`).
        usage: Token usage reported by the API (or the sum of replies of one price tier).
        prompt_tokens: The prompt size that picks the tier (default: ``usage``'s own; for a
            sum, the least prompt of its replies).

    Returns:
        The cost in USD.
    """
    prompt = usage.total_input if prompt_tokens is None else prompt_tokens
    rates = info.prices.rates(prompt, fast=usage.speed == "fast")
    hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    input_cost = (
        rates.input * usage.input_tokens
        + rates.write_5m * (usage.cache_creation_input_tokens - hour)
        + rates.write_1h * hour
        + rates.read * usage.cache_read_input_tokens
    )
    output_cost = rates.output * usage.output_tokens
    searches = usage.web_search_requests * WEB_SEARCH_PRICE
    return (input_cost + output_cost) / 1_000_000 + searches
