"""Tool permissions: per-session ask/auto mode, the open interactions, and their answers from any frontend.

A session runs in `ask` mode (the default) or `auto` mode. In ask mode the run loop asks before each call of a
guarded tool (exec, write, edit, fetch, and every tool of an MCP server: `mcp__<server>__<tool>`), and in both
modes before an `exec` that would run outside the sandbox (engine/sandboxes.py) or that names a secret answer's
variable (engine/interactions/secrets.py; such an ask is never remembered "always"): the interaction is broadcast as
`interaction.requested` (a yuke `confirm`) and the run waits, in `running_tool`, until a frontend answers. The
answer is allow once, allow always (remembered for the session: that tool runs without asking again), reject, or
canceled. The yuke wire answers with `interaction.respond` (a confirm `true` = allow once, `false` = reject; routed
by `registry.py`, which these asks share with the model's questions); an in-process frontend such as the ACP
agent reads the tool site with `pending()` and calls `answer()`, which can also say "always".

What this is not: the run rules. When to ask, and what a refusal does to the tool call, live in
`engine/run/tool_calls.py`.

The mode and the "always" set live in memory for the life of the engine process (yuke has no field for them): a
restarted engine starts every session in ask mode again, the safe direction. The mode is set with the engine
extension method `session.set_permission_mode` (docs/engine.md).
"""

from __future__ import annotations

import asyncio
import enum
import json
from dataclasses import dataclass, field
from typing import Literal

from omniagent.engine.errors import EngineError
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.mcp import names as mcp_names
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import SessionId
from omniagent.protocols.yuke.interactions import (
    InteractionCanceled,
    InteractionConfirm,
    InteractionConfirmed,
    InteractionResponse,
)

PermissionMode = Literal["ask", "auto"]
DEFAULT_MODE: PermissionMode = "ask"
# Tools that change the workspace, run programs or reach the network; read, search and plan never ask.
GUARDED_TOOLS = frozenset({"exec", "write", "edit", "fetch"})
# Characters of an MCP call's arguments shown when it is asked.
ASK_ARGS_CHARS = 200
# The engine extension method that sets a session's mode (not in yuke's MethodName).
SET_MODE_METHOD = "session.set_permission_mode"


class Decision(enum.Enum):
    """A frontend's answer to one interaction."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT = "reject"
    CANCELED = "canceled"  # the frontend dismissed it, or the run stopped while it was open

    @property
    def allowed(self) -> bool:
        return self in (Decision.ALLOW_ONCE, Decision.ALLOW_ALWAYS)


class SetPermissionModeParams(YukeModel):
    """Params of `session.set_permission_mode` (engine extension)."""

    session_id: SessionId
    mode: PermissionMode


class PermissionModeResult(YukeModel):
    """Result of `session.set_permission_mode`: the mode now in force."""

    session_id: SessionId
    mode: PermissionMode


@dataclass(slots=True)
class PendingInteraction:
    """One open interaction (a permission confirm): the tool site it guards, and the future its answer resolves
    (never cancelled)."""

    interaction_id: int
    session_id: str
    message_id: int
    part_id: int
    tool_name: str
    arguments: str  # the call's raw JSON arguments
    unsandboxed: bool = False  # an exec that would run outside the sandbox
    secrets: tuple[str, ...] = ()  # the secret variables an exec would get
    answer: asyncio.Future[Decision] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    def answered(self) -> bool:
        return self.answer.done()

    def respond(self, response: InteractionResponse) -> None:
        """A yuke answer: a confirm (`true` allows once, `false` rejects) or `canceled`."""
        if isinstance(response, InteractionConfirmed):
            self.answer.set_result(Decision.ALLOW_ONCE if response.value else Decision.REJECT)
        elif isinstance(response, InteractionCanceled):
            self.answer.set_result(Decision.CANCELED)
        else:
            raise EngineError.bad_request("the response does not match the request: a confirm was asked")


class Permissions:
    """Modes, remembered "always" answers and open permission asks of every session of one engine."""

    def __init__(self, interactions: Interactions) -> None:
        self._interactions = interactions
        self._modes: dict[str, PermissionMode] = {}
        self._always: dict[str, set[str]] = {}

    def mode(self, session_id: str) -> PermissionMode:
        """The session's mode (ask unless set)."""
        return self._modes.get(session_id, DEFAULT_MODE)

    def set_mode(self, session_id: str, mode: PermissionMode) -> None:
        """Switch the mode; it applies from the next guarded tool call on."""
        self._modes[session_id] = mode

    def needs_confirm(self, session_id: str, tool_name: str, *, unsandboxed: bool = False) -> bool:
        """Whether a call of `tool_name` in this session needs an answer before it runs.

        `unsandboxed`: the call would run outside the exec sandbox, which asks in auto mode too; only an "always"
        given to such an ask holds for it (one given while sandboxed does not).
        """
        if not is_guarded(tool_name) or (self.mode(session_id) == "auto" and not unsandboxed):
            return False
        return _always_key(tool_name, unsandboxed) not in self._always.get(session_id, set())

    def pending(self, interaction_id: int) -> PendingInteraction | None:
        """The open permission ask with this id, if any."""
        found = self._interactions.get(interaction_id)
        return found if isinstance(found, PendingInteraction) else None

    def forget(self, session_id: str) -> None:
        """Drop a removed session's mode and remembered answers."""
        self._modes.pop(session_id, None)
        self._always.pop(session_id, None)

    async def open_interaction(
        self,
        session_id: str,
        message_id: int,
        part_id: int,
        tool_name: str,
        arguments: str,
        *,
        unsandboxed: bool = False,
        secrets: tuple[str, ...] = (),
    ) -> Decision:
        """Broadcast the interaction and wait for its answer. Cancelling the caller answers it `CANCELED`. An
        "always" given to a call that gets `secrets` holds for that call only: each such command is approved alone."""
        interaction = PendingInteraction(
            self._interactions.new_id(), session_id, message_id, part_id, tool_name, arguments, unsandboxed, secrets
        )
        title, message = describe(tool_name, arguments, unsandboxed=unsandboxed, secrets=secrets)
        request = InteractionConfirm(title=title, message=message)
        decision = await self._interactions.wait(interaction, request, interaction.answer, Decision.CANCELED)
        if decision is Decision.ALLOW_ALWAYS and not secrets:
            self._always.setdefault(session_id, set()).add(_always_key(tool_name, unsandboxed))
        return decision

    def answer(self, interaction_id: int, decision: Decision) -> None:
        """Answer an open interaction.

        Raises:
            EngineError: unknown_interaction (never asked, already answered, or not a permission ask).
        """
        interaction = self._interactions.check_open(interaction_id)
        if not isinstance(interaction, PendingInteraction):
            raise EngineError.unknown_interaction()
        interaction.answer.set_result(decision)

    async def set_mode_method(self, params: SetPermissionModeParams) -> PermissionModeResult:
        """session.set_permission_mode (the session's existence is checked by the engine)."""
        self.set_mode(params.session_id, params.mode)
        return PermissionModeResult(session_id=params.session_id, mode=params.mode)


def is_guarded(tool_name: str) -> bool:
    """Whether calls of the tool ask in ask mode: the built-in tools that change things, and any MCP server's tool
    (it runs outside the sandbox, and nothing says what it does)."""
    return tool_name in GUARDED_TOOLS or mcp_names.split(tool_name) is not None


def _always_key(tool_name: str, unsandboxed: bool) -> str:
    return f"{tool_name} unsandboxed" if unsandboxed else tool_name


def describe(
    tool_name: str, arguments: str, *, unsandboxed: bool = False, secrets: tuple[str, ...] = ()
) -> tuple[str, str]:
    """A short title and one-line message for asking about a call (no secret values: only the model's own
    arguments and the names of the variables it would get)."""
    try:
        args = json.loads(arguments)
    except ValueError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    command, path, url = args.get("command"), args.get("path"), args.get("url")
    if tool_name == "exec" and isinstance(command, str):
        if secrets:
            names = ", ".join(secrets)
            where = "outside the sandbox" if unsandboxed else "in the sandbox"
            return (
                "Give a secret to a command?",
                f"Run `{command}` {where} with your secret answer in {names}. The command can do anything with it, "
                "print it in any encoding too: approve it only if you trust this command line.",
            )
        if unsandboxed:
            return "Run a command without the sandbox?", f"Run `{command}` in the workspace, outside the sandbox."
        return "Run a command?", f"Run `{command}` in the workspace."
    if tool_name in ("write", "edit") and isinstance(path, str):
        verb = "Write" if tool_name == "write" else "Edit"
        return f"{verb} a file?", f"{verb} {path} in the workspace."
    if tool_name == "fetch" and isinstance(url, str):
        return "Fetch a web page?", f"Fetch {url}."
    mcp = mcp_names.split(tool_name)
    if mcp is not None:
        server, tool = mcp
        shown = json.dumps(args, ensure_ascii=False, separators=(", ", ": ")) if args else "no arguments"
        if len(shown) > ASK_ARGS_CHARS:
            shown = shown[:ASK_ARGS_CHARS] + "…"
        return f"Call {tool} of the MCP server {server}?", f"Call `{tool}` of the MCP server `{server}` with {shown}."
    return f"Allow {tool_name}?", f"The model wants to call {tool_name}."
