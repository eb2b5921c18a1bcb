"""ACP v1/v2 models: round trips, strict known variants, kept unknowns and `_meta`, explicit null, schema oracle."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from msgspec import UNSET, ValidationError

from omniagent.protocols.acp import methods, v1, v2

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "omniagent" / "protocols" / "acp" / "schema"


@cache
def schema(version: int) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"acp-v{version}.schema.json").read_text())
    return loaded


def validator(version: int, definition: str) -> Draft202012Validator:
    """A validator for one definition (the root schema's catch-all extension arms would accept anything)."""
    return Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": schema(version)["$defs"]})


def assert_valid(version: int, definition: str, value: Any) -> None:
    validator(version, definition).validate(value)


V2_UPDATES: list[dict[str, Any]] = [
    {"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "hi"}]},
    {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": {"type": "text", "text": "hel"}},
    {"sessionUpdate": "state_update", "state": "running"},
    {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "title": "Run ls",
        "kind": "execute",
        "status": "cancelled",
        "rawInput": {"command": "ls"},
        "_meta": {"traceparent": "00-abc"},
    },
    {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": "t1",
        "content": {"type": "diff", "changes": [{"operation": "move", "oldPath": "/a", "path": "/b"}]},
    },
    {"sessionUpdate": "terminal_output_chunk", "terminalId": "term", "data": "aGk="},
    {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
    {"sessionUpdate": "usage_update", "used": 10, "size": 100},
]


@pytest.mark.parametrize("update", V2_UPDATES, ids=lambda u: str(u["sessionUpdate"]))
def test_v2_updates_round_trip_exactly_and_validate_against_the_schema(update: dict[str, Any]) -> None:
    """Each known update parses to its variant and dumps back to the same JSON."""
    parsed = methods.parse(v2.UpdateSessionNotification, {"sessionId": "s1", "update": update})
    assert not type(parsed.update).__name__.endswith("Other")
    dumped = parsed.dump()
    assert dumped == {"sessionId": "s1", "update": update}
    assert_valid(2, "UpdateSessionNotification", dumped)


def test_v1_updates_and_real_agent_shapes_round_trip() -> None:
    """v1 `tool_call`, `plan`, and Gemini's untyped auth methods parse as v1 and dump unchanged."""
    for update in (
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read", "kind": "read", "status": "pending"},
        {"sessionUpdate": "plan", "entries": [{"content": "x", "priority": "high", "status": "pending"}]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    ):
        dumped = methods.parse(v1.SessionNotification, {"sessionId": "s", "update": update}).dump()
        assert dumped["update"] == update
        assert_valid(1, "SessionNotification", dumped)
    result = {
        "protocolVersion": 1,
        "agentCapabilities": {"loadSession": True, "mcpCapabilities": {"http": True, "sse": True}},
        "authMethods": [{"id": "gemini-api-key", "name": "Use Gemini API key", "description": None}],
    }
    parsed = methods.parse(v1.InitializeResponse, result)
    assert isinstance(parsed.auth_methods[0], v1.AuthMethodAgent)
    assert parsed.dump() == result
    assert_valid(1, "InitializeResponse", parsed.dump())


def test_nested_tags_pick_the_inner_variant() -> None:
    """`state_update` is tagged twice (sessionUpdate, then state); idle carries the stop reason."""
    update = methods.parse(
        v2.SessionUpdate, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    )
    assert isinstance(update, v2.SessionUpdateStateUpdateIdle)
    assert update.stop_reason == "cancelled"
    with pytest.raises(ValidationError):
        methods.parse(v2.SessionUpdate, {"sessionUpdate": "state_update", "state": "idle", "stopReason": 5})


def test_a_malformed_known_variant_is_rejected_not_treated_as_other() -> None:
    """Known tags validate strictly (v2 `agent_message_chunk` requires messageId)."""
    bad = {
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
    }
    with pytest.raises(ValidationError):
        methods.parse(v2.UpdateSessionNotification, bad)
    assert not validator(2, "UpdateSessionNotification").is_valid(bad)


def test_unknown_variants_and_meta_are_preserved_raw() -> None:
    """Preserve unknown variants and `_meta` when storing or proxying."""
    update = {"sessionUpdate": "_acme/progress", "percent": 40, "nested": {"a": [1, None]}, "_meta": {"k": "v"}}
    parsed = methods.parse(v2.SessionUpdate, update)
    assert isinstance(parsed, v2.SessionUpdateOther)
    assert parsed.dump() == update
    block = {"type": "hologram", "uri": "x:y"}
    assert methods.parse(v2.ContentBlock, block).dump() == block
    outcome = methods.parse(v2.RequestPermissionOutcome, {"outcome": "maybe"})
    assert isinstance(outcome, v2.RequestPermissionOutcomeOther)  # an unknown outcome is never approval


def test_explicit_null_survives_a_round_trip_and_omitted_stays_omitted() -> None:
    """Three-state patches — omitted = unchanged, null = clear, value = replace."""
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": None, "content": None}
    dumped = methods.parse(v2.SessionUpdate, update).dump()
    assert dumped == update
    assert "status" not in dumped
    built = v2.SessionUpdateToolCallUpdate(tool_call_id="t1", title=None)
    assert built.dump() == {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": None}


def test_models_built_in_python_write_their_tags_and_validate() -> None:
    """Our choice: a variant built with Python names always writes its discriminator."""
    update = v2.SessionUpdateAgentMessageChunk(message_id="m1", content=v2.ContentBlockText(text="hi"))
    params = v2.UpdateSessionNotification(session_id="s", update=update).dump()
    assert params["update"] == {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "hi"},
    }
    assert_valid(2, "UpdateSessionNotification", params)
    request = v2.InitializeRequest(protocol_version=2, info=v2.Implementation(name="omniagent", version="0.1.0"))
    assert_valid(2, "InitializeRequest", request.dump())


def test_v1_closed_unions_reject_unknown_tags_and_v1_stdio_needs_no_type() -> None:
    """v1 schema: ContentBlock is closed; McpServer stdio is the untagged default."""
    with pytest.raises(ValidationError):
        methods.parse(v1.ContentBlock, {"type": "hologram"})
    server = methods.parse(v1.McpServer, {"name": "fs", "command": "/bin/fs", "args": [], "env": []})
    assert isinstance(server, v1.McpServerStdio)


def test_method_tables_cover_both_versions_core_methods() -> None:
    """v1 has authenticate/session/load/set_mode; v2 has auth/login and session/resume instead."""
    assert {"initialize", "authenticate", "session/new", "session/load", "session/prompt", "session/set_mode"} <= set(
        methods.V1.agent_requests
    )
    assert "session/load" not in methods.V2.agent_requests
    assert {"auth/login", "session/resume", "session/close", "session/list"} <= set(methods.V2.agent_requests)
    assert "session/request_permission" in methods.V2.client_requests
    assert "fs/read_text_file" in methods.V1.client_requests and "fs/read_text_file" not in methods.V2.client_requests
    assert methods.V2.client_notifications["session/update"] is v2.UpdateSessionNotification


def test_parsed_fields_tell_omitted_from_null() -> None:
    """Three-state fields read back: UNSET when omitted, None when sent as null."""
    update = methods.parse(v2.SessionUpdate, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": None})
    assert isinstance(update, v2.SessionUpdateToolCallUpdate)
    assert update.title is None
    assert update.status is UNSET


def test_input_is_decoded_strictly() -> None:
    """No coercion: a number as a string, or a string as a number, is off-schema."""
    for bad in (
        {"sessionUpdate": "usage_update", "used": "10", "size": 100},
        {"sessionUpdate": "agent_message_chunk", "messageId": 7, "content": {"type": "text", "text": "x"}},
        {"sessionUpdate": "state_update", "state": "running", "_meta": []},
    ):
        with pytest.raises(ValidationError):
            methods.parse(v2.SessionUpdate, bad)


def test_untagged_unions_take_the_member_that_fits() -> None:
    """Plain unions: embedded text vs blob resources; select options as a flat list or as groups."""
    text = methods.parse(v2.EmbeddedResourceResource, {"uri": "file:///a", "text": "x"})
    blob = methods.parse(v2.EmbeddedResourceResource, {"uri": "file:///a", "blob": "eA=="})
    assert isinstance(text, v2.TextResourceContents) and isinstance(blob, v2.BlobResourceContents)
    option = {"type": "select", "configId": "model", "name": "Model", "currentValue": "a"}
    flat = methods.parse(v2.SessionConfigOption, {**option, "options": [{"value": "a", "name": "A"}]})
    groups = {**option, "options": [{"groupId": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}]}
    grouped = methods.parse(v2.SessionConfigOption, groups)
    assert isinstance(flat, v2.SessionConfigOptionSelect) and isinstance(grouped, v2.SessionConfigOptionSelect)
    assert isinstance(flat.options[0], v2.SessionConfigSelectOption)
    assert isinstance(grouped.options[0], v2.SessionConfigSelectGroup)
    assert grouped.dump() == groups
    with pytest.raises(ValidationError):
        methods.parse(v2.EmbeddedResourceResource, {"uri": "file:///a"})


def test_unknown_fields_survive_dump_of_a_parsed_value_and_nested_unknown_variants_survive_anywhere() -> None:
    """A parsed value dumps the JSON it was read from (claude-code-acp's `models` beside v1's `session/new` result);
    an unknown variant keeps its JSON even inside a model built in Python."""
    result = {"sessionId": "s", "models": {"currentModelId": "m", "availableModels": []}, "configOptions": []}
    assert methods.parse(v1.NewSessionResponse, result).dump() == result
    hologram = {"type": "hologram", "uri": "x:y", "depth": 3}
    block = methods.parse(v2.ContentBlock, hologram)
    update = v2.SessionUpdateAgentMessageChunk(message_id="m1", content=block)
    assert update.dump() == {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": hologram}
