"""`OpenOptions`: how a session is opened, in one type shared by `Runtime.open`/`generate`, the sidecar's `open`
and `generate` commands, the CLI, and (as the base of `driver.ConnectRequest`) every adapter.

Add an open option here and it reaches all of them; nothing else lists the options. An option the sidecar wire's
`open` does not carry (a runtime-only one, such as `history`) is marked so in its field's metadata (`RUNTIME_ONLY`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omniagent.protocols.sidecar.agents import ConfigValue
from omniagent.protocols.sidecar.commands import McpServer, PermissionMode
from omniagent.protocols.sidecar.commands import OpenOptions as WireOpenOptions

# The field metadata key of an open option the sidecar wire does not carry: the runtime's callers set it in Python.
RUNTIME_ONLY = "runtime_only"


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenOptions:
    """How to open a session: a new one, a resumed one (`resume` token) or a fork (`fork` token,
    optionally at message `fork_at`); who answers permissions; which MCP servers the agent gets; which session
    config options to set at open; whether a resumed or forked session first tells its earlier conversation
    (`history`: as events outside any turn, where its adapter can read it; runtime-only, not on the sidecar wire)."""

    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None
    permission_mode: PermissionMode = PermissionMode.ASK
    mcp_servers: Sequence[McpServer] = ()
    configure: Mapping[str, ConfigValue] = field(default_factory=dict)
    history: bool = field(default=False, metadata={RUNTIME_ONLY: True})

    @classmethod
    def from_wire(cls, command: WireOpenOptions) -> OpenOptions:
        """The options of a sidecar `open` or `generate` command (absent permission mode = ask; the runtime-only
        options at their defaults)."""
        given = {name: getattr(command, name) for name in wire_option_names()}
        given["permission_mode"] = command.permission_mode or PermissionMode.ASK
        return cls(**given)

    def changed(self, **changes: Any) -> OpenOptions:
        """A copy with some options replaced (an unknown name raises TypeError); None keeps the default."""
        given = {name: value for name, value in changes.items() if value is not None}
        return dataclasses.replace(self, **given)


def option_names() -> tuple[str, ...]:
    """The names of the open options, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(OpenOptions))


def wire_option_names() -> tuple[str, ...]:
    """The names of the open options the sidecar wire's `open` and `generate` carry, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(OpenOptions) if not f.metadata.get(RUNTIME_ONLY))


def option_values(options: OpenOptions) -> dict[str, Any]:
    """The open options of `options` (an `OpenOptions` or a subclass) by name, shallow."""
    return {name: getattr(options, name) for name in option_names()}
