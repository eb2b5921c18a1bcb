"""Compaction rules (docs/engine.md "Compaction") as pure functions: token estimates, what a request projects, when to
compact, where to cut, and the texts of the summary call.

What it is: the arithmetic and the wording, no I/O. What it is not: the run step that calls the model and commits
the `CompactionMessage` (`step.py`), nor the rendering of messages for a provider (`run/conversation.py`).

Estimates are characters / 4 (no tokenizer download). A compacted transcript projects as the newest checkpoint's
summary followed by the messages from its `first_kept_id` on; older messages stay in the store and in
`session.history`, they are just no longer sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from omniagent.engine.providers import neutral as n
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    CompactionMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolPart,
    UserMessage,
)

CHARS_PER_TOKEN = 4
KEEP_TOKENS_MAX = 20_000  # the recent tail kept verbatim is min(this, window / KEEP_WINDOW_DIVISOR) tokens
KEEP_WINDOW_DIVISOR = 10
SUMMARY_MAX_OUTPUT = 4096  # tokens the summary call may write

SUMMARY_INSTRUCTION = """\
Stop working on the task now: do not call any tool. Write a checkpoint summary of the conversation above, so that \
the work can go on from the summary alone once the earlier messages are gone. Use exactly these sections:

## Goal
## Constraints
## Progress
### Done
### In progress
### Blocked
## Key decisions
## Next steps
## Critical context

Under "Critical context" keep the exact file paths, names, commands, values and error messages that later work \
needs. Be specific and brief, and answer with the summary only."""

MERGE_INSTRUCTION = """\
<previous-summary>
{previous}
</previous-summary>

The previous summary above covers the conversation before the messages above. Merge the two into one updated \
checkpoint summary.

"""

SUMMARY_FRAME = """\
The earlier part of this conversation was compacted into the checkpoint summary below. It is reference only: \
answer the latest user message, and do not redo work the summary reports as done.

<summary>
{summary}
</summary>"""


def estimate_text(text: str) -> int:
    """Tokens of a text, estimated (rounded up)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_message(message: Message) -> int:
    """Tokens a message takes in a request, estimated from what a request sends of it."""
    if isinstance(message, UserMessage):
        return sum(estimate_text(p.text) for p in message.content if isinstance(p, ContentText))
    if isinstance(message, CompactionMessage):
        return estimate_text(SUMMARY_FRAME.format(summary=message.summary))
    total = 0
    for part in message.content:
        if isinstance(part, TextPart | ReasoningPart):
            total += estimate_text(part.text)
        elif isinstance(part, ToolPart):
            total += estimate_text(part.name) + estimate_text(part.arguments) + _result_tokens(part)
    return total


def estimate_messages(messages: Sequence[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


def estimate_request_frame(system: str, tools: Sequence[n.ToolSpec]) -> int:
    """Tokens of the system prompt and tool specs every request carries, estimated."""
    specs = sum(len(t.name) + len(t.description) + len(json.dumps(t.input_schema)) for t in tools)
    return estimate_text(system) + (specs + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _result_tokens(part: ToolPart) -> int:
    state = part.state
    if state.type == "completed":
        return estimate_text(state.output)
    if state.type == "error":
        return estimate_text(state.error)
    return 0


def project(transcript: Sequence[Message]) -> tuple[CompactionMessage | None, list[Message]]:
    """What a request sends: the newest checkpoint (None if never compacted) and the messages it kept, in order."""
    checkpoint = next((m for m in reversed(transcript) if isinstance(m, CompactionMessage)), None)
    if checkpoint is None:
        return None, list(transcript)
    first = checkpoint.first_kept_id if checkpoint.first_kept_id is not None else checkpoint.id + 1
    return checkpoint, [m for m in transcript if not isinstance(m, CompactionMessage) and m.id >= first]


def context_tokens(transcript: Sequence[Message], frame_tokens: int) -> int:
    """The projected context of the next request: the last model call's input + output tokens plus an estimate of
    what came after it (its tool results, newer messages). Without a call since the newest checkpoint, all of it is
    estimated, the system prompt and tools (`frame_tokens`) included."""
    checkpoint, kept = project(transcript)
    newest = checkpoint.id if checkpoint is not None else 0
    for i in range(len(kept) - 1, -1, -1):
        message = kept[i]
        if isinstance(message, AssistantMessage) and message.tokens is not None and message.id > newest:
            results = sum(_result_tokens(p) for p in message.content if isinstance(p, ToolPart))
            return message.tokens.input + message.tokens.output + results + estimate_messages(kept[i + 1 :])
    summary = estimate_message(checkpoint) if checkpoint is not None else 0
    return frame_tokens + summary + estimate_messages(kept)


def needs_compaction(context: int, window: int | None, max_output: int) -> bool:
    """Auto compaction is due when the projected context exceeds the input ceiling (`window - max_output`)."""
    return window is not None and context > window - max_output


@dataclass(frozen=True, slots=True)
class Plan:
    """What one compaction summarises and keeps."""

    previous: CompactionMessage | None  # the checkpoint this one merges, if any
    covered: list[Message]  # summarised, then no longer sent
    kept: list[Message]  # sent verbatim after the summary
    tokens_before: int  # estimated tokens of the projected transcript now

    @property
    def first_kept_id(self) -> int:
        return self.kept[0].id


def keep_tokens(window: int | None) -> int:
    """The recent tail to keep verbatim, in estimated tokens."""
    return KEEP_TOKENS_MAX if window is None else min(KEEP_TOKENS_MAX, window // KEEP_WINDOW_DIVISOR)


def plan(transcript: Sequence[Message], window: int | None) -> Plan | str:
    """Where to cut, or the `CompactSkipReason` why not.

    The cut is the start of the turn (the oldest of its consecutive user messages) that holds the tail target,
    counted back from the newest message; a turn is never split, so a tool call keeps its result.
    """
    previous, live = project(transcript)
    if not live:
        return "nothing_to_summarize"
    target, held, index = keep_tokens(window), 0, 0
    for index in range(len(live) - 1, -1, -1):
        held += estimate_message(live[index])
        if held >= target:
            break
    cut = index
    while cut > 0 and not isinstance(live[cut], UserMessage):
        cut -= 1
    while cut > 0 and isinstance(live[cut - 1], UserMessage):
        cut -= 1
    if cut == 0:
        return "too_few_messages"
    before = (estimate_message(previous) if previous is not None else 0) + estimate_messages(live)
    return Plan(previous=previous, covered=live[:cut], kept=live[cut:], tokens_before=before)


def instruction(previous: CompactionMessage | None) -> str:
    """The trailing user message of the summary call (the merge variant when a checkpoint exists)."""
    if previous is None:
        return SUMMARY_INSTRUCTION
    return MERGE_INSTRUCTION.format(previous=previous.summary) + SUMMARY_INSTRUCTION


def summary_frame(summary: str) -> str:
    """How a checkpoint summary is sent in later requests (a user message before the kept messages)."""
    return SUMMARY_FRAME.format(summary=summary)


def tokens_after(summary: str, kept: Sequence[Message]) -> int:
    return estimate_text(summary_frame(summary)) + estimate_messages(kept)
