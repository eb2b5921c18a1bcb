"""`RunContext`: what drafting (`draft.py`), tool calls (`tool_calls.py`) and compaction (`compaction/step.py`)
need of the run they belong to, as a small protocol. The run loop (`executor.RunExecutor`) provides it; a unit test can
provide its own. None of these parts sees the `Engine`.

`RunDeps` is what one run loop is built with: the engine parts a run uses, and nothing else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from omniagent.engine.interactions.permissions import Permissions
from omniagent.engine.interactions.questions import Questions
from omniagent.engine.interactions.secrets import Scrubber
from omniagent.engine.live import ActiveRun, LiveSessions
from omniagent.engine.mcp.servers import McpServers
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.providers import neutral as n
from omniagent.engine.run.instructions import ProjectInstructions
from omniagent.engine.run.limits import ChildLimits
from omniagent.engine.sandboxes import Sandboxes
from omniagent.engine.skills.catalog import Skills
from omniagent.engine.store import Store
from omniagent.engine.tools import AgentControl, ToolContext, ToolLimits, ToolRegistry
from omniagent.protocols.yuke.activity import ActivityState
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.sessions import Session

T = TypeVar("T")

# The agent tools' capability at one tool site (session, message, part): `children.tree.Children.control`.
AgentControls = Callable[[str, int, int], AgentControl]


class Sink(Protocol):
    """Where one model call's stream goes: an assistant `Draft`, or a compaction's summary."""

    @property
    def has_content(self) -> bool: ...

    def feed(self, event: n.StreamEvent) -> None: ...

    def reset_attempt(self) -> None: ...


class RunContext(Protocol):
    """One open run, as the parts working inside it see it."""

    @property
    def session_id(self) -> str: ...

    @property
    def run(self) -> ActiveRun: ...

    @property
    def store(self) -> Store: ...

    @property
    def tools(self) -> ToolRegistry:
        """The tools of this run: the built-in ones, the skill tool, and those of the session's running MCP
        servers."""

    @property
    def permissions(self) -> Permissions: ...

    @property
    def system_prompt(self) -> str:
        """The system prompt every request of this run carries (the session's, with the project instructions and
        its skills)."""

    def emit(self, name: str, data: YukeModel) -> None:
        """Broadcast one event of this run."""

    def set_activity(self, state: ActivityState) -> None:
        """Make `state` the session's activity and broadcast the change."""

    def step(self, work: Awaitable[T]) -> Awaitable[T]:
        """Run one interruptible step: cancelling the run cancels it and raises `Interrupted`."""

    def attempts(
        self, provider: n.Provider, request: n.ModelRequest, sink: Sink, active: Callable[[], ActivityState]
    ) -> Awaitable[None]:
        """One model call under the retry policy (raises `RoundFailed` when it fails for good)."""

    def summary_changed(self, session: Session) -> None:
        """Broadcast the session's new summary."""

    def note_context(self, usage: TokenUsage) -> None:
        """The tokens the session's context holds now (its gauge)."""

    def exec_needs_confirm(self) -> bool:
        """Whether an exec call must be asked for because it would run unsandboxed."""

    def secrets_named(self, command: str) -> tuple[str, ...]:
        """The session's secret answers' variables that an exec `command` names (engine/interactions/secrets.py)."""

    def tool_context(
        self, root: str, on_output: Callable[[str], None], message_id: int, part_id: int, secrets: tuple[str, ...] = ()
    ) -> ToolContext:
        """The context the tool call (`message_id`, `part_id`) runs in: its checkpoints, questions and children
        belong to that call; `secrets`: the secret variables the user gave this call (raises OSError when the
        workspace is not available)."""

    def scrubber(self) -> Scrubber:
        """What masks the session's secret answers in tool output (engine/interactions/secrets.py)."""


@dataclass(frozen=True, slots=True)
class RunDeps:
    """The engine parts a run loop uses: built once by the engine, shared by every run."""

    store: Store
    sessions: LiveSessions
    model_access: ModelAccess
    tools: ToolRegistry
    permissions: Permissions
    questions: Questions
    sandboxes: Sandboxes
    retry_scale: float
    tool_limits: ToolLimits
    skills: Skills = field(default_factory=Skills.none)
    child_limits: ChildLimits = field(default_factory=ChildLimits)
    instructions: ProjectInstructions = field(default_factory=ProjectInstructions)
    mcp: McpServers | None = None  # None: no MCP servers (unit tests of the core)
