"""The Claude path: a summary made by a language model behind a :data:`~.types.Complete` call."""

from __future__ import annotations

import asyncio

from tui_chat.core.models import Usage
from tui_chat.core.summarize.continuation import PromptBuilder
from tui_chat.core.summarize.output import finish, require_messages
from tui_chat.core.summarize.prompt import build_summary_prompt, extract_summary
from tui_chat.core.summarize.segments import new_segment, parent_segments, roll_up, segments_text
from tui_chat.core.summarize.targets import targets_for
from tui_chat.core.summarize.text import trim
from tui_chat.core.summarize.types import Complete, SummaryError, SummaryInput, SummaryOutput


def _add_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return total
    if total is None:
        return more
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        cache_creation_input_tokens=total.cache_creation_input_tokens
        + more.cache_creation_input_tokens,
        cache_read_input_tokens=total.cache_read_input_tokens + more.cache_read_input_tokens,
        cache_creation_1h_input_tokens=total.cache_creation_1h_input_tokens
        + more.cache_creation_1h_input_tokens,
    )


class ModelSummarizer:
    """Summarizes through a language model reached by a :data:`Complete` callable.

    Args:
        complete: Makes one model call (the ``llm`` layer binds the client and model).
        name: The model id recorded as the version's summarizer.
        prompt: Builds the main call's prompts (a continuation of the cached conversation
            sends only an instruction); roll-ups of segments always use the standalone one.
    """

    def __init__(
        self, complete: Complete, name: str, prompt: PromptBuilder = build_summary_prompt
    ) -> None:
        self._complete = complete
        self._prompt = prompt
        self.name = name

    async def _call(
        self, request: SummaryInput, system: str, user: str
    ) -> tuple[str, Usage | None]:
        policy = request.policy
        try:
            async with asyncio.timeout(policy.summarizer_timeout):
                reply, usage = await self._complete(system, user, policy.summarizer_max_tokens)
        except SummaryError:
            raise
        except TimeoutError as exc:
            raise SummaryError(
                f"the summary call timed out after {policy.summarizer_timeout:g} s"
            ) from exc
        except Exception as exc:
            raise SummaryError(f"the summary call failed: {exc}") from exc
        return extract_summary(reply), usage

    async def summarize(self, request: SummaryInput) -> SummaryOutput:
        """Make the new version's content with the model.

        Args:
            request: The version being made.

        Returns:
            The new version's text, segments and fields, with the summed usage.

        Raises:
            SummaryError: when a call fails, times out, or returns an empty or error-looking
                reply.
        """
        require_messages(request)
        targets = targets_for(request)
        system, user = self._prompt(request)
        text, usage = await self._call(request, system, user)
        if request.policy.strategy == "running":
            if targets.max_chars is not None:
                text = trim(text, targets.max_chars)
            return finish(request, text, (), self.name, usage)

        segments = [*parent_segments(request), new_segment(request.messages, text, targets.rate)]
        plan = roll_up(segments, targets.max_tokens)
        try:
            oldest = next(plan)
            while True:
                m_system, m_user = build_summary_prompt(request, merge=oldest)
                merged, more = await self._call(request, m_system, m_user)
                usage = _add_usage(usage, more)
                oldest = plan.send(merged)
        except StopIteration as done:
            segments = done.value
        return finish(request, segments_text(segments), segments, self.name, usage)
