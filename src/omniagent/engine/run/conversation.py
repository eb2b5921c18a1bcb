"""The transcript as a provider-neutral request: yuke messages → `neutral.ModelRequest`.

Tool results live in the assistant message's tool parts (their final state); the provider wire wants them as a
user message right after the assistant message that called them. Reasoning is replayed only to the protocol
that produced it (signatures are opaque per protocol). After a compaction, a request sends the newest checkpoint's
summary (as a user message) and then only the messages it kept (`compaction.rules.project`).
"""

from __future__ import annotations

from omniagent.engine.model_access import RunModel
from omniagent.engine.providers import neutral as n
from omniagent.engine.run.compaction import rules as compaction_rules
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    RedactedReasoningPart,
    TextPart,
    ToolPart,
    UserMessage,
)

DEFAULT_SYSTEM_PROMPT = (
    "You are a coding agent working in the workspace {root}. Use the tools to read, search, edit and run code. "
    "Be concise."
)
CANCELED_RESULT = "the tool call was canceled before it finished"


def build_request(
    run_model: RunModel,
    reasoning: str,
    system_prompt: str | None,
    transcript: list[Message],
    tools: tuple[n.ToolSpec, ...],
    root: str = "",
    cache_key: str | None = None,
) -> n.ModelRequest:
    """One model call over the transcript as it projects after its newest compaction; `cache_key` is the session's
    (`ModelRequest.cache_key`)."""
    checkpoint, kept = compaction_rules.project(transcript)
    messages: list[n.Message] = []
    if checkpoint is not None:
        _append(messages, n.Message("user", (n.TextPart(compaction_rules.summary_frame(checkpoint.summary)),)))
    render(kept, run_model.protocol, messages)
    return n.ModelRequest(
        model=run_model.upstream_id,
        system=system_prompt_of(system_prompt, root),
        messages=tuple(messages),
        tools=tools,
        max_output_tokens=run_model.max_output_tokens,
        reasoning_effort=run_model.effort,
        cache_key=cache_key,
    )


def summary_request(
    run_model: RunModel,
    system_prompt: str | None,
    root: str,
    covered: list[Message],
    instruction: str,
    tools: tuple[n.ToolSpec, ...],
    cache_key: str | None = None,
) -> n.ModelRequest:
    """The compaction call: the same system prompt and tools as a turn (so a prompt cache still fits), the
    covered messages, then the summary instruction as the last user message; no reasoning, a short answer."""
    messages: list[n.Message] = []
    render(covered, run_model.protocol, messages)
    _append(messages, n.Message("user", (n.TextPart(instruction),)))
    return n.ModelRequest(
        model=run_model.upstream_id,
        system=system_prompt_of(system_prompt, root),
        messages=tuple(messages),
        tools=tools,
        max_output_tokens=min(compaction_rules.SUMMARY_MAX_OUTPUT, run_model.max_output_tokens),
        cache_key=cache_key,
    )


def system_prompt_of(system_prompt: str | None, root: str) -> str:
    """The session's system prompt, or the default one for its workspace."""
    return system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT.format(root=root or ".")


def render(transcript: list[Message], protocol: str, messages: list[n.Message]) -> None:
    """Append user and assistant messages to `messages` as provider messages (roles alternate). Compaction
    messages are not rendered here (see `build_request`)."""
    for message in transcript:
        if isinstance(message, UserMessage):
            parts = tuple(n.TextPart(p.text) for p in message.content if isinstance(p, ContentText))
            _append(messages, n.Message("user", parts))
        elif isinstance(message, AssistantMessage):
            _assistant(messages, message, protocol)


def _assistant(out: list[n.Message], message: AssistantMessage, protocol: str) -> None:
    same_protocol = message.provenance is not None and message.provenance.protocol == protocol
    parts: list[n.RequestPart] = []
    results: list[n.RequestPart] = []
    for part in message.content:
        if isinstance(part, TextPart) and part.text:
            parts.append(n.TextPart(part.text))
        elif isinstance(part, ReasoningPart) and same_protocol:
            parts.append(n.ReasoningPart(part.text, signature=part.signature or None))
        elif isinstance(part, RedactedReasoningPart) and same_protocol:
            parts.append(n.ReasoningPart("", redacted=part.data))
        elif isinstance(part, ToolPart):
            call_id = part.call_id or f"call_{message.id}_{part.id}"
            parts.append(n.ToolCallPart(call_id, part.name, part.arguments))
            results.append(_result(call_id, part))
    if parts:
        _append(out, n.Message("assistant", tuple(parts)))
    if results:
        _append(out, n.Message("user", tuple(results)))


def _result(call_id: str, part: ToolPart) -> n.ToolResultPart:
    state = part.state
    if state.type == "completed":
        return n.ToolResultPart(call_id, state.output)
    if state.type == "error":
        return n.ToolResultPart(call_id, state.error, is_error=True)
    return n.ToolResultPart(call_id, CANCELED_RESULT, is_error=True)


def _append(out: list[n.Message], message: n.Message) -> None:
    # Providers want alternating roles: consecutive messages of one role merge (tool results stay first).
    if out and out[-1].role == message.role:
        out[-1] = n.Message(message.role, out[-1].parts + message.parts)
    else:
        out.append(message)
