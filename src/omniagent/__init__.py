"""omniagent: one harness for coding agents.

Two things behind one API: a runtime that drives the agent CLIs already on the machine behind one normalized
event stream (`Runtime`, `Session`), and an engine, our own agent loop that calls LLM providers itself.

    async with omniagent.Runtime() as runtime:
        session = await runtime.open("qwen", ".")
        await session.prompt("say hello")
        async for event in session.events: ...

`OpenOptions` is how `Runtime.open` opens a session (resume, fork, permission mode, MCP servers, options to set).
The event types a session streams (`TextDelta`, `TurnEnded`, …) and what a program passes to a session (answers to
its requests such as `PermissionAnswer`, option values, the permission mode) are public in `omniagent.events`,
which this module does not import. Names are imported on first use, so `import omniagent` stays cheap for the
command line.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from omniagent._version import __version__

if TYPE_CHECKING:
    from omniagent.errors import OmniagentError
    from omniagent.runtime.errors import AgentError
    from omniagent.runtime.options import OpenOptions
    from omniagent.runtime.runtime import Runtime
    from omniagent.runtime.session import Session

_LAZY = {
    "AgentError": "omniagent.runtime.errors",
    "OmniagentError": "omniagent.errors",
    "OpenOptions": "omniagent.runtime.options",
    "Runtime": "omniagent.runtime.runtime",
    "Session": "omniagent.runtime.session",
}

__all__ = ["AgentError", "OmniagentError", "OpenOptions", "Runtime", "Session", "__version__"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'omniagent' has no attribute {name!r}")
    return getattr(import_module(module), name)
