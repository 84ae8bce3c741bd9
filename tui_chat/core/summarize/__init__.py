"""Summarisation shared by the Claude summarizer and the offline one.

A :class:`SummaryInput` describes one new version: the policy, the parent version, and the
whole turns it folds in beyond the parent's coverage. Both summarizers return the complete new
version content (:class:`SummaryOutput`): its text, its segments and its structured fields.

Strategies (docs/design.md, "Strategies"; the seeds in docs/seeds.md):

- ``running`` (seeds 000, 002, 004): the new text summarises the parent's text plus the new
  turns, with seed 002's structured prompt, at most ``summary_max_tokens`` tokens and, when set,
  ``summary_max_chars`` characters (seed 004: 700, or 400 when the conversation is mostly
  Korean).
- ``segments`` (seeds 001, 003): the parent's segments plus one new segment for the new block,
  sized ``original_chars × compression_rate`` (seed 003 levels pick the rate when
  ``importance`` is on). When the segments outgrow ``summary_max_tokens`` the oldest are merged
  into one higher-level segment.

With ``structured_fields`` (seed 004) decisions, open files and the current task are extracted
deterministically from the new turns, merged with the parent's fields and appended to the text.

A failed summary raises :class:`SummaryError`; an error message is never turned into summary
text. This package is pure: the model is reached only through the :data:`Complete` callable.

Modules: the records (:mod:`.types`), the prompt and reply extraction (:mod:`.prompt`), length
targets (:mod:`.targets`), segments and roll-up (:mod:`.segments`), structured fields
(:mod:`.fields`), text helpers (:mod:`.text`), the shared output (:mod:`.output`), and the two
summarizers (:mod:`.model`, :mod:`.extractive`).
"""

from tui_chat.core.summarize.extractive import ExtractiveSummarizer
from tui_chat.core.summarize.fields import extract_fields, fields_text, split_fields
from tui_chat.core.summarize.model import ModelSummarizer
from tui_chat.core.summarize.prompt import MARKER, build_summary_prompt, extract_summary
from tui_chat.core.summarize.segments import segments_text, segments_tokens
from tui_chat.core.summarize.text import is_mostly_korean
from tui_chat.core.summarize.types import Complete, SummaryError, SummaryInput, SummaryOutput

__all__ = [
    "MARKER",
    "Complete",
    "ExtractiveSummarizer",
    "ModelSummarizer",
    "SummaryError",
    "SummaryInput",
    "SummaryOutput",
    "build_summary_prompt",
    "extract_fields",
    "extract_summary",
    "fields_text",
    "is_mostly_korean",
    "segments_text",
    "segments_tokens",
    "split_fields",
]
