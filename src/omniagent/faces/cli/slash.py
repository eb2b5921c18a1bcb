"""The slash commands of `omniagent chat`: ours, the session's options, and the agent's own commands.

    /help  /quit  /cancel  /compact  /fork  /usage
    /model [VALUE]  /mode [VALUE]  /<option> [VALUE]   show or set one of the session's options
    /<agent command> [ARGS]                            sent to the agent as typed (its own slash commands)

Each command reports through the chat's renderer; a refusal from the agent is a note, never an exit. The commands
see the chat through `ChatControls` (which `chat.Chat` is), so this module does not import the chat.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from omniagent.faces.cli.render import Renderer
from omniagent.faces.cli.usage import resets_in, why_not
from omniagent.protocols.sidecar.agents import (
    AgentInstallation,
    BooleanKind,
    ConfigOption,
    ConfigValue,
    PlanUsage,
)
from omniagent.protocols.sidecar.commands import PermissionMode
from omniagent.protocols.sidecar.events import ContextUsage, Event
from omniagent.runtime.errors import AgentError
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.session import SessionControls

OURS: dict[str, str] = {
    "help": "this list",
    "model": "show the model, or switch: /model NAME",
    "mode": "show the mode, or switch: /mode NAME",
    "cancel": "cancel the running turn",
    "compact": "ask the agent to compact its context",
    "fork": "continue in a copy of this session (the original stays as it is)",
    "usage": "context used in this session, and the plan's quota where the agent reports it",
    "quit": "leave (also /exit, Ctrl-D)",
}
_TRUE = {"on", "true", "yes", "1"}
_FALSE = {"off", "false", "no", "0"}


class ChatEvents(Protocol):
    """A session's events as the chat reads them (the runtime's `EventStream`, or a hub session's)."""

    def __aiter__(self) -> AsyncIterator[Event]: ...
    @property
    def error(self) -> AgentError | None: ...


class ChatSession(SessionControls, Protocol):
    """A session as the chat drives it: the runtime's `Session`, or a hub's (`remote.RemoteSession`)."""

    @property
    def events(self) -> ChatEvents: ...


class ChatBackend(Protocol):
    """Where the chat opens sessions (/fork) and asks for plan usage: the `Runtime`, or a hub (`remote.HubLink`)."""

    async def open(self, agent: str, directory: str, options: OpenOptions) -> ChatSession: ...
    async def plan_usage(self, agent: str) -> PlanUsage: ...


class ChatControls(Protocol):
    """The chat the slash commands run in, as far as they use it (`chat.Chat` is one); see `Chat` for each."""

    @property
    def runtime(self) -> ChatBackend: ...
    @property
    def agent(self) -> AgentInstallation: ...
    @property
    def directory(self) -> str: ...
    @property
    def session(self) -> ChatSession: ...
    @property
    def renderer(self) -> Renderer: ...
    @property
    def mode(self) -> PermissionMode: ...
    @property
    def context(self) -> ContextUsage | None: ...
    def leave(self) -> None: ...
    async def send(self, text: str) -> None: ...
    def switch_to(self, session: ChatSession) -> None: ...
    async def retire(self, session: ChatSession) -> None: ...


class SlashCommands:
    """Runs the slash commands typed in one chat."""

    def __init__(self, chat: ChatControls) -> None:
        self._chat = chat

    async def run(self, line: str) -> None:
        name, _, argument = line[1:].partition(" ")
        name, argument = name.strip(), argument.strip()
        chat = self._chat
        try:
            if name in ("quit", "exit"):
                chat.leave()
            elif name == "help":
                self._help()
            elif name == "cancel":
                await chat.session.cancel()
            elif name == "compact":
                await chat.session.compact()
            elif name == "fork":
                await self._fork()
            elif name == "usage":
                await self._usage()
            elif (option := self._option(name)) is not None:
                await self._configure(option, argument)
            elif name in ("model", "mode"):
                chat.renderer.note(f"{chat.agent.name} has no {name} option in this session", style="yellow")
            elif any(command.name == name for command in chat.session.info().details.commands):
                await chat.send(line)
            else:
                chat.renderer.note(f"unknown command /{name}; /help lists them", style="yellow")
        except AgentError as error:
            chat.renderer.note(f"/{name}: {error}", style="red")

    def _option(self, name: str) -> ConfigOption | None:
        options = self._chat.session.info().details.config_options
        return next((option for option in options if option.id == name), None)

    def _help(self) -> None:
        details = self._chat.session.info().details
        lines = [f"/{name:<9} {text}" for name, text in OURS.items()]
        lines += [f"/{o.id:<9} {o.name}" for o in details.config_options if o.id not in OURS]
        lines += [f"/{c.name:<9} {c.description} (the agent's)" for c in details.commands if c.name not in OURS]
        lines.append("Alt-Enter or a trailing \\ starts a new line; a line sent during a turn is queued or steers it")
        self._chat.renderer.note("commands:\n  " + "\n  ".join(lines))

    async def _configure(self, option: ConfigOption, argument: str) -> None:
        chat = self._chat
        if not argument:
            current = chat.session.info().configuration.options.get(option.id, option.current)
            choices = "" if isinstance(option.kind, BooleanKind) else ", ".join(c.value for c in option.kind.choices)
            chat.renderer.note(f"{option.id}: {_shown(current)}" + (f" (choices: {choices})" if choices else ""))
            return
        value: ConfigValue = argument
        if isinstance(option.kind, BooleanKind):
            if argument.lower() not in _TRUE | _FALSE:
                chat.renderer.note(f"/{option.id} takes on or off", style="yellow")
                return
            value = argument.lower() in _TRUE
        await chat.session.configure(option.id, value)
        chat.renderer.note(f"{option.id} → {_shown(value)}", style="dim")

    async def _fork(self) -> None:
        chat = self._chat
        token = chat.session.info().resume_token
        if token is None:
            chat.renderer.note("this session cannot be forked yet (the agent has not given it an id)", style="yellow")
            return
        fork = await chat.runtime.open(
            chat.agent.id, chat.directory, OpenOptions(fork=token, permission_mode=chat.mode)
        )
        source = chat.session
        chat.switch_to(fork)
        await chat.retire(source)
        chat.renderer.note("forked: you are in the copy now; the original is kept", style="dim")

    async def _usage(self) -> None:
        chat = self._chat
        context = chat.context
        if context is None:
            chat.renderer.note("context: no usage reported yet")
        else:
            window = f" of {context.window_tokens:,}" if context.window_tokens else ""
            cost = f", ${context.cost_usd:.4f}" if context.cost_usd is not None else ""
            chat.renderer.note(f"context: {context.used_tokens:,}{window} tokens{cost}")
        try:
            plan = await chat.runtime.plan_usage(chat.agent.id)
        except AgentError as error:
            chat.renderer.note(f"plan: {why_not(error)}", style="dim")
            return
        chat.renderer.note(describe_plan(plan))


def describe_plan(plan: PlanUsage) -> str:
    """Each quota window on one line: label, a bar, percent used, when it resets."""
    lines = [f"plan: {plan.plan or 'unknown'}"]
    for window in plan.windows:
        filled = round(window.used_percent / 5)
        bar = "█" * filled + "░" * (20 - filled)
        line = f"  {window.label:<8} {bar} {window.used_percent:>3}%"
        if window.resets_at is not None:
            line += f"  {resets_in(window)}"
        lines.append(line)
    return "\n".join(lines)


def _shown(value: ConfigValue | None) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return value if value is not None else "(default)"
