"""What a tool call receives (`ToolContext`, `ToolLimits`) and returns (`ToolResult`), and the error guard."""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from omniagent.engine.tools.views import View
from omniagent.errors import OmniagentError
from omniagent.sandbox import SandboxPolicy

__all__ = [
    "ABSENT",
    "AgentControl",
    "AgentSlot",
    "Answer",
    "Answered",
    "Asker",
    "BeforeChange",
    "CannotAsk",
    "Dismissed",
    "FileImage",
    "OutputSink",
    "PlanEntry",
    "Question",
    "SecretKept",
    "ToolContext",
    "ToolError",
    "ToolLimits",
    "ToolResult",
    "guarded",
]

# Default seconds a command may run before its process group is killed; the model may ask for more, up to the max.
EXEC_TIMEOUT = 120.0
# Upper bound (seconds) on the timeout a model may ask for, so one call cannot hold a run for hours.
EXEC_MAX_TIMEOUT = 600.0
# Seconds between SIGTERM and SIGKILL when a timed-out command's group is stopped.
KILL_GRACE = 2.0
# Seconds to wait for the output pipe to close after the shell exits (background children may still hold it).
DRAIN_GRACE = 0.5
# Bytes of command output kept for the model: the head and the tail halves, the middle replaced by a notice.
EXEC_OUTPUT_CAP = 64 * 1024
# Bytes of live output streamed through `on_output` per call: yuke's "max tool output stream bytes".
STREAM_OUTPUT_CAP = 1024 * 1024
# Lines `read` returns when the model gives no `limit`.
READ_DEFAULT_LINES = 2000
# Bytes of file text one `read` returns at most; the rest is reachable with `offset`.
READ_MAX_BYTES = 256 * 1024
# Characters kept of one line in `read` and `search` output; minified files would otherwise flood the context.
MAX_LINE_CHARS = 2000
# Paths or matching lines `search` returns at most.
SEARCH_MAX_RESULTS = 200
# Files larger than this (bytes) are not searched for content.
SEARCH_MAX_FILE_BYTES = 2 * 1024 * 1024
# Seconds one `search` may take before its worker process is killed (a backtracking regex never ends otherwise).
SEARCH_TIMEOUT = 20.0
# Seconds one `fetch` may take in all (name resolution, redirects and the whole body included).
FETCH_TIMEOUT = 30.0
# Bytes of a fetched body read at most (after content decoding); the rest is not downloaded.
FETCH_MAX_BYTES = 2 * 1024 * 1024
# Characters of a fetched page's text returned to the model; the rest is cut with a notice.
FETCH_TEXT_CAP = 64 * 1024

OutputSink = Callable[[str], None]
AgentSlot = Literal["small", "medium"]  # the agents.json model slots


def _discard(_text: str) -> None:
    return None


# Checkpoints -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileImage:
    """A file as it was: its bytes and permission bits, or `content` None when there was no file."""

    content: bytes | None
    mode: int | None = None


ABSENT = FileImage(None)

# What a tool awaits before it changes a file: (the workspace-relative path, the file's image before the change).
# The run stores the image durably before the tool writes (files/checkpoint.py, engine/session/rewind.py).
BeforeChange = Callable[[str, FileImage], Awaitable[None]]


async def _no_checkpoint(_rel: str, _image: FileImage) -> None:
    return None


# Questions to the user ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    """One question the model puts to the user (`ask_user`): a yes/no `confirm` (`detail` says what exactly), a
    `select` among `options`, or a free `input` (`secret`: a password or token the model must never see)."""

    kind: Literal["confirm", "select", "input"]
    title: str
    detail: str = ""
    options: tuple[str, ...] = ()
    placeholder: str | None = None
    secret: bool = False


@dataclass(frozen=True, slots=True)
class Answered:
    """The user's answer: a bool for a confirm, the chosen option for a select, the text for an input."""

    value: bool | str


@dataclass(frozen=True, slots=True)
class SecretKept:
    """A secret input was answered: the engine keeps the value in memory only, and commands read it from the
    environment variable `env` (the model never sees the value)."""

    env: str


@dataclass(frozen=True, slots=True)
class Dismissed:
    """The user dismissed the question, or the run stopped while it was open."""


@dataclass(frozen=True, slots=True)
class CannotAsk:
    """No frontend can put this question to the user; `reason` is the sentence the model reads."""

    reason: str


Answer = Answered | SecretKept | Dismissed | CannotAsk
Asker = Callable[[Question], Awaitable[Answer]]


async def _cannot_ask(_question: Question) -> Answer:
    return CannotAsk("there is no user to ask here")


@dataclass(frozen=True, slots=True)
class ToolLimits:
    """Every bound a tool enforces; defaults are the named constants of this module."""

    exec_timeout: float = EXEC_TIMEOUT
    exec_max_timeout: float = EXEC_MAX_TIMEOUT
    kill_grace: float = KILL_GRACE
    drain_grace: float = DRAIN_GRACE
    exec_output_cap: int = EXEC_OUTPUT_CAP
    stream_output_cap: int = STREAM_OUTPUT_CAP
    read_default_lines: int = READ_DEFAULT_LINES
    read_max_bytes: int = READ_MAX_BYTES
    max_line_chars: int = MAX_LINE_CHARS
    search_max_results: int = SEARCH_MAX_RESULTS
    search_max_file_bytes: int = SEARCH_MAX_FILE_BYTES
    search_timeout: float = SEARCH_TIMEOUT
    fetch_timeout: float = FETCH_TIMEOUT
    fetch_max_bytes: int = FETCH_MAX_BYTES
    fetch_text_cap: int = FETCH_TEXT_CAP


class AgentControl(Protocol):
    """What the agent tools may do, bound to one parent session and one tool call site. Each returns the result
    the model reads (an error result for a refusal) and never raises but for cancellation."""

    async def spawn(self, name: str, task: str, slot: AgentSlot | None) -> ToolResult:
        """Create the child `name` and give it `task` (on the agents.json `slot` model, else the parent's)."""
        ...

    async def send(self, name: str, message: str) -> ToolResult:
        """Send a follow-up instruction to the child `name` (it starts, or waits behind the child's run)."""
        ...

    async def stop(self, name: str) -> ToolResult:
        """Cancel the child's run and the instructions waiting for it."""
        ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    """The world one tool call sees.

    `root` is the canonical workspace directory (build with `for_workspace`); no file tool touches a path outside
    it. `on_output` receives live output deltas in order (exec only); it must not block. `limits` bounds
    everything. `sandbox` is how `exec` runs its command (sandboxed by default where the platform can).
    `before_change` is awaited with a file's image before a tool changes it (the session's checkpoint); `ask`
    puts a question to the user and waits for the answer (`ask_user`).
    `private_network`: `fetch` may connect to loopback and private addresses (off: public addresses only).
    `agents` is what the agent tools (`agents.py`) may do from this call's site, when the session may have
    children.
    """

    root: Path
    on_output: OutputSink = _discard
    limits: ToolLimits = field(default_factory=ToolLimits)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    before_change: BeforeChange = _no_checkpoint
    ask: Asker = _cannot_ask
    private_network: bool = False
    agents: AgentControl | None = None

    @property
    def workdir(self) -> Path | None:
        """Where the model and its commands see the workspace when not at `root` (the sandbox's workdir, e.g.
        `/app`: a workspace view); the file tools take a path under it as the same path under `root`."""
        return self.sandbox.workdir

    @classmethod
    def for_workspace(
        cls,
        root: str | Path,
        *,
        on_output: OutputSink = _discard,
        limits: ToolLimits | None = None,
        sandbox: SandboxPolicy | None = None,
        before_change: BeforeChange = _no_checkpoint,
        ask: Asker = _cannot_ask,
        private_network: bool = False,
        agents: AgentControl | None = None,
    ) -> ToolContext:
        """A context rooted at the canonical form of `root`.

        Raises:
            FileNotFoundError: `root` does not exist.
            NotADirectoryError: `root` is not a directory.
        """
        canonical = Path(root).resolve(strict=True)
        if not canonical.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "workspace root is not a directory", str(root))
        return cls(
            root=canonical,
            on_output=on_output,
            limits=limits or ToolLimits(),
            sandbox=sandbox or SandboxPolicy(),
            before_change=before_change,
            ask=ask,
            private_network=private_network,
            agents=agents,
        )


PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One step of a plan (`tools/plan.py`): what it is, how far it got, how much it matters."""

    content: str
    status: PlanStatus = "pending"
    priority: PlanPriority = "medium"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call.

    `output` is the text the model sees (also yuke's `completed.output` / `error.error`). `is_error` picks the
    `error` tool state. `views` are the rendering hints for the state's `view` list. `plan` is the session's new
    plan when the call replaced it (the `plan` tool), which the run loop broadcasts. `ends_turn` asks the run to
    end once this round's tool calls are done (a spawned child reports later, as a new input).
    """

    output: str
    is_error: bool = False
    views: tuple[View, ...] = ()
    plan: tuple[PlanEntry, ...] | None = None
    ends_turn: bool = False

    @classmethod
    def error(cls, message: str, views: tuple[View, ...] = ()) -> ToolResult:
        """A failed call whose `message` is one clear sentence for the model."""
        return cls(output=message, is_error=True, views=views)


class ToolError(OmniagentError):
    """A tool call cannot proceed; the message is the sentence the model sees. Never escapes `guarded`."""


async def guarded(root: Path, body: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
    """Run `body`, turning `ToolError` and `OSError` into an error result. Cancellation propagates untouched."""
    try:
        return await body()
    except ToolError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(os_error_sentence(exc, root))


def os_error_sentence(exc: OSError, root: Path) -> str:
    """One sentence for a failed file operation, naming the path relative to the workspace when it is inside."""
    reason = (exc.strerror or type(exc).__name__).lower()
    if exc.filename is None:
        return f"the operation failed: {reason}"
    path = Path(str(exc.filename))
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    return f"the operation on {shown} failed: {reason}"
