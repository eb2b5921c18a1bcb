"""Pure helpers over a session's transcript: stored payloads → messages, titles, ids, token counts. No I/O.

Every engine part that reads or writes messages uses these (runs and their compaction, child sessions, the session
methods), so they sit at the engine's top level, below all of those parts: none of them needs another part for them.
"""

from __future__ import annotations

import uuid

from omniagent.engine.errors import EngineError
from omniagent.engine.providers import neutral as n
from omniagent.engine.store.journal import now_ms
from omniagent.protocols.yuke.base import decode_json
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.messages import AssistantMessage, CompactionMessage, Message, TokenUsage, UserMessage
from omniagent.protocols.yuke.sessions import Session, SessionOrigin

ROOT_AGENT = "root"  # the reserved agent name of root sessions
TITLE_MAX = 256  # characters of the first user line kept as the title


def parse_message(payload: str) -> Message:
    """A stored message payload as its wire model."""
    message: Message = decode_json(Message, payload)
    return message


def new_session_id() -> str:
    """32 lowercase hex digits of a time-ordered UUIDv7-like id."""
    ms = now_ms()
    rand = uuid.uuid4().int & ((1 << 80) - 1)
    value = (ms << 80) | (0x7 << 76) | rand >> 4
    return f"{value:032x}"[-32:]


def new_session(
    session_id: str,
    root: str,
    profile: str,
    model: str,
    reasoning: str,
    max_rounds: int | None,
    origin: SessionOrigin,
    agent: str,
    name: str | None = None,
) -> Session:
    """The summary of a session about to be created (`new_session_id()`): no messages yet, config revision 0."""
    now = now_ms()
    return Session(
        id=session_id,
        root=root,
        profile=profile,
        model=model,
        reasoning=reasoning,
        config_rev=0,
        max_rounds=max_rounds,
        title="",
        message_count=0,
        usage_total=TokenUsage(),
        created_at_ms=now,
        updated_at_ms=now,
        origin=origin,
        agent=agent,
        name=name,
    )


def title_of(text: str) -> str:
    """First non-empty line of the first user text, at most TITLE_MAX characters."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:TITLE_MAX]
    return ""


def title_of_messages(messages: list[Message]) -> str:
    """The title a session has after these messages: the first user text's first non-empty line."""
    for message in messages:
        if isinstance(message, UserMessage):
            text = next((p.text for p in message.content if isinstance(p, ContentText)), "")
            if title := title_of(text):
                return title
    return ""


def context_of(messages: list[Message]) -> TokenUsage:
    """The context gauge after these messages: the newest model call's usage, or what the newest compaction left."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.tokens is not None:
            return message.tokens
        if isinstance(message, CompactionMessage):
            return TokenUsage(input=message.tokens_after)
    return TokenUsage()


def tokens_of(usage: n.Usage) -> TokenUsage:
    """A provider call's usage as the wire's `TokenUsage` (same convention: input includes the cache subsets)."""
    return TokenUsage(
        input=usage.input_tokens,
        output=usage.output_tokens,
        reasoning=usage.reasoning_tokens,
        cache_read=usage.cache_read_tokens,
        cache_write=usage.cache_write_tokens,
    )


def resolve_placeholders(prompt: str | None, root: str, session_id: str, agent_name: str) -> str | None:
    """A system prompt with `${workspace}`, `${session_id}` and `${agent_name}` filled in (bad_request for any
    other `${…}`)."""
    if prompt is None:
        return None
    values = {"workspace": root, "session_id": session_id, "agent_name": agent_name}
    out, i = [], 0
    while (start := prompt.find("${", i)) >= 0:
        end = prompt.find("}", start)
        if end < 0:
            break
        name = prompt[start + 2 : end]
        if name not in values:
            raise EngineError.bad_request("the system prompt names an unknown placeholder")
        out += [prompt[i:start], values[name]]
        i = end + 1
    out.append(prompt[i:])
    return "".join(out)
