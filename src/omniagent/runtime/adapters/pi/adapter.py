"""The adapter for pi (`pi --mode rpc`, @mariozechner/pi-coding-agent), pi's own JSONL RPC.

`connect` launches pi with the session's flags (`--session FILE` to resume, `--fork FILE` to fork), asks `get_state`,
`get_available_models` and `get_commands`, checks creation-time options, and yields a driver that turns commands
into pi commands and pi's events into driver events. What each event means lives in `translate.py`; options,
capabilities and logins in `info.py`; the wire itself in `rpc.py`.

Turn ends, as pi 0.73.1 behaves:
- A prompted run ends with `agent_end`. A newer pi that also sends `agent_settled` (after its `agent_end`
  listeners, auto-retry and auto-compaction have run) is seen on its first one; from then on `agent_settled` is
  the end. Either way the loop gets one `TurnStopped` per turn.
- `agent_end` whose last assistant message failed may be followed by pi's own auto-retry (`auto_retry_start`, in
  the same tick). One `get_state` round trip tells: the turn ends `Failed` only if no retry started meanwhile.
- A prompt that starts no run (an extension's `/command`, which may ask dialogs and then return) is over when
  its answer has come, no `agent_start` was seen and `get_state` says pi is not streaming.
- `abort` gives `agent_end` with an aborted message within a few ms: `Cancelled`.
- A last assistant message that stopped at `length` (the model's output limit) ends the turn `Completed` at limit
  `MaxTokens`; pi has no limit of its own on a run's model calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, ConfigValue
from omniagent.protocols.sidecar.events import Cancelled, Completed, Failed, StopLimit, StopReason
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.driver_loop import DriverLoop, stderr_tail
from omniagent.runtime.adapters.pi.info import (
    EFFORT_OPTION,
    MODEL_OPTION,
    NO_MODELS,
    PiState,
    launch_argv,
    login_methods,
    model_id,
    package_version,
    source_file_of,
    split_model,
)
from omniagent.runtime.adapters.pi.rpc import PiClient, PiError, PiExited, open_pi
from omniagent.runtime.adapters.pi.translate import DIALOGS, EventMapper, dialog_response, last_assistant, prompt_fields
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
from omniagent.wire.process import SpawnError

# pi's prompt refusals that mean the login is gone (agent-session.js, auth-guidance.js).
_AUTH_REFUSALS = ("No API key found", "Authentication failed")


class PiAdapter:
    """Speaks pi's RPC to one installation, one pi process per session."""

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        source = source_file_of(request)
        row = catalog.profile(request.installation.id)
        argv = launch_argv(request, row.launch_args if row is not None else ("--mode", "rpc"))
        # No `pi --version` process: it costs a second Node start (~1.5 s) on every open. A wrapper script that
        # hides the package leaves the version unknown.
        version = package_version(request.installation.executable_path)
        state = PiState(version=version, tools_disabled=request.disable_tools)
        driver = _PiDriver(request, events, state, source)
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    client = await stack.enter_async_context(
                        open_pi(
                            argv, cwd=str(request.directory), on_frame=driver.on_frame, prefix=launch_prefix(request)
                        )
                    )
                    await driver.handshake(client)
            except TimeoutError as exc:
                raise HandshakeTimeout() from exc
            except SpawnError as exc:
                raise SpawnFailed(str(exc)) from exc
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


class _PiDriver(DriverLoop):
    def __init__(self, request: d.ConnectRequest, events: d.EventSink, state: PiState, source: str | None) -> None:
        super().__init__(events)
        self._request = request
        self._source = source  # the session file resumed or forked from
        self._state = state
        self._mapper = EventMapper()
        self._client: PiClient | None = None
        self._live = False  # frames before the session is open are not the caller's news
        self._configuring = asyncio.Lock()  # pi runs commands concurrently; ours reach it one at a time
        self._dialogs: dict[str, str] = {}  # open dialog id → its method
        # The open turn: prompted (StartTurn), a compaction, or a run pi started itself (agent_start while idle).
        self._turn_open = False
        self._turn = 0  # bumps per turn, so a task of an older turn cannot end a newer one
        self._run_seen = False  # agent_start seen in this turn
        self._cancelled = False
        self._dialog_turn = False  # the open turn is a dialog pi opened while idle
        self._retrying = False  # between pi's auto_retry_start and auto_retry_end
        self._settles = False  # this pi sends agent_settled: that, not agent_end, ends a run
        self._run_end: Mapping[str, Any] | None = None  # the last agent_end, for the agent_settled after it

    @property
    def info(self) -> d.DriverInfo:
        return self._state.info()

    # --- opening -------------------------------------------------------------------------------------------

    async def handshake(self, client: PiClient) -> None:
        """Read the session's state, models and commands; check creation-time options.

        Raises: `AuthRequired`, `InvalidConfiguration`, `ResumeFailed`, `ProtocolFailed`.
        """
        self._client = client
        try:
            state, models, commands = await asyncio.gather(
                client.request("get_state"), client.request("get_available_models"), client.request("get_commands")
            )
        except PiExited as exc:
            raise await self._exit_error() from exc
        except PiError as exc:
            raise ProtocolFailed(str(exc)) from exc
        self._state.apply_state(state)
        self._state.apply_models(models)
        self._state.apply_commands(commands)
        if not self._state.models:
            # pi lists only models whose provider has a key or a login; with none it still starts (its model is
            # a placeholder "unknown") and refuses every prompt: that is a missing login.
            raise AuthRequired(login_methods(self._request.installation.executable_path))
        # A resume must continue the file itself; a fork must have copied it into a new one.
        opened, forked = self._state.session_file, self._request.fork is not None
        if self._source is not None and (opened == self._source) == forked:
            raise ResumeFailed(f"pi opened {opened!r} for {'fork' if forked else 'resume'} of {self._source!r}")
        for option, value in self._request.configure.items():
            self._check_created(option, value)
        self._live = True

    def _check_created(self, option: str, value: ConfigValue) -> None:
        """The launch flags carried the option; pi must show it applied (it clamps a level a model lacks)."""
        problem = check_option(self._state.info().details, option, value, live=False)
        if problem is not None:
            raise InvalidConfiguration(problem)
        current = model_id(self._state.model) if option == MODEL_OPTION else self._state.thinking
        if current != value:
            raise InvalidConfiguration(f"pi did not apply `{option}` = {value!r} (it uses {current!r})")

    async def _exit_error(self) -> ProtocolFailed | AuthRequired:
        client = self._require_client()
        status = await client.wait_exited()
        tail = stderr_tail(client.child.stderr_tail())
        if NO_MODELS in tail:
            return AuthRequired(login_methods(self._request.installation.executable_path))
        return ProtocolFailed(f"pi exited during the handshake ({status}){tail}")

    # --- commands ------------------------------------------------------------------------------------------

    def _helpers(self) -> list[Coroutine[Any, Any, None]]:
        return [self._watch_exit()]

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            self._open_turn()
            await self._events.send(d.TurnAck())
            self._spawn(self._prompt(await self._fields(command.input), self._turn))
        elif isinstance(command, d.Steer):
            self._spawn(self._steer(command.input))
        elif isinstance(command, d.AnswerRequest):
            method = self._dialogs.pop(command.request_id, None)
            if method is not None:
                self._write(dialog_response(command.request_id, method, command.answer))
                await self._end_dialog_turn(Completed())
        elif isinstance(command, d.Configure):
            self._spawn(self._configure(command.option, command.value))
        elif isinstance(command, d.Cancel):
            await self._cancel()
        elif isinstance(command, d.Compact):
            self._open_turn()
            self._spawn(self._compact(self._turn))
        elif isinstance(command, d.Rollback):
            await self._warn("rollback is not supported by pi")

    def _open_turn(self, *, for_dialog: bool = False) -> None:
        self._turn += 1
        self._turn_open, self._run_seen, self._cancelled = True, False, False
        self._dialog_turn = for_dialog

    async def _end_dialog_turn(self, stop: StopReason) -> None:
        """A dialog pi opened while idle (an extension's own) is a turn of its own, over once it is answered,
        unless a run started meanwhile (that run's end ends it)."""
        if self._dialog_turn and not self._dialogs and not self._run_seen:
            await self._end(self._turn, stop)

    async def _fields(self, prompt: d.PromptInput) -> dict[str, Any]:
        fields, problems = await prompt_fields(prompt)
        for problem in problems:
            await self._warn(problem)
        return fields

    async def _prompt(self, fields: dict[str, Any], turn: int) -> None:
        client = self._require_client()
        try:
            await client.request("prompt", **fields)
            if self._run_seen:
                return
            state = await client.request("get_state")
        except PiExited:
            return  # the exit watcher reports it, once
        except PiError as exc:
            if any(refusal in exc.message for refusal in _AUTH_REFUSALS):
                await self._events.send(d.AuthLost(login_methods(self._request.installation.executable_path)))
                return
            await self._end(turn, Failed(message=exc.message))
            return
        streaming = isinstance(state, Mapping) and state.get("isStreaming") is True
        if self._run_seen or streaming or turn != self._turn:
            return
        # Handled without a run (an extension command). A dialog it left open keeps the turn until answered.
        self._dialog_turn = True
        await self._end_dialog_turn(Cancelled() if self._cancelled else Completed())

    async def _steer(self, prompt: d.PromptInput) -> None:
        if not self._run_seen:  # nothing to steer (an extension command, a compaction): the loop queues it
            await self._events.send(d.SteerResult(accepted=False))
            return
        fields = await self._fields(prompt)
        try:
            await self._require_client().request("steer", **fields)
            accepted = True
        except (PiError, PiExited):
            accepted = False
        await self._events.send(d.SteerResult(accepted=accepted))

    async def _cancel(self) -> None:
        for request_id, method in list(self._dialogs.items()):
            self._write(dialog_response(request_id, method, None))
        self._dialogs.clear()
        self._cancelled = True
        self._spawn(self._abort())
        await self._end_dialog_turn(Cancelled())

    async def _abort(self) -> None:
        with suppress(PiError, PiExited):  # nothing to abort, or gone: the turn ends either way
            await self._require_client().request("abort")

    async def _compact(self, turn: int) -> None:
        try:
            await self._require_client().request("compact")
            stop: StopReason = Completed()
        except PiExited:
            return
        except PiError as exc:
            stop = Failed(message=exc.message)
        await self._end(turn, stop)

    async def _configure(self, option: str, value: ConfigValue) -> None:
        client = self._require_client()
        async with self._configuring:
            try:
                if option == MODEL_OPTION:
                    provider, ident = split_model(str(value))
                    await client.request("set_model", provider=provider, modelId=ident)
                elif option == EFFORT_OPTION:
                    await client.request("set_thinking_level", level=str(value))
                self._state.apply_state(await client.request("get_state"))
            except PiError as exc:
                await self._warn(f"pi rejected configure `{option}`: {exc.message}")
                return
            except PiExited:
                return
            if option == EFFORT_OPTION and self._state.thinking != value:
                await self._warn(f"pi set `effort` to {self._state.thinking!r}: the model has no level {value!r}")
            await self._events.send(d.InfoChanged(self._state.info()))

    # --- from pi -------------------------------------------------------------------------------------------

    async def on_frame(self, frame: Mapping[str, Any]) -> None:
        """One event from pi's reader (never waits for a response: see rpc.py)."""
        kind = frame.get("type")
        dialog = kind == "extension_ui_request" and frame.get("method") in DIALOGS
        if not self._live or self._closing or (dialog and self._cancelled and self._turn_open):
            # Nobody to ask yet, any more, or in a turn being cancelled: the dialog is dismissed at once.
            if dialog:
                self._write(dialog_response(str(frame.get("id")), str(frame.get("method")), None))
            return
        if kind == "agent_start":
            self._run_seen = True
            if not self._turn_open:  # pi started a run itself (a retry, an extension's message)
                self._open_turn()
                self._run_seen = True
        elif kind == "agent_end":
            self._run_end = frame  # the run's messages (stop reason, usage) are here, not on agent_settled
            if not self._settles:
                await self._finish_run(frame)
        elif kind == "agent_settled":
            if not self._settles:
                self._settles = True  # this run already ended at its agent_end; later runs end here
            else:
                await self._finish_run(self._run_end or frame)
            self._run_end = None
        elif kind in ("auto_retry_start", "auto_retry_end"):
            await self._on_retry(frame)
        elif kind == "thinking_level_changed" and isinstance(frame.get("level"), str):
            self._state.thinking = frame["level"]
            await self._events.send(d.InfoChanged(self._state.info()))
        elif kind == "session_info_changed" and isinstance(frame.get("name"), str):
            self._state.title = frame["name"]
            await self._events.send(d.InfoChanged(self._state.info()))
        if dialog:
            if not self._turn_open:
                self._open_turn(for_dialog=True)
            self._dialogs[str(frame.get("id"))] = str(frame.get("method"))
        for item in self._mapper.map(frame):
            await self._events.send(d.AdapterEvent(item))

    async def _finish_run(self, frame: Mapping[str, Any]) -> None:
        """The run's end frame: context usage, then the turn's end (unless pi may be retrying a failure)."""
        message = last_assistant(frame.get("messages"))
        usage = self._mapper.usage(message, self._state.context_window)
        if usage is not None:
            await self._events.send(d.AdapterEvent(usage))
        reason = message.get("stopReason") if message is not None else None
        if self._cancelled or reason == "aborted":
            await self._end(self._turn, Cancelled())
        elif reason == "error":
            error = str(message.get("errorMessage") or "pi reported an error") if message is not None else ""
            self._spawn(self._end_unless_retrying(self._turn, error))
        elif reason == "length":  # the model's reply reached its output limit: pi ends the run there
            await self._end(self._turn, Completed(limit=StopLimit.MAX_TOKENS))
        else:
            await self._end(self._turn, Completed())

    async def _end_unless_retrying(self, turn: int, error: str) -> None:
        # pi writes auto_retry_start in the same tick as the failed run's agent_end; this answer comes after it.
        with suppress(PiError, PiExited):
            await self._require_client().request("get_state")
        if not self._retrying:
            await self._end(turn, Failed(message=error))

    async def _on_retry(self, frame: Mapping[str, Any]) -> None:
        self._retrying = frame.get("type") == "auto_retry_start"
        if frame.get("type") == "auto_retry_end" and frame.get("success") is False:
            stop = Cancelled() if self._cancelled else Failed(message=str(frame.get("finalError") or "retry failed"))
            await self._end(self._turn, stop)

    async def _end(self, turn: int, stop: StopReason) -> None:
        """End the open turn once: older turns' tasks and repeated end frames are ignored."""
        if turn != self._turn or not self._turn_open:
            return
        self._turn_open = False
        self._dialogs.clear()
        await self._events.send(d.TurnStopped(stop))

    async def _watch_exit(self) -> None:
        client = self._require_client()
        status = await client.wait_exited()
        await self._report_exit(status, client.child.stderr_tail())

    # --- plumbing ------------------------------------------------------------------------------------------

    def _write(self, frame: Mapping[str, Any]) -> None:
        with suppress(PiExited):  # the exit watcher reports it
            self._require_client().send(frame)

    def _require_client(self) -> PiClient:
        assert self._client is not None, "the session is not open"
        return self._client
