"""The typed yuke models: tags, strictness and the omit-null rule (docs/yuke-rpc.md §1-§3)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from omniagent.protocols.yuke.activity import ActivityIdle, SessionActivity
from omniagent.protocols.yuke.content import Input
from omniagent.protocols.yuke.messages import TokenUsage, ToolPart
from omniagent.protocols.yuke.methods import BROADCASTS, METHODS
from omniagent.protocols.yuke.sessions import SessionCancelRunResult, SessionGetParams, SessionListParams
from omniagent.protocols.yuke.tools import ToolStatePending


def test_the_tables_name_every_method_and_broadcast_of_the_spec() -> None:
    """yuke-rpc.txt: 27 MethodName values and 22 BroadcastName values."""
    assert len(METHODS) == 27 and len(BROADCASTS) == 22


def test_absent_optionals_are_omitted_and_empty_arms_carry_only_their_tag() -> None:
    """yuke §1: absent optionals are omitted, never null; §3: empty arms serialize as `{"type": ...}`."""
    assert SessionCancelRunResult(cleared_inputs=[]).dump() == {"cleared_inputs": []}
    activity = SessionActivity(state=ActivityIdle(), queued=0, context_usage=TokenUsage())
    assert activity.dump()["state"] == {"type": "idle"} and "config" not in activity.dump()
    part = ToolPart(id=0, name="read", arguments="{}", state=ToolStatePending())
    assert part.dump() == {"type": "tool", "id": 0, "name": "read", "arguments": "{}", "state": {"type": "pending"}}


def test_an_explicit_null_optional_reads_as_absent_and_unknown_fields_are_ignored() -> None:
    """yuke §1: decoding is lenient; an explicit null optional is treated as absent (our default)."""
    params = SessionListParams.model_validate({"limit": None, "extra": 1})
    assert params.limit is None and params.population.type == "top_level" and params.view == "active_recent"


@pytest.mark.parametrize("bad", [{"session_id": "A" * 32}, {"session_id": "a" * 31}, {"session_id": 5}, {}])
def test_session_ids_are_32_lowercase_hex(bad: dict[str, object]) -> None:
    """yuke §2: SessionId is exactly 32 lowercase hex digits."""
    with pytest.raises(ValidationError):
        SessionGetParams.model_validate(bad)


@pytest.mark.parametrize("bad", [{"limit": "5"}, {"limit": True}, {"limit": 2.0}, {"limit": -1}, {"limit": 2**53}])
def test_integers_are_strict_and_within_the_wire_range(bad: dict[str, object]) -> None:
    """yuke §2: integers are JSON numbers ≤ 2^53-1; no coercion from strings, bools or floats."""
    with pytest.raises(ValidationError):
        SessionListParams.model_validate(bad)


def test_an_unknown_union_tag_is_a_decode_error() -> None:
    """yuke §3: unknown `type` tag → decode error."""
    with pytest.raises(ValidationError):
        TypeAdapter(Input).validate_python({"type": "nope"})
