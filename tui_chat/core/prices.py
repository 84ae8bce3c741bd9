"""A model's prices, as the cost rules and the bills read them.

Claude prices each model on its own card (the docs' "Pricing" page): base input, 5-minute and
1-hour cache writes, cache reads ("cache hits and refreshes") and output, in USD per million
tokens. The multipliers are no longer one constant: a cache read is 0.1x of input on most
models, 0.05x on Opus 5.5 and Sonnet 5.5, 0.025x on Fable 5.1 and 5.2. Some models have a
higher tier for long prompts (Haiku 5.5 past 100,000 prompt tokens: every token of that
request, output included, at the higher rates), fast mode multiplies every rate, and the
Message Batches API halves input and output.

:class:`Prices` is that card. The model table (``tui_chat.llm.model_table``) fills one per
model; the engine hands the chat model's and the summarizer model's to the policy, so the
``cost`` trigger, the TTL choice, the recall cap and the summarizer choice
(:mod:`tui_chat.core.payback`, :mod:`tui_chat.core.cache_ttl`) weigh the prices of the
model in use. :data:`FALLBACK_PRICES` is what an unknown model is priced at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["FALLBACK_PRICES", "Prices", "Rates"]


@dataclass(frozen=True, slots=True)
class Rates:
    """One tier of a price card, in USD per million tokens."""

    input: float
    """Uncached input."""
    output: float
    """Output (thinking included)."""
    write_5m: float
    """A cache write with the 5-minute lifetime."""
    write_1h: float
    """A cache write with the 1-hour lifetime."""
    read: float
    """A cache read (hit or refresh)."""

    def times(self, factor: float) -> Rates:
        """Every rate multiplied by ``factor`` (fast mode, batch)."""
        return Rates(
            self.input * factor,
            self.output * factor,
            self.write_5m * factor,
            self.write_1h * factor,
            self.read * factor,
        )


@dataclass(frozen=True, slots=True)
class Prices:
    """A model's price card.

    Attributes:
        base: The rates of a request under :attr:`long_threshold` (all requests when there
            is no long tier).
        long_threshold: Prompt tokens (input + cache reads + cache writes) past which a
            request is billed at :attr:`long` on every token, output included.
        long: The long-prompt rates (``None``: one rate at every length).
        fast: Fast mode's multiplier of every rate (``None``: the model has no fast mode).
        batch: The Message Batches API's multiplier of input and output (0.5).
        known: False for :data:`FALLBACK_PRICES` (a model missing from the table).
        source: The page and date the figures come from.
    """

    base: Rates
    long_threshold: int | None = None
    long: Rates | None = None
    fast: float | None = None
    batch: float = 0.5
    known: bool = True
    source: str = ""

    def rates(self, prompt_tokens: int = 0, *, fast: bool = False) -> Rates:
        """The rates a request of ``prompt_tokens`` prompt tokens pays.

        Args:
            prompt_tokens: Input + cache reads + cache writes of the request.
            fast: The request ran in fast mode (``usage.speed == "fast"``); a model without
                fast mode is priced at its standard rates.
        """
        rates = self.base
        long, threshold = self.long, self.long_threshold
        if long is not None and threshold is not None and prompt_tokens > threshold:
            rates = long
        if fast and self.fast:
            rates = rates.times(self.fast)
        return rates

    # Multipliers of the base input price: what the cost rules weigh.
    @property
    def read_ratio(self) -> float:
        """A cache read relative to uncached input (0.1, 0.05, 0.025 …)."""
        return _ratio(self.base.read, self.base.input, 0.1)

    @property
    def write_ratio(self) -> float:
        """A 5-minute cache write relative to uncached input (1.25)."""
        return _ratio(self.base.write_5m, self.base.input, 1.25)

    @property
    def write_1h_ratio(self) -> float:
        """A 1-hour cache write relative to uncached input (2.0)."""
        return _ratio(self.base.write_1h, self.base.input, 2.0)

    @property
    def output_ratio(self) -> float:
        """Output relative to uncached input (5 on every current card)."""
        return _ratio(self.base.output, self.base.input, 5.0)

    def with_rates(self, **changes: float) -> Prices:
        """The card with some base rates replaced (the configuration's ``input_price``…)."""
        return replace(self, base=replace(self.base, **changes))


def _ratio(part: float, whole: float, otherwise: float) -> float:
    return part / whole if whole > 0 else otherwise


FALLBACK_PRICES = Prices(
    base=Rates(input=10.0, output=50.0, write_5m=12.5, write_1h=20.0, read=1.0),
    known=False,
    source=(
        "fallback for a model missing from the table: the dearest generally available card "
        "(Fable 5.1's $10 / $50 per MTok) with the standard multipliers (writes 1.25x / 2x, "
        "reads 0.1x), so a guessed cost never reads low"
    ),
)
"""The price of a model the table does not know: high rather than $0."""
