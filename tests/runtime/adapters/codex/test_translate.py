"""The pure parts of the Codex adapter: app-server notifications → events, server requests ↔ typed requests and
answers, and the session's auth, options and capabilities. Frames are shaped as codex 0.171.0 sends them (its
`app-server generate-json-schema` schema); the real CLI runs in tests/e2e/agents/test_codex_native.py."""

from __future__ import annotations

from typing import Any

from omniagent.protocols.sidecar.agents import (
    ApiKey,
    Authenticated,
    AuthUnknown,
    Capability,
    EnvVarLogin,
    Subscription,
    Unauthenticated,
)
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.protocols.sidecar.commands import ChoicesAnswer, PermissionAnswer, QuestionsAnswer, TextAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    Completed,
    DiagnosticEvent,
    Execute,
    Failed,
    MessageEnded,
    PermissionChoice,
    PlanUsageUpdated,
    QuestionAsk,
    Subagent,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.codex import requests as server_requests
from omniagent.runtime.adapters.codex.info import CodexState, auth_status, creation_problem, parse_models
from omniagent.runtime.adapters.codex.translate import FORK_POINT, RAW_FRAME, ThreadTranslator

THREAD = "thr-1"


def _started(translator: ThreadTranslator, turn: str, thread: str = THREAD) -> bool:
    return translator.turn_started({"threadId": thread, "turn": {"id": turn, "status": "inProgress"}})


def _completed(turn: str, status: str = "completed", thread: str = THREAD, error: Any = None) -> dict[str, Any]:
    return {"threadId": thread, "turn": {"id": turn, "status": status, "error": error}}


def _item(item: dict[str, Any], turn: str = "turn-1", thread: str = THREAD) -> dict[str, Any]:
    return {"threadId": thread, "turnId": turn, "item": item}


def _kinds(events: list[d.DriverEvent]) -> list[Any]:
    return [e.kind if isinstance(e, d.AdapterEvent) else e for e in events]


def test_only_the_current_turn_ends_and_its_running_tools_end_cancelled() -> None:
    """A late `turn/completed` of an older turn, or one of another thread, ends nothing; the current turn's end
    first settles its still-running tools as Cancelled, then stops the turn with the wire's status."""
    t = ThreadTranslator(thread_id=THREAD)
    assert _started(t, "turn-1") and not _started(t, "other", thread="thr-2")
    command = {"type": "commandExecution", "id": "call_1", "command": "sleep 9", "cwd": "/w", "status": "inProgress"}
    assert isinstance(_kinds(t.notification("item/started", _item(command)))[0], ToolUpdated)
    assert t.turn_completed(_completed("turn-0")) == []
    assert t.turn_completed(_completed("turn-1", thread="thr-2")) == []
    events = _kinds(t.turn_completed(_completed("turn-1", status="interrupted")))
    assert isinstance(events[0], ToolUpdated) and events[0].tool.status is ToolStatus.CANCELLED
    assert events[1] == d.TurnStopped(Cancelled())
    _started(t, "turn-2")
    failed = t.turn_completed(_completed("turn-2", status="failed", error={"message": "provider said 400"}))
    assert failed == [d.TurnStopped(Failed(message="provider said 400"))]


def test_frames_of_an_older_turn_are_dropped() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-2")
    delta = {"threadId": THREAD, "turnId": "turn-1", "itemId": "msg_1", "delta": "stale"}
    assert t.notification("item/agentMessage/delta", delta) == []
    delta["turnId"] = "turn-2"
    assert _kinds(t.notification("item/agentMessage/delta", delta)) == [TextDelta(message_id="msg_1", text="stale")]


def test_an_answer_that_never_streamed_is_sent_whole_and_ends_with_its_fork_point() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-1")
    events = t.notification("item/completed", _item({"type": "agentMessage", "id": "msg_1", "text": "whole"}))
    assert _kinds(events) == [TextDelta(message_id="msg_1", text="whole"), MessageEnded(message_id="msg_1")]
    assert isinstance(events[1], d.AdapterEvent) and events[1].extensions == {FORK_POINT: "turn-1"}


def test_user_messages_of_others_are_reported_and_ours_are_not() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-1")
    ours = {"type": "userMessage", "id": "u1", "clientId": "omniagent-m1", "content": [{"type": "text", "text": "x"}]}
    theirs = {"type": "userMessage", "id": "u2", "clientId": None, "content": [{"type": "text", "text": "hello"}]}
    assert t.notification("item/completed", _item(ours)) == []
    assert _kinds(t.notification("item/completed", _item(theirs))) == [UserMessage(message_id="u2", text="hello")]


def test_a_child_threads_frames_belong_to_the_subagent_tool_and_never_end_the_turn() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-1")
    spawn = {"type": "collabAgentToolCall", "id": "call_a", "tool": "spawn_agent", "receiverThreadIds": ["thr-kid"]}
    first = _kinds(t.notification("item/started", _item(spawn)))
    assert isinstance(first[0], ToolUpdated) and isinstance(first[0].tool.kind, Subagent)
    delta = {"threadId": "thr-kid", "turnId": "kid-turn", "itemId": "msg_k", "delta": "from the child"}
    events = t.notification("item/agentMessage/delta", delta)
    assert isinstance(events[0], d.AdapterEvent) and events[0].parent_tool_id == "call_a"
    assert t.turn_completed(_completed("kid-turn", thread="thr-kid")) == []
    assert t.notification("item/agentMessage/delta", delta | {"threadId": "thr-unknown"}) == []


def test_command_output_streams_as_deltas_into_the_tool() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-1")
    command = {"type": "commandExecution", "id": "call_1", "command": "ls", "cwd": "/w", "status": "inProgress"}
    tool = _kinds(t.notification("item/started", _item(command)))[0]
    assert isinstance(tool.tool.kind, Execute) and tool.tool.input.spec.command == "ls"
    out = {"threadId": THREAD, "turnId": "turn-1", "itemId": "call_1", "delta": "a.txt\n"}
    assert _kinds(t.notification("item/commandExecution/outputDelta", out))[0].text == "a.txt\n"
    done = _kinds(t.notification("item/completed", _item(command | {"status": "completed"})))[0]
    assert done.tool.status is ToolStatus.COMPLETED and done.tool.output == "a.txt\n"


def test_401_is_auth_lost_once_and_other_errors_are_diagnostics() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    unauthorized = {
        "error": {"message": "401", "codexErrorInfo": {"responseStreamConnectionFailed": {"httpStatusCode": 401}}}
    }
    assert t.notification("error", unauthorized) == [d.AuthLost(login=[])]
    assert t.notification("error", unauthorized) == []
    retrying = _kinds(t.notification("error", {"error": {"message": "busy"}, "willRetry": True}))[0]
    final = _kinds(t.notification("error", {"error": {"message": "gone"}, "willRetry": False}))[0]
    assert retrying.diagnostic.level is DiagnosticLevel.WARNING and final.diagnostic.level is DiagnosticLevel.ERROR


def test_rate_limits_become_plan_usage_only_when_they_have_a_window() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    empty = {"rateLimits": {"limitId": "codex", "primary": None, "secondary": None, "planType": None}}
    assert t.notification("account/rateLimits/updated", empty) == []
    window = {"usedPercent": 101.7, "windowDurationMins": 10080, "resetsAt": 1900000000}
    usage = _kinds(t.notification("account/rateLimits/updated", {"rateLimits": {"primary": window, "planType": "pro"}}))
    assert isinstance(usage[0], PlanUsageUpdated)
    assert usage[0].usage.plan == "pro" and [(w.label, w.used_percent) for w in usage[0].usage.windows] == [
        ("Week", 100)
    ]


def test_unknown_notifications_are_info_diagnostics_carrying_the_frame() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    events = t.notification("thread/brandNew", {"x": 1})
    assert isinstance(events[0], d.AdapterEvent) and isinstance(events[0].kind, DiagnosticEvent)
    assert events[0].kind.diagnostic.level is DiagnosticLevel.INFO
    assert events[0].extensions == {RAW_FRAME: {"method": "thread/brandNew", "params": {"x": 1}}}
    warning = _kinds(t.notification("configWarning", {"summary": "bubblewrap missing", "details": "using bundled"}))
    assert warning[0].diagnostic.message == "bubblewrap missing: using bundled"


def test_approvals_offer_three_choices_and_answer_with_codex_decisions() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    params = {"itemId": "call_1", "command": "touch a", "cwd": "/w", "reason": "needs write", "threadId": THREAD}
    opened = server_requests.opened(server_requests.COMMAND_APPROVAL, "r0", params, t)
    request = opened.request.request
    assert request.options == [PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE]
    assert request.detail == "needs write" and request.tool.title == "touch a"
    method = server_requests.COMMAND_APPROVAL
    decide = {c: server_requests.answer_result(method, PermissionAnswer(choice=c), params) for c in request.options}
    assert [v["decision"] for v in decide.values()] == ["accept", "acceptForSession", "decline"]
    assert server_requests.answer_result(method, None, params) == {"decision": "cancel"}


def test_user_input_questions_map_labels_and_free_text_both_ways() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    params = {
        "questions": [
            {"id": "lang", "header": "Language", "question": "Which?", "options": [{"label": "Py", "description": ""}]},
            {"id": "name", "header": "", "question": "Your name?", "options": None},
        ]
    }
    opened = server_requests.opened(server_requests.USER_INPUT, "r3", params, t)
    assert isinstance(opened.request, QuestionAsk)
    first, second = opened.request.request.questions
    assert [c.id for c in first.choices] == ["Py"] and not first.allows_free_text and second.allows_free_text
    answer = QuestionsAnswer(answers=[ChoicesAnswer(ids=["Py"]), TextAnswer(text="Ada")])
    result = server_requests.answer_result(server_requests.USER_INPUT, answer, params)
    assert result == {"answers": {"lang": {"answers": ["Py"]}, "name": {"answers": ["Ada"]}}}
    assert server_requests.answer_result(server_requests.USER_INPUT, None, params) == {"answers": {}}


def test_auth_reads_the_account_and_only_a_chatgpt_plan_advertises_plan_usage() -> None:
    logins = [EnvVarLogin(name="OPENAI_API_KEY")]
    chatgpt = auth_status({"account": {"type": "chatgpt", "email": "a@b.c", "planType": "pro"}}, logins)
    assert isinstance(chatgpt, Authenticated) and isinstance(chatgpt.kind, Subscription)
    assert chatgpt.account is not None and chatgpt.account.plan == "pro"
    api_key = auth_status({"account": {"type": "apiKey"}}, logins)
    assert isinstance(api_key, Authenticated) and isinstance(api_key.kind, ApiKey)
    assert isinstance(auth_status({"account": None, "requiresOpenaiAuth": False}, logins), AuthUnknown)
    assert auth_status({"account": None, "requiresOpenaiAuth": True}, logins) == Unauthenticated(login=logins)
    state = CodexState(auth=chatgpt)
    assert Capability.PLAN_USAGE in state.info().details.capabilities.features
    assert Capability.PLAN_USAGE not in CodexState(auth=api_key).info().details.capabilities.features


def test_creation_options_are_checked_against_the_model_list() -> None:
    models = parse_models(
        [
            {"id": "m1", "isDefault": True, "supportedReasoningEfforts": [{"reasoningEffort": "low"}]},
            {"id": "m2", "supportedReasoningEfforts": [{"reasoningEffort": "high"}]},
        ]
    )
    state = CodexState(models=models)
    assert creation_problem(state, {"model": "m2", "effort": "high"}) is None
    assert creation_problem(state, {"effort": "high"}) == "`high` is not a choice of `effort` for m1"
    assert creation_problem(state, {"model": "nope"}) == "`nope` is not a choice of `model`"
    assert creation_problem(state, {"mode": "sometimes"}) == "`sometimes` is not a choice of `mode`"
    assert creation_problem(state, {"fast": True}) == "unknown option `fast`"


def test_a_completed_turn_is_completed() -> None:
    t = ThreadTranslator(thread_id=THREAD)
    _started(t, "turn-1")
    assert t.turn_completed(_completed("turn-1")) == [d.TurnStopped(Completed())]
