"""One open-options type: the sidecar's wire options, `Runtime.open` and every adapter's `ConnectRequest` agree."""

import dataclasses
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.base import convert
from omniagent.protocols.sidecar.commands import Open, PermissionMode
from omniagent.protocols.sidecar.commands import OpenOptions as WireOpenOptions
from omniagent.runtime.driver import ConnectRequest
from omniagent.runtime.options import OpenOptions, option_names, wire_option_names
from omniagent.runtime.runtime import Runtime


def test_the_wire_and_the_runtime_name_the_same_open_options() -> None:
    """A new wire option that the runtime does not take (or the reverse) fails here, not in a user's session."""
    wire = set(WireOpenOptions.__struct_fields__) - {"id", "agent", "dir"}
    assert wire == set(wire_option_names())
    # The runtime-only options are named, so one left off the wire by mistake still fails here.
    assert set(option_names()) - wire == {"history"}


def test_every_adapter_request_carries_the_open_options() -> None:
    request_fields = {field.name for field in dataclasses.fields(ConnectRequest)}
    assert set(option_names()) <= request_fields


def test_a_sidecar_open_without_a_permission_mode_asks() -> None:
    command = convert({"id": 1, "cmd": "open", "agent": "mock", "dir": ".", "fork": "t", "fork_at": "m2"}, Open)
    options = OpenOptions.from_wire(command)
    assert (options.fork, options.fork_at, options.permission_mode) == ("t", "m2", PermissionMode.ASK)
    assert options.history is False  # runtime-only: never on the wire, so at its default


async def test_an_unknown_open_option_is_refused_before_anything_starts(tmp_path: Path) -> None:
    async with Runtime() as runtime:
        with pytest.raises(TypeError):
            await runtime.open("mock", tmp_path, colour="blue")
