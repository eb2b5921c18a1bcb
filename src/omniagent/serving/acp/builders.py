"""ACP payloads both versions spell alike, and the few v2-only ones, built from one version's generated models:
pure functions, no I/O. Every ACP face builds its updates, permission requests and turn ends here, so an update
looks the same whichever face sends it.

A function taking a `Shapes` builds what the versions spell differently (the differences are `Shapes` fields, never
a version test); one without builds what both spell alike (a text chunk, usage, a title) or what only v2 has
(`state_update`), with v2's models: the JSON is the same either way. `wire` gives the JSON to send.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, overload

import msgspec

from omniagent.protocols.acp import v2
from omniagent.protocols.acp._base import AcpModel
from omniagent.protocols.yuke.content import ContentPart, ContentText
from omniagent.serving.acp.shapes import Shapes

# A `session/update` (or another ACP object) as one version's model; `wire` gives its JSON.
Update = AcpModel


@overload
def wire(value: Update) -> dict[str, Any]: ...
@overload
def wire(value: list[Update]) -> list[dict[str, Any]]: ...
def wire(value: Update | list[Update]) -> Any:
    """The wire JSON of a model built here, or of a list of them.

    msgspec's own conversion, not `AcpModel.dump()`: the same JSON (wire names, unset fields left out, an explicit
    None kept as null), about 5x faster, which a `session/update` per streamed text chunk feels. It equals `dump()`
    only because nothing built here holds a parsed model, whose kept JSON `dump()` would give back instead.
    """
    return msgspec.to_builtins(value)


def iso_time(ms: int) -> str:
    """RFC 3339 UTC time of an engine millisecond timestamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text_block(text: str) -> v2.ContentBlockText:
    """A text content block (the same in v1 and v2)."""
    return v2.ContentBlockText(text=text)


_CHUNKS: dict[str, Callable[..., Update]] = {
    "agent_message_chunk": v2.SessionUpdateAgentMessageChunk,
    "agent_thought_chunk": v2.SessionUpdateAgentThoughtChunk,
    "user_message_chunk": v2.SessionUpdateUserMessageChunk,
}


def chunk(kind: str, msg_id: str, text: str) -> Update:
    """`agent_message_chunk` / `agent_thought_chunk` / `user_message_chunk` with one text block."""
    return _CHUNKS[kind](message_id=msg_id, content=text_block(text))


def prompt_parts(blocks: list[Any]) -> list[ContentPart] | str:
    """ACP prompt blocks as engine text parts, or the sentence saying why they cannot be sent.

    Text is kept; a resource link or an embedded text resource becomes a text mention (the engine has no blob
    store, so images, audio and binary resources are refused).
    """
    parts: list[ContentPart] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(ContentText(text=block["text"]))
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append(ContentText(text=f"[{block.get('name') or block['uri']}]({block['uri']})"))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "text" in block["resource"]:
            resource = block["resource"]
            parts.append(ContentText(text=f"{resource.get('uri', '')}\n```\n{resource['text']}\n```"))
        else:
            return f"{kind or 'this'} content is not supported: omniagent takes text and resource links"
    if not parts:
        return "the prompt has no content"
    return parts


# The options of every ask, as (kind, name): each option's id is its kind, so any client can read them.
PERMISSION_OPTIONS: tuple[tuple[str, str], ...] = (
    ("allow_once", "Allow once"),
    ("allow_always", "Always allow"),
    ("reject_once", "Reject"),
)


def permission_request(
    shapes: Shapes,
    session_id: str,
    subject: Update,
    title: str,
    options: Iterable[tuple[str, str]] = PERMISSION_OPTIONS,
) -> Update:
    """The `session/request_permission` params asking to run a tool call (`subject`, from `tool_subject`): v2
    with `title` and the call as its subject, v1 with the call alone."""
    m = shapes.models
    offered = [m.PermissionOption(option_id=kind, name=name, kind=kind) for kind, name in options]
    if shapes.permission_subject:
        named = m.RequestPermissionSubjectToolCall(tool_call=subject)
        return m.RequestPermissionRequest(session_id=session_id, title=title, subject=named, options=offered)
    return m.RequestPermissionRequest(session_id=session_id, tool_call=subject, options=offered)


_IDLE: dict[str, Callable[..., Update]] = {
    "end_turn": v2.SessionUpdateStateUpdateIdleEndTurn,
    "max_tokens": v2.SessionUpdateStateUpdateIdleMaxTokens,
    "max_turn_requests": v2.SessionUpdateStateUpdateIdleMaxTurnRequests,
    "refusal": v2.SessionUpdateStateUpdateIdleRefusal,
    "cancelled": v2.SessionUpdateStateUpdateIdleCancelled,
}


def state_update(state: str, stop_reason: str | None = None) -> Update:
    """v2's `state_update`: `running`, `requires_action`, or `idle` with the turn's stop reason (see `failed_idle`
    for `error`)."""
    if state == "idle" and stop_reason is not None:
        return _IDLE[stop_reason]()
    if state == "running":
        return v2.SessionUpdateStateUpdateRunning()
    if state == "requires_action":
        return v2.SessionUpdateStateUpdateRequiresAction()
    raise ValueError(f"no session state {state!r}")


def failed_idle(code: int, message: str) -> Update:
    """The idle `state_update` of a turn that failed: the draft's `error` stop reason with the failure as a JSON-RPC
    error object (an alpha.2 client reads `error` as a stop reason it does not know; the relay also says the failure
    as agent text)."""
    return v2.SessionUpdateStateUpdateIdleError(error=v2.Error(code=code, message=message))


def session_info(title: str, updated_at_ms: int) -> Update:
    """The `session_info_update` of a retitled session (no title is an explicit null: the client clears it)."""
    return v2.SessionUpdateSessionInfoUpdate(title=title or None, updated_at=iso_time(updated_at_ms))


# The one plan of a session, in v2's plan-id terms (the engine keeps one plan per session).
PLAN_ID = "plan"


def usage(used: int, size: int) -> Update:
    """The `usage_update` of the session's context window."""
    return v2.SessionUpdateUsageUpdate(used=used, size=size)
