"""pi's RPC frames → events, and pi's thinking-level rule, without a pi process: the shapes are the ones pi 0.73.1
writes (tests/e2e/agents/test_pi_native.py drives the real CLI). Each event is checked against the wire schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omniagent.protocols.sidecar.base import SystemTime
from omniagent.protocols.sidecar.commands import ChoicesAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    ContextCompacted,
    DiagnosticEvent,
    EventKind,
    MessageEnded,
    QuestionAsk,
    ReasoningDelta,
    RequestOpened,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
)
from omniagent.protocols.sidecar.events import Event as WireEvent
from omniagent.runtime.adapters.pi.info import package_version, thinking_levels
from omniagent.runtime.adapters.pi.translate import EventMapper, dialog_response, question
from tests.e2e.agents import packages
from tests.sidecar_schema import validate


def update(kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message_update",
        "message": {},
        "assistantMessageEvent": {"type": kind, "contentIndex": 0, **fields},
    }


def run(mapper: EventMapper, *frames: dict[str, Any]) -> list[EventKind]:
    events = [event for frame in frames for event in mapper.map(frame)]
    for sequence, kind in enumerate(events):
        wire = WireEvent(sequence=sequence, occurred_at=SystemTime.now(), session_id="s1", turn_info=None, kind=kind)
        validate("Event", wire.dump())
    return events


def test_text_and_thinking_stream_once_under_one_message_id_per_assistant_message() -> None:
    """Deltas pass through; a block's end repeats the whole text and adds only what was not streamed; the user's
    own message is not echoed; each assistant message gets the next id."""
    mapper = EventMapper()
    events = run(
        mapper,
        {"type": "message_start", "message": {"role": "user"}},
        {"type": "message_end", "message": {"role": "user"}},
        {"type": "message_start", "message": {"role": "assistant"}},
        update("thinking_delta", delta="hmm"),
        update("thinking_end", content="hmm"),
        update("text_delta", delta="hello"),
        update("text_end", content="hello there"),
        {"type": "message_end", "message": {"role": "assistant", "usage": {"cost": {"total": 0.5}}}},
        {"type": "message_start", "message": {"role": "assistant"}},
        update("text_end", content="second"),
    )
    assert events == [
        ReasoningDelta(message_id="m1", text="hmm"),
        TextDelta(message_id="m1", text="hello"),
        TextDelta(message_id="m1", text=" there"),
        MessageEnded(message_id="m1"),
        TextDelta(message_id="m2", text="second"),
    ]
    assert mapper.cost == 0.5


def test_a_bash_call_is_one_snapshot_from_pending_to_completed_with_its_output() -> None:
    mapper = EventMapper()
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}
    args = {"toolCallId": "call_1", "toolName": "bash", "args": {"command": "ls"}}
    partial = {"content": [{"type": "text", "text": "a\n"}]}
    done = {"content": [{"type": "text", "text": "a\nb\n"}]}
    events = run(
        mapper,
        {"type": "message_start", "message": {"role": "assistant"}},
        update("toolcall_end", toolCall=call),
        {"type": "tool_execution_start", **args},
        {"type": "tool_execution_update", **args, "partialResult": partial},
        {"type": "tool_execution_end", **args, "result": done, "isError": False},
    )
    snapshots = [event.tool for event in events if isinstance(event, ToolUpdated)]
    assert [s.status for s in snapshots] == [
        ToolStatus.PENDING,
        ToolStatus.RUNNING,
        ToolStatus.RUNNING,
        ToolStatus.COMPLETED,
    ]
    assert snapshots[-1].title == "bash: ls" and snapshots[-1].output == "a\nb\n"
    assert [e.text for e in events if isinstance(e, ToolOutputDelta)] == ["a\n", "b\n"]


def test_dialogs_become_questions_and_answers_become_pi_responses() -> None:
    select = {"type": "extension_ui_request", "id": "u1", "method": "select", "title": "Pick", "options": ["a", "b"]}
    confirm = {"type": "extension_ui_request", "id": "u2", "method": "confirm", "title": "Sure?", "message": "Really"}
    typed = {"type": "extension_ui_request", "id": "u3", "method": "input", "title": "Name"}
    events = run(EventMapper(), select, confirm, typed)
    asked = [e.request.request for e in events if isinstance(e, RequestOpened) and isinstance(e.request, QuestionAsk)]
    assert [[c.id for c in r.questions[0].choices] for r in asked] == [["a", "b"], ["yes", "no"], []]
    assert question(confirm).questions[0].text == "Sure?\nReally"
    assert asked[2].questions[0].allows_free_text
    chosen = QuestionsAnswer(answers=[ChoicesAnswer(ids=["b"])])
    assert dialog_response("u1", "select", chosen) == {"type": "extension_ui_response", "id": "u1", "value": "b"}
    no = QuestionsAnswer(answers=[ChoicesAnswer(ids=["no"])])
    assert dialog_response("u2", "confirm", no) == {"type": "extension_ui_response", "id": "u2", "confirmed": False}
    text = QuestionsAnswer(answers=[TextAnswer(text="Ada")])
    assert dialog_response("u3", "input", text) == {"type": "extension_ui_response", "id": "u3", "value": "Ada"}
    assert dialog_response("u3", "input", None) == {"type": "extension_ui_response", "id": "u3", "cancelled": True}


def test_compaction_notices_and_unknown_frames() -> None:
    result = {"summary": "s", "firstKeptEntryId": "e", "tokensBefore": 9, "details": {}}
    events = run(
        EventMapper(),
        {"type": "compaction_end", "reason": "manual", "result": result, "aborted": False, "willRetry": False},
        {"type": "queue_update", "steering": [], "followUp": []},
        {"type": "extension_ui_request", "id": "n", "method": "notify", "message": "hi", "notifyType": "warning"},
        {"type": "brand_new_event"},
    )
    assert isinstance(events[0], ContextCompacted)
    assert [e.diagnostic.message for e in events if isinstance(e, DiagnosticEvent)] == [
        "hi",
        "unhandled pi event brand_new_event",
    ]


def test_thinking_levels_follow_pis_rule() -> None:
    assert thinking_levels({"reasoning": False}) == ["off"]
    assert thinking_levels({"reasoning": True}) == ["off", "minimal", "low", "medium", "high"]
    assert thinking_levels({"reasoning": True, "thinkingLevelMap": {"minimal": None, "xhigh": "max"}}) == [
        "off",
        "low",
        "medium",
        "high",
        "xhigh",
    ]


def test_the_version_is_read_from_the_package_the_executable_links_into(tmp_path: Path) -> None:
    """npm's `bin/pi` is a link to the package's `dist/cli.js`: its package.json names the version. Anything else
    (a wrapper script) has no version rather than a second Node start."""
    assert package_version(str(packages.entry("pi"))) == packages.version("pi")
    wrapper = tmp_path / "pi"
    wrapper.write_text('#!/bin/sh\nexec pi "$@"\n')
    assert package_version(str(wrapper)) is None
