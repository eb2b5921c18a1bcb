"""Claude Code frames → driver events, on frames recorded from claude 2.1.197 (tests/fixtures/claude/tool_turn.jsonl:
a turn where the model thinks, writes text, asks for Bash, is allowed, and answers) and on shapes seen offline.
The whole path through the real CLI is tests/e2e/agents/test_claude_native.py; these pin the translation rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omniagent.protocols.sidecar.agents import Capability, EnvVarLogin
from omniagent.protocols.sidecar.commands import ChoicesAnswer, PermissionAnswer, QuestionsAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    Completed,
    DiagnosticEvent,
    Execute,
    Failed,
    MessageEnded,
    PermissionAsk,
    PermissionChoice,
    QuestionAsk,
    ReasoningDelta,
    StopLimit,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.claude.control import answer_body
from omniagent.runtime.adapters.claude.info import ClaudeState
from omniagent.runtime.adapters.claude.translate import FrameMapper, result_stop

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "claude" / "tool_turn.jsonl"
LOGINS = [EnvVarLogin(name="ANTHROPIC_API_KEY")]


def _frames() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]


def _mapper() -> FrameMapper:
    return FrameMapper(ClaudeState("11111111-2222-4333-8444-000000000001"), lambda: LOGINS)


def _replay(mapper: FrameMapper, frames: list[dict[str, Any]]) -> list[d.DriverEvent]:
    """What the driver hands the mapper: everything but control frames and results."""
    events: list[d.DriverEvent] = []
    for frame in frames:
        if frame["type"] not in ("control_request", "control_response", "result"):
            events += mapper.map(frame)
    return events


def _kinds(events: list[d.DriverEvent]) -> list[Any]:
    return [event.kind for event in events if isinstance(event, d.AdapterEvent)]


def test_streamed_text_and_reasoning_arrive_once_in_messages_that_end() -> None:
    """The CLI sends each block twice (deltas, then the whole `assistant` frame): the caller sees it once."""
    kinds = _kinds(_replay(_mapper(), _frames()))
    assert "".join(k.text for k in kinds if isinstance(k, ReasoningDelta)) == "I should run it."
    assert "".join(k.text for k in kinds if isinstance(k, TextDelta)) == "Running it.tool done"
    ended = [k.message_id for k in kinds if isinstance(k, MessageEnded)]
    assert ended == ["msg_fake", "msg_fake-2"]  # the fake's one id made unique per message
    assert {k.message_id for k in kinds if isinstance(k, TextDelta | ReasoningDelta)} <= set(ended)
    assert not [k for k in kinds if isinstance(k, DiagnosticEvent)]  # every recorded frame is understood


def test_the_tool_goes_pending_running_completed_with_its_command() -> None:
    updates = [k.tool for k in _kinds(_replay(_mapper(), _frames())) if isinstance(k, ToolUpdated)]
    assert [u.status for u in updates] == [ToolStatus.PENDING, ToolStatus.RUNNING, ToolStatus.COMPLETED]
    last = updates[-1]
    assert isinstance(last.kind, Execute) and isinstance(last.input, CommandInput)
    assert last.input.spec.command == "touch fake_tool_ran.txt" and last.title == "Create the marker file"
    assert last.output == "(Bash completed with no output)"


def test_system_init_adds_the_features_its_tools_give() -> None:
    mapper = _mapper()
    init = next(f for f in _frames() if f.get("subtype") == "init")
    (changed,) = mapper.map(init)
    assert isinstance(changed, d.InfoChanged)
    assert Capability.QUESTIONS in changed.info.details.capabilities.features
    assert mapper.map(init) == []  # nothing new the second time


def test_can_use_tool_becomes_a_permission_and_each_answer_its_response() -> None:
    mapper = _mapper()
    frames = _frames()
    _replay(mapper, frames[: next(i for i, f in enumerate(frames) if f["type"] == "control_request")])
    request = next(f for f in frames if f["type"] == "control_request")["request"]
    opened = mapper.permission("rX", request)
    assert isinstance(opened.request, PermissionAsk)
    ask = opened.request.request
    assert ask.options == [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
    assert ask.tool.status is ToolStatus.PENDING and ask.detail == "Create the marker file"
    allow = answer_body(request, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
    assert allow == {"behavior": "allow", "updatedInput": request["input"]}
    always = answer_body(request, PermissionAnswer(choice=PermissionChoice.ALLOW_ALWAYS))
    assert always["updatedPermissions"] == request["permission_suggestions"]
    assert answer_body(request, PermissionAnswer(choice=PermissionChoice.DENY_ONCE))["behavior"] == "deny"
    assert answer_body(request, None) | {"message": ""} == {"behavior": "deny", "message": "", "interrupt": True}


def test_ask_user_question_becomes_a_question_answered_with_labels() -> None:
    question = {
        "question": "Which?",
        "header": "Pick",
        "options": [{"label": "A"}, {"label": "B"}],
        "multiSelect": True,
    }
    request = {"subtype": "can_use_tool", "tool_name": "AskUserQuestion", "input": {"questions": [question]}}
    opened = _mapper().permission("rQ", request)
    assert isinstance(opened.request, QuestionAsk)
    (asked,) = opened.request.request.questions
    assert (asked.id, asked.multi_select, [c.id for c in asked.choices]) == ("q0", True, ["A", "B"])
    body = answer_body(request, QuestionsAnswer(answers=[ChoicesAnswer(ids=["A", "B"])]))
    assert body["updatedInput"]["answers"] == {"Which?": "A, B"}


def test_a_message_that_never_streamed_is_sent_whole_and_ended() -> None:
    """The CLI's own notes (`model: <synthetic>`) come only as an `assistant` frame."""
    note = {
        "type": "assistant",
        "parent_tool_use_id": None,
        "message": {"id": "n1", "model": "<synthetic>", "content": [{"type": "text", "text": "Not enough messages."}]},
    }
    kinds = _kinds(_mapper().map(note))
    assert kinds == [TextDelta(message_id="n1", text="Not enough messages."), MessageEnded(message_id="n1")]


def test_a_subagents_user_text_is_a_user_message_and_ours_is_dropped() -> None:
    mapper = _mapper()
    ours = {"type": "user", "parent_tool_use_id": None, "uuid": "u0", "message": {"content": "hello"}}
    assert mapper.map(ours) == []
    nested = {"type": "user", "parent_tool_use_id": "toolu_1", "uuid": "u1", "message": {"content": "look here"}}
    (event,) = mapper.map(nested)
    assert isinstance(event, d.AdapterEvent) and event.parent_tool_id == "toolu_1"
    assert event.kind == UserMessage(message_id="u1", text="look here")


def test_login_failures_lose_auth_once() -> None:
    mapper = _mapper()
    retry = {"type": "system", "subtype": "api_retry", "error_status": 401, "error": "authentication_failed"}
    assert mapper.map(retry) == [d.AuthLost(LOGINS)]
    assert mapper.map(retry) == []


def test_result_verdicts() -> None:
    assert isinstance(result_stop({"subtype": "success", "is_error": False}, interrupted=False), Completed)
    interrupted = {"subtype": "error_during_execution", "is_error": True, "terminal_reason": "aborted_streaming"}
    assert isinstance(result_stop(interrupted, interrupted=True), Cancelled)
    assert isinstance(result_stop({"subtype": "success", "is_error": False}, interrupted=True), Cancelled)
    api_error = {"subtype": "success", "is_error": True, "result": "API Error: 500"}
    assert result_stop(api_error, interrupted=False) == Failed(message="API Error: 500")
    refused = {"subtype": "success", "is_error": False, "result": "Not enough messages to compact."}
    assert result_stop(refused, interrupted=False, compact_error="Not enough") == Failed(message="Not enough")


def test_the_clis_max_turns_completes_the_turn_at_that_limit_and_its_output_limit_fails_it() -> None:
    """Issue 33: the CLI's max turns (`error_max_turns`, which says `is_error`, shaped as 2.1.197 writes it) is
    Completed at MaxTurnRequests; an interrupt still cancels. The output limit reaches us as 2.1.197 ends it after
    its own attempts to go on (observed against the fake LLM): an `is_error` success with an "API Error" text and no
    `max_tokens` anywhere, so it fails the turn with that text."""
    max_turns = {
        "subtype": "error_max_turns",
        "is_error": True,
        "errors": ["Reached maximum number of turns (1)"],
        "stop_reason": "tool_use",
    }
    assert result_stop(max_turns, interrupted=False) == Completed(limit=StopLimit.MAX_TURN_REQUESTS)
    assert result_stop(max_turns, interrupted=True) == Cancelled()
    text = "API Error: Claude's response exceeded the 64000 output token maximum."
    cut = {"subtype": "success", "is_error": True, "result": text, "stop_reason": "stop_sequence"}
    assert result_stop(cut, interrupted=False) == Failed(message=text)
