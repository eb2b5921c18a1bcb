"""Sidecar models encode exactly as the anyagent schema and serde do, and decode what they encode."""

from typing import Any

import pytest

from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AgentInstallation,
    Authenticated,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    InstallationSource,
    OtherAuth,
    SelectKind,
    SessionConfiguration,
    SessionInfo,
    SessionStatus,
    ordered_features,
)
from omniagent.protocols.sidecar.base import SystemTime, ValidationError, convert, dump
from omniagent.protocols.sidecar.commands import Command, PermissionAnswer, QuestionsAnswer, SendAnswer
from omniagent.protocols.sidecar.events import (
    Cancelled,
    CommandInput,
    CommandSpec,
    Completed,
    CompletionSource,
    ContextCompacted,
    Event,
    EventKind,
    Execute,
    FromAgent,
    FromPrompt,
    Mcp,
    PermissionAsk,
    PermissionChoice,
    PermissionRequest,
    RequestOpened,
    StatusChanged,
    StopLimit,
    TextDelta,
    ToolStatus,
    ToolUpdate,
    TurnContext,
    TurnEnded,
    TurnStarted,
)
from tests.sidecar_schema import validate


def _install(**extra: Any) -> AgentInstallation:
    return AgentInstallation(id="mock", name="Mock", executable_path="mock", source=InstallationSource.PINNED, **extra)


def _event(kind: Any) -> Event:
    return Event(
        sequence=1,
        occurred_at=SystemTime.now(),
        session_id="s1",
        turn_info=TurnContext(id="t1"),
        kind=kind,
    )


@pytest.mark.parametrize(
    ("kind", "wire"),
    [
        (ContextCompacted(), "ContextCompacted"),
        (TurnStarted(origin=FromPrompt(prompt_id="p1")), {"TurnStarted": {"origin": {"Prompt": "p1"}}}),
        (TurnStarted(origin=FromAgent()), {"TurnStarted": {"origin": "Agent"}}),
        (TurnEnded(stop=Cancelled()), {"TurnEnded": {"stop": "Cancelled", "background": []}}),
        (
            TurnEnded(stop=Completed(), background=["bg"]),
            {"TurnEnded": {"stop": {"Completed": {"source": "Protocol"}}, "background": ["bg"]}},
        ),
        # Our extension: a limit is written only when there is one, so the line above is the wire's as ever.
        (
            TurnEnded(stop=Completed(limit=StopLimit.MAX_TOKENS)),
            {"TurnEnded": {"stop": {"Completed": {"source": "Protocol", "limit": "MaxTokens"}}, "background": []}},
        ),
        (
            TurnEnded(stop=Completed(source=CompletionSource.INFERRED, limit=StopLimit.MAX_TURN_REQUESTS)),
            {
                "TurnEnded": {
                    "stop": {"Completed": {"source": "Inferred", "limit": "MaxTurnRequests"}},
                    "background": [],
                }
            },
        ),
        (StatusChanged(status=SessionStatus.WORKING), {"StatusChanged": "Working"}),
        (TextDelta(message_id="m1", text="hi"), {"TextDelta": {"message_id": "m1", "text": "hi"}}),
    ],
)
def test_event_kinds_encode_as_serde_externally_tagged_enums(kind: Any, wire: Any) -> None:
    """Unit variants are bare strings, data variants single-key objects."""
    assert dump(kind) == wire
    assert convert(wire, EventKind) == kind
    validate("EventKind", wire)


def test_absent_optionals_are_null_except_upgrade_and_acp_args() -> None:
    """Optionals serialize as null; `upgrade` and `acp_args` are omitted when absent."""
    tool = ToolUpdate(id="tool-1", kind=Execute(), title="cargo test", status=ToolStatus.PENDING)
    wire = _event(
        RequestOpened(
            request=PermissionAsk(request=PermissionRequest(id="r1", tool=tool, options=[PermissionChoice.ALLOW_ONCE]))
        )
    ).dump()
    permission = wire["kind"]["RequestOpened"]["Permission"]
    assert permission["detail"] is None
    assert permission["tool"]["output"] is None and permission["tool"]["raw"] is None
    assert permission["tool"]["input"] == "None"
    validate("Event", wire)
    installation = _install().dump()
    assert "upgrade" not in installation and "acp_args" not in installation
    assert _install(acp_args=["--acp"]).dump()["acp_args"] == ["--acp"]


def test_session_info_round_trips_and_validates() -> None:
    """The schema is the oracle: a full SessionInfo validates and decodes back to the same model."""
    info = SessionInfo(
        id="s1",
        agent=_install(),
        details=AgentDetails(
            version="mock",
            auth=Authenticated(kind=OtherAuth(name="corp")),
            capabilities=Capabilities(features=ordered_features([Capability.STEER, Capability.IMAGES])),
            config_options=[
                ConfigOption(
                    id="model",
                    name="Model",
                    kind=SelectKind(choices=[ConfigChoice(value="sonnet", label="Sonnet")]),
                    current="sonnet",
                    live=True,
                )
            ],
        ),
        configuration=SessionConfiguration(options={"model": "sonnet"}),
    )
    wire = info.dump()
    validate("SessionInfo", wire)
    assert wire["details"]["capabilities"]["features"] == ["Images", "Steer"]
    assert wire["details"]["auth"] == {"Authenticated": {"kind": {"Other": "corp"}, "account": None}}
    assert wire["status"] == "Idle"
    assert convert(wire, SessionInfo) == info


def test_tool_kinds_and_inputs_use_their_tagged_forms() -> None:
    """`{"Mcp":{server,tool}}`, `{"Command":{command,cwd}}`."""
    tool = ToolUpdate(
        id="t",
        kind=Mcp(server="fs", tool="read"),
        title="read",
        status=ToolStatus.RUNNING,
        input=CommandInput(spec=CommandSpec(command="ls")),
    )
    wire = tool.dump()
    assert wire["kind"] == {"Mcp": {"server": "fs", "tool": "read"}}
    assert wire["input"] == {"Command": {"command": "ls", "cwd": None}}
    validate("ToolUpdate", wire)


def test_commands_parse_by_cmd_and_ignore_unknown_fields() -> None:
    """Fields sit next to `cmd`; unknown extra fields are ignored."""
    frame = convert(
        {"id": 4, "cmd": "answer", "session": "s1", "request": "r1", "answer": {"Permission": "AllowOnce"}, "x": 1},
        Command,
    )
    assert isinstance(frame, SendAnswer)
    assert frame.answer == PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE)
    question = convert(
        {"id": 5, "cmd": "answer", "session": "s1", "request": "r1", "answer": {"Question": [{"Text": "t"}]}},
        Command,
    )
    assert isinstance(question, SendAnswer) and isinstance(question.answer, QuestionsAnswer)


@pytest.mark.parametrize(
    "frame",
    [
        {"id": 1, "cmd": "rollback", "session": "s1", "turns": 0, "scope": "Conversation"},
        {"id": 1, "cmd": "nope"},
        {"id": -1, "cmd": "discover"},
        {"id": 1, "cmd": "answer", "session": "s1", "request": "r1", "answer": {"Permission": "Maybe"}},
    ],
)
def test_invalid_frames_are_rejected(frame: dict[str, Any]) -> None:
    """`turns:0`, unknown cmd, negative id and unknown choices are BadFrame."""
    with pytest.raises(ValidationError):
        convert(frame, Command)
