"""The typed yuke models: tags, strictness and the omit-null rule of the yuke wire's envelope, scalars and unions."""

from __future__ import annotations

import importlib
import pkgutil

import msgspec
import pytest

from omniagent.protocols import yuke
from omniagent.protocols.yuke.activity import ActivityIdle, SessionActivity
from omniagent.protocols.yuke.base import DecodeError, YukeModel, decode
from omniagent.protocols.yuke.content import Input
from omniagent.protocols.yuke.messages import TokenUsage, ToolPart
from omniagent.protocols.yuke.methods import BROADCASTS, METHODS
from omniagent.protocols.yuke.sessions import (
    SessionCancelRunResult,
    SessionGetParams,
    SessionListParams,
    SessionRewindParams,
)
from omniagent.protocols.yuke.tools import ToolStatePending


def test_the_tables_name_every_method_and_broadcast_of_the_spec() -> None:
    """The yuke wire: 27 MethodName values and 22 BroadcastName values."""
    assert len(METHODS) == 27 and len(BROADCASTS) == 22


def test_absent_optionals_are_omitted_and_empty_arms_carry_only_their_tag() -> None:
    """Absent optionals are omitted, never null; empty arms serialize as `{"type": ...}`."""
    assert SessionCancelRunResult(cleared_inputs=[]).dump() == {"cleared_inputs": []}
    activity = SessionActivity(state=ActivityIdle(), queued=0, context_usage=TokenUsage())
    assert activity.dump()["state"] == {"type": "idle"} and "config" not in activity.dump()
    part = ToolPart(id=0, name="read", arguments="{}", state=ToolStatePending())
    assert part.dump() == {"type": "tool", "id": 0, "name": "read", "arguments": "{}", "state": {"type": "pending"}}


def test_an_explicit_null_optional_reads_as_absent_and_unknown_fields_are_ignored() -> None:
    """Decoding is lenient; an explicit null optional is treated as absent (our default)."""
    params = decode(SessionListParams, {"limit": None, "extra": 1})
    assert params.limit is None and params.population.type == "top_level" and params.view == "active_recent"


@pytest.mark.parametrize("bad", [{"session_id": "A" * 32}, {"session_id": "a" * 31}, {"session_id": 5}, {}])
def test_session_ids_are_32_lowercase_hex(bad: dict[str, object]) -> None:
    """SessionId is exactly 32 lowercase hex digits."""
    with pytest.raises(DecodeError):
        decode(SessionGetParams, bad)


@pytest.mark.parametrize("bad", [{"limit": "5"}, {"limit": True}, {"limit": 2.0}, {"limit": -1}, {"limit": 2**53}])
def test_integers_are_strict_and_within_the_wire_range(bad: dict[str, object]) -> None:
    """Integers are JSON numbers ≤ 2^53-1; no coercion from strings, bools or floats."""
    with pytest.raises(DecodeError):
        decode(SessionListParams, bad)


def test_an_unknown_union_tag_is_a_decode_error() -> None:
    """Unknown `type` tag → decode error."""
    with pytest.raises(DecodeError):
        decode(Input, {"type": "nope"})


def _models() -> list[type[YukeModel]]:
    """Every yuke model class: the wire's, and the engine's extension models (the engine imports them all)."""
    importlib.import_module("omniagent.engine.engine")
    for module in pkgutil.iter_modules(yuke.__path__):
        importlib.import_module(f"omniagent.protocols.yuke.{module.name}")
    found: set[type[YukeModel]] = set()
    todo = [YukeModel]
    while todo:
        for subclass in todo.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                todo.append(subclass)
    return sorted(found, key=lambda cls: cls.__qualname__)


# Params only read from the wire: their non-None defaults are never written by us.
_READ_ONLY = {SessionListParams, SessionRewindParams}


@pytest.mark.parametrize("model", _models(), ids=lambda cls: cls.__qualname__)
def test_omitting_defaults_omits_exactly_the_absent_optionals(model: type[YukeModel]) -> None:
    """The null policy by construction: a model that omits its defaults has only None defaults; one with other
    defaults (TokenUsage's zeros) writes every field."""
    if not model.__struct_config__.omit_defaults or model in _READ_ONLY:
        return
    for field in msgspec.structs.fields(model):
        default = field.default_factory() if field.default_factory is not msgspec.NODEFAULT else field.default
        assert default in (None, msgspec.NODEFAULT), f"{model.__qualname__}.{field.name} defaults to {default!r}"


@pytest.mark.parametrize("model", _models(), ids=lambda cls: cls.__qualname__)
def test_a_union_arm_reads_its_tag_as_type(model: type[YukeModel]) -> None:
    """Code reads `x.type` on a tagged arm; it must be the tag msgspec writes and checks."""
    tag = model.__struct_config__.tag
    if tag is not None:
        assert getattr(model, "type", None) == tag and model.__struct_config__.tag_field == "type"
