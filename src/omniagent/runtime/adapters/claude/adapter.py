"""The adapter for Claude Code itself (`claude -p` in stream-json mode), one process per session.

`connect` launches the CLI with the session's flags (`launch.py`), sends the `initialize` control request and
reads the account, models and commands it answers (`info.py`), then yields a driver that writes prompts as
`user` lines and control requests (interrupt, set_model, set_permission_mode), and turns every stdout frame into
driver events (`translate.py`). The CLI's `can_use_tool` requests become permission or question requests,
answered from the caller's answers (`control.py`). Turn rules are the session loop's.

Turn ends: the CLI writes exactly one `result` per user line, in order, so the driver counts the lines it wrote and
lets only the result of the newest one end the loop's turn (a result of a line written before is stale).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, LoginMethod
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.claude.control import ControlChannel, ControlFailed, answer_body
from omniagent.runtime.adapters.claude.info import ClaudeState
from omniagent.runtime.adapters.claude.launch import launch, new_session_id, user_line
from omniagent.runtime.adapters.claude.translate import FrameMapper, result_stop
from omniagent.runtime.adapters.driver_loop import DriverLoop, stderr_tail
from omniagent.runtime.errors import (
    AuthRequired,
    HandshakeTimeout,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    SpawnFailed,
)
from omniagent.runtime.requests import check_option
from omniagent.runtime.view import launch_prefix
from omniagent.wire.encode import dumps
from omniagent.wire.errors import LineTooLarge, PeerClosed
from omniagent.wire.jsonl import LineWriter, read_lines
from omniagent.wire.process import ChildProcess, SpawnError, open_process

# The live options and the control request that sets each.
_SETTERS: Mapping[str, tuple[str, str]] = {"mode": ("set_permission_mode", "mode"), "model": ("set_model", "model")}


class ClaudeAdapter:
    """Speaks Claude Code's stream-json to one installation, one process per session."""

    buffer = d.ADAPTER_EVENT_BUFFER

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        argv, session_id = launch(request)
        driver = _ClaudeDriver(request, events, ClaudeState(session_id, tools_disabled=request.disable_tools))
        async with AsyncExitStack() as stack:
            try:
                child = await stack.enter_async_context(
                    open_process(argv, cwd=str(request.directory), prefix=launch_prefix(request))
                )
            except SpawnError as exc:
                raise SpawnFailed(str(exc)) from exc
            writer = await stack.enter_async_context(LineWriter(child.stdin))
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.start(child, writer, group)
            try:
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    await driver.handshake()
            except TimeoutError:
                driver.stop()
                raise HandshakeTimeout() from None
            except BaseException:
                driver.stop()
                raise
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


class _ClaudeDriver(DriverLoop):
    def __init__(self, request: d.ConnectRequest, events: d.EventSink, state: ClaudeState) -> None:
        super().__init__(events)
        self._request = request
        self._state = state
        self._mapper = FrameMapper(state, self._logins)
        self._control = ControlChannel(self._write)
        self._child: ChildProcess | None = None
        self._writer: LineWriter | None = None
        self._asks: dict[str, tuple[str, Mapping[str, Any]]] = {}  # our request id → (wire id, can_use_tool body)
        self._unanswered = 0  # user lines written whose `result` has not come yet
        self._interrupted = False  # an interrupt went out for the newest line
        self._live = False
        self._early_error: str | None = None  # a `result` before the handshake finished (a bad resume token)
        self._configuring = asyncio.Lock()  # configure calls reach the agent, and are confirmed, in the order sent

    @property
    def info(self) -> d.DriverInfo:
        return self._state.info()

    def stop(self) -> None:
        # Also ends a driver whose handshake failed: its reader runs from `start`, before (and without) `run`.
        super().stop()
        self._end_helpers()

    def start(self, child: ChildProcess, writer: LineWriter, group: asyncio.TaskGroup) -> None:
        # The reader starts before the handshake (it carries the handshake's answers) and reports the exit itself,
        # so `run` has no helpers of its own.
        self._child, self._writer, self.group = child, writer, group
        self._spawn(self._read())

    # --- opening -------------------------------------------------------------------------------------------

    async def handshake(self) -> None:
        """`initialize`, then the version; checks the login and the creation-time option values.

        Raises: `AuthRequired`, `ResumeFailed`, `InvalidConfiguration`, `ProtocolFailed`.
        """
        try:
            # Both requests go out at once: the second waits behind the CLI's start-up, not behind our round trip.
            initialized, version = await asyncio.gather(
                self._control.request("initialize", hooks={}), self._control.request("get_binary_version")
            )
            self._state.apply_initialize(initialized)
        except ControlFailed as exc:
            detail = self._early_error or str(exc)
            resuming = self._request.resume is not None or self._request.fork is not None
            raise (ResumeFailed(detail) if resuming and self._early_error else ProtocolFailed(detail)) from exc
        if isinstance(version.get("version"), str):
            self._state.version = version["version"]
        if not self._state.logged_in:
            raise AuthRequired(self._logins())
        details = self._state.info().details
        for option, value in self._request.configure.items():
            problem = check_option(details, option, value, live=False)
            if problem is not None:
                raise InvalidConfiguration(problem)
            self._state.apply_creation(option, value)
        self._live = True

    def _logins(self) -> list[LoginMethod]:
        row = catalog.profile(self._request.installation.id)
        executable = self._request.installation.executable_path
        return catalog.login_methods(row, executable) if row is not None else []

    # --- commands ------------------------------------------------------------------------------------------

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            line, warnings = await user_line(command.input, new_session_id())
            for warning in warnings:
                await self._warn(warning)
            await self._events.send(d.TurnAck())  # before the line: every frame read after it is this turn's
            self._write_turn(line)
        elif isinstance(command, d.Compact):
            line, _ = await user_line(d.PromptInput("/compact"), new_session_id())
            self._write_turn(line)
        elif isinstance(command, d.AnswerRequest):
            ask = self._asks.pop(command.request_id, None)
            if ask is not None:
                self._control.respond(ask[0], answer_body(ask[1], command.answer))
        elif isinstance(command, d.Configure):
            self._spawn(self._configure(command.option, str(command.value)))
        elif isinstance(command, d.Cancel):
            self._cancel()
        elif isinstance(command, d.Steer):
            # The CLI runs a mid-turn user line as a turn of its own, so nothing joins a running turn.
            await self._events.send(d.SteerResult(accepted=False))
        elif isinstance(command, d.Rollback):
            await self._warn(f"rollback({command.turns}) is not supported by the Claude Code adapter")

    def _write_turn(self, line: dict[str, Any]) -> None:
        self._unanswered += 1
        self._interrupted = False
        self._write(line)

    def _cancel(self) -> None:
        for wire_id, body in self._asks.values():
            self._control.respond(wire_id, answer_body(body, None))
        self._asks.clear()
        if self._unanswered:
            self._interrupted = True
            self._spawn(self._interrupt())

    async def _interrupt(self) -> None:
        try:
            await self._control.request("interrupt")
        except ControlFailed as exc:
            await self._warn(f"the agent refused the interrupt: {exc}")

    async def _configure(self, option: str, value: str) -> None:
        subtype, field = _SETTERS.get(option, ("", ""))
        if not subtype:
            await self._warn(f"`{option}` is creation-only for Claude Code")
            return
        async with self._configuring:
            try:
                await self._control.request(subtype, **{field: value})
            except ControlFailed as exc:
                await self._warn(f"agent rejected configure `{option}`: {exc}")
                return
            self._state.apply_value(option, value)
            await self._events.send(d.InfoChanged(self._state.info()))

    # --- from the agent ------------------------------------------------------------------------------------

    async def _read(self) -> None:
        child = self._child
        assert child is not None
        async for line in read_lines(child.stdout):
            if isinstance(line, LineTooLarge):
                await self._warn(f"skipped an agent frame over {line.limit} bytes")
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                await self._warn("the agent wrote a line that is not JSON")
                continue
            if isinstance(frame, dict):
                await self._on_frame(frame)
        status = await child.wait()
        stderr = child.stderr_tail()
        self._control.close(f"the agent exited ({status}){stderr_tail(stderr)}")
        if self._live:  # an exit during the handshake is the handshake's failure, not an `Exited`
            await self._report_exit(status, stderr)

    async def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "control_response":
            response = frame.get("response")
            if isinstance(response, Mapping):
                self._control.resolve(response)
        elif kind == "control_request":
            await self._on_request(frame)
        elif kind == "result":
            await self._on_result(frame)
        elif self._live:
            for event in self._mapper.map(frame):
                await self._events.send(event)

    async def _on_request(self, frame: Mapping[str, Any]) -> None:
        wire_id = str(frame.get("request_id", ""))
        body = frame.get("request") if isinstance(frame.get("request"), Mapping) else {}
        assert isinstance(body, Mapping)
        if body.get("subtype") != "can_use_tool" or not self._live:
            self._control.refuse(wire_id, f"unsupported control request {body.get('subtype')!r}")
            await self._warn(f"refused the agent's control request {body.get('subtype')!r}")
            return
        request_id = f"r{wire_id}"  # `r` + the wire id
        self._asks[request_id] = (wire_id, body)
        await self._events.send(d.AdapterEvent(self._mapper.permission(request_id, body)))

    async def _on_result(self, frame: Mapping[str, Any]) -> None:
        if not self._live:
            errors = frame.get("errors")
            self._early_error = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else None
            return
        usage = self._mapper.usage(frame)
        if usage is not None:
            await self._events.send(d.AdapterEvent(usage))
        self._unanswered = max(self._unanswered - 1, 0)
        compact_error, self._mapper.compact_error = self._mapper.compact_error, None
        if self._unanswered == 0:
            stop = result_stop(frame, interrupted=self._interrupted, compact_error=compact_error)
            await self._events.send(d.TurnStopped(stop))
            self._interrupted = False

    # --- plumbing ------------------------------------------------------------------------------------------

    def _write(self, value: dict[str, Any]) -> None:
        assert self._writer is not None
        with suppress(PeerClosed):  # the reader reports the exit
            self._writer.send_nowait(dumps(value))
