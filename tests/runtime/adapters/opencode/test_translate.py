"""opencode's `/event` objects → driver events (`opencode/translate.py`), on frames shaped as opencode-ai 1.18.33 sends
them (observed with `opencode serve`): text once whatever way it arrives, the user's own parts and the compaction
summary dropped, other sessions ignored, a completed answer ends its message with a fork point and context usage."""

from __future__ import annotations

from typing import Any

from omniagent.protocols.sidecar.events import ContextUsage, MessageEnded, ReasoningDelta, StopLimit, TextDelta
from omniagent.runtime.adapters.opencode.info import ModelFacts, ServerFacts
from omniagent.runtime.adapters.opencode.translate import FORK_POINT, EventMapper, Signals

SESSION = "ses_a"


def mapper() -> EventMapper:
    facts = ServerFacts(version="1.18.33", models={"fake/m": ModelFacts("fake/m", "M", 1000, ())})
    mapped = EventMapper(facts, "/work")
    mapped.session_id = SESSION
    return mapped


def message(message_id: str, role: str, **info: Any) -> dict[str, Any]:
    body = {"id": message_id, "sessionID": SESSION, "role": role, "time": {"created": 1}, **info}
    return {"type": "message.updated", "properties": {"sessionID": SESSION, "info": body}}


def part(message_id: str, part_id: str, kind: str, text: str) -> dict[str, Any]:
    body = {"id": part_id, "messageID": message_id, "sessionID": SESSION, "type": kind, "text": text}
    return {"type": "message.part.updated", "properties": {"sessionID": SESSION, "part": body, "time": 1}}


def delta(message_id: str, part_id: str, text: str) -> dict[str, Any]:
    props = {"sessionID": SESSION, "messageID": message_id, "partID": part_id, "field": "text", "delta": text}
    return {"type": "message.part.delta", "properties": props}


def kinds(mapped: EventMapper, *events: dict[str, Any]) -> list[Any]:
    signals = [mapped.map(event) for event in events]
    return [item.kind for s in signals for item in s.events]


def test_streamed_text_is_sent_once_even_when_the_whole_part_follows() -> None:
    mapped = mapper()
    out = kinds(
        mapped,
        message("msg_1", "assistant"),
        part("msg_1", "prt_1", "text", ""),
        delta("msg_1", "prt_1", "hello "),
        delta("msg_1", "prt_1", "world"),
        part("msg_1", "prt_1", "text", "hello world"),
    )
    assert out == [TextDelta(message_id="msg_1", text="hello "), TextDelta(message_id="msg_1", text="world")]


def test_a_part_that_arrives_whole_is_sent_whole_and_reasoning_stays_reasoning() -> None:
    mapped = mapper()
    out = kinds(
        mapped,
        message("msg_1", "assistant"),
        part("msg_1", "prt_r", "reasoning", "thinking"),
        part("msg_1", "prt_t", "text", "answer"),
    )
    assert out == [ReasoningDelta(message_id="msg_1", text="thinking"), TextDelta(message_id="msg_1", text="answer")]


def test_the_users_own_parts_the_compaction_summary_and_other_sessions_are_dropped() -> None:
    mapped = mapper()
    other = part("msg_x", "prt_x", "text", "not ours")
    other["properties"]["sessionID"] = other["properties"]["part"]["sessionID"] = "ses_other"
    out = kinds(
        mapped,
        message("msg_u", "user"),
        part("msg_u", "prt_u", "text", "my prompt"),
        message("msg_c", "assistant", mode="compaction", agent="compaction", summary=True),
        part("msg_c", "prt_c", "text", "the summary"),
        delta("msg_c", "prt_c", " more"),
        other,
    )
    assert out == []


def test_a_completed_answer_ends_its_message_with_a_fork_point_then_reports_usage() -> None:
    mapped = mapper()
    kinds(mapped, message("msg_1", "assistant"), part("msg_1", "prt_1", "text", "hi"))
    tokens = {"total": 15, "input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    done = message(
        "msg_1", "assistant", time={"created": 1, "completed": 2}, tokens=tokens, cost=0.5,
        providerID="fake", modelID="m",
    )  # fmt: skip
    signals = mapped.map(done)
    assert [e.kind for e in signals.events] == [
        MessageEnded(message_id="msg_1"),
        ContextUsage(used_tokens=15, window_tokens=1000, cost_usd=0.5),
    ]
    assert signals.events[0].extensions == {FORK_POINT: "msg_1"}
    assert mapped.map(done).events == []  # opencode repeats the update: ended once


def test_a_completed_reply_signals_the_limit_its_finish_says() -> None:
    """Issue 33: opencode 1.18.33 marks a reply cut at the model's output limit with `finish: "length"` (no error);
    the signal carries MaxTokens, and a reply that finished otherwise carries no limit."""
    mapped = mapper()
    cut = mapped.map(message("msg_1", "assistant", time={"created": 1, "completed": 2}, finish="length"))
    assert cut.reply_ended and cut.limit is StopLimit.MAX_TOKENS
    done = mapped.map(message("msg_2", "assistant", time={"created": 3, "completed": 4}, finish="stop"))
    assert done.reply_ended and done.limit is None
    assert not mapped.map(message("msg_3", "assistant", finish="length")).reply_ended  # not completed yet


def test_turn_signals_busy_idle_and_an_abort_are_told_apart() -> None:
    mapped = mapper()
    busy = mapped.map({"type": "session.status", "properties": {"sessionID": SESSION, "status": {"type": "busy"}}})
    aborted = mapped.map(
        {"type": "session.error", "properties": {"sessionID": SESSION, "error": {"name": "MessageAbortedError"}}}
    )
    failed = mapped.map(
        {
            "type": "session.error",
            "properties": {"sessionID": SESSION, "error": {"name": "APIError", "data": {"message": "boom"}}},
        }
    )
    idle = mapped.map({"type": "session.idle", "properties": {"sessionID": SESSION}})
    assert busy == Signals(busy=True)
    assert aborted.aborted and not failed.aborted and failed.error == "boom (APIError)"
    assert idle == Signals(idle=True)


def test_messages_the_session_already_had_are_history_not_news() -> None:
    """A fork announces its copied messages as if new; ids known at open are never shown (nor start a turn)."""
    mapped = mapper()
    mapped.history.add("msg_old")
    tokens = {"total": 15, "input": 10, "output": 5}
    out = kinds(
        mapped,
        message("msg_old", "assistant", time={"created": 1, "completed": 2}, tokens=tokens),
        part("msg_old", "prt_old", "text", "old answer"),
        delta("msg_old", "prt_old", " more"),
    )
    assert out == []
