"""The mock adapter: plays a JSON script (docs/sidecar.md "Mock scripts for UI testing") so apps and tests can
exercise every turn rule.

A script is an object whose fields are all optional and whose unknown fields are rejected. `turns` is a list of
step lists; each `StartTurn` plays the next one (an exhausted script leaves the turn hanging, until a cancel
ends it `Cancelled`, as it ends any turn the script has not ended). Steps:
`{"Emit": EventKind}`, `"AwaitAnswer"`, `{"End": StopReason}` (later steps then play at once, as an
agent-originated continuation), `"Die"`, `{"Sleep": ms}`, `{"Repeat": {"times": N, "steps": [...]}}`, and our
addition `"LoseAuth"` (the agent reports its login gone, with an `ANTHROPIC_API_KEY` login method).
Bundled scripts live in `omniagent/runtime/mock_scripts/` (turn, chatter, die, flood, configure).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta, ValidationError
from msgspec.structs import replace

from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.agents import (
    AgentDetails,
    AgentInstallation,
    ApiKey,
    Authenticated,
    Capabilities,
    Capability,
    ConfigOption,
    ConfigValue,
    EnvVarLogin,
    InstallationSource,
    SessionConfiguration,
    ordered_features,
)
from omniagent.protocols.sidecar.base import Newtype, SidecarModel, Variant, convert, describe, tagged
from omniagent.protocols.sidecar.events import Cancelled, Completed, ContextCompacted, EventKind, StopReason
from omniagent.runtime import driver as d
from omniagent.runtime.errors import InvalidConfiguration
from omniagent.runtime.requests import check_option

MOCK_AGENT_ID = "mock"
# How the mock's death reads on the wire.
DIED_STATUS = "9"
DIED_STDERR = "mock died"


class AwaitAnswerStep(Variant):
    TAG = "AwaitAnswer"


class DieStep(Variant):
    TAG = "Die"


class LoseAuthStep(Variant):
    TAG = "LoseAuth"


class EmitStep(Newtype):
    TAG = "Emit"
    kind: EventKind


class EndStep(Newtype):
    TAG = "End"
    stop: StopReason


class SleepStep(Newtype):
    TAG = "Sleep"
    ms: Annotated[int, Meta(ge=0)]


class RepeatSpec(SidecarModel, forbid_unknown_fields=True):
    times: Annotated[int, Meta(ge=0)]
    steps: list[Step]


class RepeatStep(Newtype):
    TAG = "Repeat"
    spec: RepeatSpec


_STEPS = AwaitAnswerStep | DieStep | LoseAuthStep | EmitStep | EndStep | SleepStep | RepeatStep
if TYPE_CHECKING:
    Step = _STEPS
else:
    Step = tagged("Step", _STEPS)


class MockScript(SidecarModel, forbid_unknown_fields=True):
    """A mock agent's behaviour, as data."""

    turns: list[list[Step]] = []
    steer: bool = False
    steer_rejects: bool = False
    steer_ack: bool = True
    ignore_close: bool = False
    ignore_cancel: bool = False  # our addition: an agent that never ends a cancelled turn
    deterministic: bool = True
    deterministic_agent: bool = True
    buffer: Annotated[int, Meta(ge=1)] = d.ADAPTER_EVENT_BUFFER
    stale_before_ack: EventKind | None = None
    compact: bool = False
    permissions: bool = True
    options: list[ConfigOption] = []


class MockScriptError(OmniagentError, ValueError):
    """A script file could not be read or does not follow the format."""


def load_script(source: str) -> MockScript:
    """A script from a file path, or a bundled script by name (`turn`, `chatter`, `die`, `flood`, `configure`)."""
    path = Path(source)
    try:
        if path.exists():
            text = path.read_text()
        elif source.isidentifier():
            text = resources.files("omniagent.runtime.mock_scripts").joinpath(f"{source}.json").read_text()
        else:
            raise FileNotFoundError(source)
    except OSError as exc:
        raise MockScriptError(f"no mock script at {source}") from exc
    try:
        # The stdlib reads lone surrogate escapes (a script may emit text with no UTF-8 form); msgspec refuses them.
        value = json.loads(text)
    except ValueError as exc:
        raise MockScriptError(f"invalid mock script {source}: {exc}") from exc
    try:
        return convert(value, MockScript)
    except ValidationError as exc:
        raise MockScriptError(f"invalid mock script {source}: {describe(exc)}") from exc


def mock_installation() -> AgentInstallation:
    """The one agent `serve --mock` offers (source Pinned, executable path `mock`)."""
    return AgentInstallation(id=MOCK_AGENT_ID, name="Mock", executable_path="mock", source=InstallationSource.PINNED)


class MockAdapter:
    """Plays `script` for every session it opens (each session from the start)."""

    def __init__(self, script: MockScript) -> None:
        self.script = script

    @property
    def buffer(self) -> int:
        return self.script.buffer

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        driver = _MockDriver(self.script, events)
        driver.apply_creation_options(request.configure)
        async with asyncio.TaskGroup() as group:
            driver.group = group
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


class _MockDriver:
    def __init__(self, script: MockScript, events: d.EventSink) -> None:
        self._script = script
        self.group: asyncio.TaskGroup | None = None
        self._events = events
        self._commands: asyncio.Queue[d.DriverCommand | None] = asyncio.Queue()
        self._turns = list(script.turns)
        self._answered = asyncio.Event()
        self._player: asyncio.Task[None] | None = None
        # A prompted turn the script has not ended yet: cancel ends it even when nothing is left to play.
        self._turn_open = False
        self._options = {opt.id: opt.current for opt in script.options if opt.current is not None}
        self._info = self._build_info()
        self._dead = False

    @property
    def info(self) -> d.DriverInfo:
        return self._info

    def apply_creation_options(self, options: Mapping[str, ConfigValue]) -> None:
        """Creation-time options, checked like the real agents check them. Raises: `InvalidConfiguration`."""
        for option, value in options.items():
            problem = check_option(self._info.details, option, value, live=False)
            if problem is not None:
                raise InvalidConfiguration(problem)
            self._options[option] = value
        self._info = self._build_info()

    def send(self, command: d.DriverCommand) -> None:
        self._commands.put_nowait(command)

    def stop(self) -> None:
        self._commands.put_nowait(None)

    async def run(self) -> None:
        try:
            while (command := await self._commands.get()) is not None:
                if await self._handle(command):
                    break
        finally:
            self._cancel_player()
            self._events.close()

    async def _handle(self, command: d.DriverCommand) -> bool:
        """Apply one command; True when the agent is gone."""
        if self._dead:
            return isinstance(command, d.Close)
        if isinstance(command, d.StartTurn):
            if self._script.stale_before_ack is not None:
                await self._events.send(d.AdapterEvent(self._script.stale_before_ack))
            await self._events.send(d.TurnAck())
            self._turn_open = True
            self._cancel_player()
            if self._turns:
                assert self.group is not None
                self._player = self.group.create_task(self._play(self._turns.pop(0)))
        elif isinstance(command, d.Steer):
            if self._script.steer_ack:
                await self._events.send(d.SteerResult(accepted=not self._script.steer_rejects))
        elif isinstance(command, d.AnswerRequest):
            self._answered.set()
        elif isinstance(command, d.Cancel):
            if self._script.ignore_cancel:
                return False
            playing = self._player is not None and not self._player.done()  # maybe an agent-originated turn
            if playing or self._turn_open:
                self._cancel_player()
                self._turn_open = False
                await self._events.send(d.TurnStopped(Cancelled()))
        elif isinstance(command, d.Compact):
            await self._events.send(d.AdapterEvent(ContextCompacted()))
            await self._events.send(d.TurnStopped(Completed()))
        elif isinstance(command, d.Configure):
            self._options[command.option] = command.value
            self._info = self._build_info()
            await self._events.send(d.InfoChanged(self._info))
        elif isinstance(command, d.Close):
            return not self._script.ignore_close
        return False

    async def _play(self, steps: list[Step]) -> None:
        for step in steps:
            if isinstance(step, AwaitAnswerStep):
                self._answered.clear()
                await self._answered.wait()
            elif isinstance(step, DieStep):
                self._dead = True
                await self._events.send(d.Exited(DIED_STATUS, DIED_STDERR))
                self._events.close()
                return
            elif isinstance(step, LoseAuthStep):
                await self._events.send(d.AuthLost([EnvVarLogin(name="ANTHROPIC_API_KEY")]))
            elif isinstance(step, EmitStep):
                await self._events.send(d.AdapterEvent(step.kind))
            elif isinstance(step, EndStep):
                self._turn_open = False
                await self._events.send(d.TurnStopped(step.stop))
            elif isinstance(step, SleepStep):
                await asyncio.sleep(step.ms / 1000)
            elif isinstance(step, RepeatStep):
                for _ in range(step.spec.times):
                    await self._play(step.spec.steps)

    def _cancel_player(self) -> None:
        if self._player is not None and not self._player.done():
            self._player.cancel()
        self._player = None

    def _build_info(self) -> d.DriverInfo:
        features = {Capability.QUESTIONS}
        if self._script.permissions:
            features.add(Capability.PERMISSIONS)
        if self._script.steer:
            features.add(Capability.STEER)
        if self._script.compact:
            features.add(Capability.COMPACT)
        options = [replace(opt, current=self._options.get(opt.id)) for opt in self._script.options]
        details = AgentDetails(
            version="mock",
            auth=Authenticated(kind=ApiKey()),
            capabilities=Capabilities(features=ordered_features(features)),
            config_options=options,
        )
        return d.DriverInfo(
            details=details,
            configuration=SessionConfiguration(options=dict(self._options)),
            deterministic_turn_end=self._script.deterministic,
            deterministic_agent_turn_end=self._script.deterministic_agent,
        )
