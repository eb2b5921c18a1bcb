"""The adapter for every ACP agent (Gemini CLI, Qwen Code, opencode, claude-code-acp, codex-acp, …), v1 or v2.

Over `client.py`: `connect` spawns the agent (its catalog row's launch args, or an inline agent's `acp_args`),
negotiates the version, opens the session (new, load or fork) with the caller's MCP servers and creation-time
options, and yields a driver that turns commands into client calls and client callbacks into driver events
(docs/agents.md "ACP agents"); with the open option `history`, a load's replay of the conversation is the session's
`History` instead of dropped. What each update means lives in `translate.py`; capabilities, options and logins in
`info.py`; the command line, MCP servers and failures in `launch.py`; vendor extensions in `extensions.py`.
Turn rules are the session loop's: this module never decides when a turn starts or ends.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Coroutine, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, Capability, ConfigValue, LoginMethod
from omniagent.protocols.sidecar.commands import Answer, PermissionAnswer
from omniagent.protocols.sidecar.events import Failed, QuestionAsk, RequestOpened, StopReason
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.client import (
    AcpClient,
    AgentExited,
    AgentProtocolError,
    AgentUnsupported,
    ClientHandlers,
    McpServerConfig,
    PermissionRequest,
    SessionEvent,
    open_acp_client,
)
from omniagent.runtime.adapters.acp.extensions import (
    ASK_USER_QUESTION,
    PROMPT_COMPLETE,
    prompt_complete,
    question_reply,
    question_request,
    unhandled_notification,
)
from omniagent.runtime.adapters.acp.info import AgentFacts, SessionState, agent_facts, login_methods
from omniagent.runtime.adapters.acp.launch import handshake_errors, launch_argv, mcp_servers, rpc_message
from omniagent.runtime.adapters.acp.prompt import prompt_blocks
from omniagent.runtime.adapters.acp.translate import UpdateMapper, pick_option, stop_reason
from omniagent.runtime.adapters.driver_loop import DriverLoop
from omniagent.runtime.errors import (
    AuthRequired,
    InvalidConfiguration,
    ProtocolFailed,
    ResumeFailed,
    UnsupportedFeature,
)
from omniagent.runtime.requests import check_option
from omniagent.runtime.view import launch_prefix
from omniagent.wire.jsonrpc import current_request_id
from omniagent.wire.messages import AUTH_REQUIRED, METHOD_NOT_FOUND, RpcError

# The vendor extension that adds input to a running turn (advertised as `_meta.steering.supported`).
STEER_METHOD = "_session/steering"


class AcpAdapter:
    """Speaks ACP to one installation's agent, one process per session."""

    buffer = d.ADAPTER_EVENT_BUFFER

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        driver = _AcpDriver(request, events)
        argv = launch_argv(request.installation)
        async with AsyncExitStack() as stack:
            with handshake_errors():
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    client = await stack.enter_async_context(
                        open_acp_client(
                            argv,
                            handlers=driver.handlers(),
                            cwd=str(request.directory),
                            prefix=launch_prefix(request),
                            handshake_timeout=d.HANDSHAKE_TIMEOUT,
                        )
                    )
                    await driver.open_session(client)
            if driver.history is not None:
                await events.send(d.History(driver.history))
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


def request_id() -> str:
    """The id of the agent request being handled, as the caller sees it: `r` + the raw id's JSON."""
    return "r" + json.dumps(current_request_id.get())


class _AcpDriver(DriverLoop):
    def __init__(self, request: d.ConnectRequest, events: d.EventSink) -> None:
        super().__init__(events)
        self._request = request
        self._client: AcpClient | None = None
        self._state = SessionState(AgentFacts())
        self._mapper = UpdateMapper(self._state, version=1)
        # Events flow once the session is open: a load's history replay is not news to the caller, unless it asked
        # for the session's history (the open option `history`), which the replay then is (sent as `History`).
        self._live = False
        self.history: list[d.AdapterEvent] | None = None
        self._pending: dict[str, asyncio.Future[Answer | None]] = {}  # open requests: the caller's answer
        self._turn = 0  # bumps per StartTurn, so a superseded prompt's end is not taken for the current one
        self._ended = 0  # the last turn whose end was reported: a wire may end a turn twice (Grok)
        self._prompt_id: str | None = None  # the current turn's `_meta.promptId`, which Grok echoes at its end
        self._configuring = asyncio.Lock()  # configure calls reach the agent in the order they were sent

    @property
    def info(self) -> d.DriverInfo:
        return self._state.info()

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(
            on_update=self._on_update,
            on_permission=self._on_permission,
            on_other_request=self._on_other_request,
            on_other_notification=self._on_other_notification,
        )

    # --- opening -------------------------------------------------------------------------------------------

    async def open_session(self, client: AcpClient) -> None:
        """Create, load or fork the session and apply creation-time options.

        Raises: `AuthRequired`, `ResumeFailed`, `UnsupportedFeature`, `InvalidConfiguration`, `ProtocolFailed`.
        """
        self._client = client
        can_resume = client.supports("load") or client.supports("resume")
        self._state.facts = agent_facts(
            client.version, client.init_result, can_resume=can_resume, can_set_model=client.supports("set_model")
        )
        self._mapper = UpdateMapper(self._state, version=client.version)
        servers = mcp_servers(self._request, self._state.facts)
        if self._request.history and self._request.resume is not None and client.supports("load"):
            self.history, self._mapper.replaying = [], True  # a load replays the conversation before it answers
        try:
            result = await self._open(client, servers)
        except RpcError as exc:
            if exc.code == AUTH_REQUIRED:
                logins = self._logins()
                raise (AuthRequired(logins) if logins else ProtocolFailed(exc.message)) from exc
            if self._request.resume is not None or self._request.fork is not None:  # a bad token
                raise ResumeFailed(rpc_message(exc)) from exc
            raise ProtocolFailed(rpc_message(exc)) from exc
        self._mapper.replaying = False
        raw = result.dump()
        self._state.session_id = str(raw.get("sessionId") or self._request.resume or "")
        self._state.apply_session(raw)
        for option, value in self._request.configure.items():
            await self._configure_at_creation(option, value)
        self._live = True

    async def _open(self, client: AcpClient, servers: list[McpServerConfig]) -> Any:
        request, cwd = self._request, self._request.cwd
        if request.fork is not None:
            if not client.supports("fork"):
                raise UnsupportedFeature("fork (no ACP agent advertises it)")
            if request.fork_at is not None:
                raise UnsupportedFeature("fork at a point (ACP's session/fork copies the whole session)")
            return await client.fork_session(request.fork, cwd, mcp_servers=servers)
        if request.resume is not None:
            if client.supports("load"):
                return await client.load_session(request.resume, cwd, mcp_servers=servers)
            if client.supports("resume"):
                return await client.resume_session(request.resume, cwd, mcp_servers=servers)
            raise ResumeFailed("the agent does not advertise loading sessions")
        return await client.new_session(cwd, mcp_servers=servers)

    async def _configure_at_creation(self, option: str, value: ConfigValue) -> None:
        problem = check_option(self._state.info().details, option, value, live=False)
        if problem is not None:
            raise InvalidConfiguration(problem)
        try:
            await self._set_option(option, value)
        except (RpcError, AgentUnsupported) as exc:
            reason = exc.message if isinstance(exc, RpcError) else str(exc)
            raise InvalidConfiguration(f"agent rejected `{option}`: {reason}") from exc

    def _logins(self) -> list[LoginMethod]:
        """The agent's runnable login methods; failing those, the catalog's (its login command, API-key vars)."""
        assert self._client is not None
        executable = self._request.installation.executable_path
        methods = login_methods(self._client.init_result.get("authMethods"), executable)
        row = catalog.profile(self._request.installation.id)
        if not methods and row is not None and self._request.installation.acp_args is None:
            methods = catalog.login_methods(row, executable)
        return methods

    # --- commands ------------------------------------------------------------------------------------------

    def _helpers(self) -> list[Coroutine[Any, Any, None]]:
        return [self._watch_exit()]

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            self._turn += 1
            self._prompt_id = command.prompt_id
            await self._events.send(d.TurnAck())
            blocks, problems = await prompt_blocks(command.input, self._state.facts)
            for problem in problems:
                await self._warn(problem)
            self._spawn(self._prompt(blocks, self._turn, command.prompt_id))
            # Let the prompt task queue `session/prompt` now (it does before its first real wait), so a Cancel
            # handled next goes out after it: a `session/cancel` ahead of its prompt would cancel nothing.
            await asyncio.sleep(0)
        elif isinstance(command, d.Steer):
            self._spawn(self._steer(command.input))
        elif isinstance(command, d.AnswerRequest):
            pending = self._pending.get(command.request_id)
            if pending is not None and not pending.done():
                pending.set_result(command.answer)
        elif isinstance(command, d.Configure):
            self._spawn(self._configure(command.option, command.value))
        elif isinstance(command, d.Cancel):
            await self._cancel()
        elif isinstance(command, d.Rollback):
            await self._warn(f"rollback({command.turns}) is not supported by the ACP adapter")
        elif isinstance(command, d.Compact):
            await self._warn("compaction is not supported by the ACP adapter")
            await self._events.send(d.TurnStopped(Failed(message="compaction is not supported by the ACP adapter")))

    async def _prompt(self, blocks: list[dict[str, Any]], turn: int, prompt_id: str | None) -> None:
        client = self._require_client()
        meta = {"promptId": prompt_id, "requestId": prompt_id} if prompt_id is not None else None
        try:
            end = await client.prompt(self._state.session_id, blocks, meta=meta)
            stop = stop_reason(end.stop_reason)
        except RpcError as exc:
            if exc.code == AUTH_REQUIRED:
                await self._events.send(d.AuthLost(self._logins()))
                return
            stop = Failed(message=rpc_message(exc))
        except AgentExited:
            return  # the exit watcher reports it, once
        except (AgentUnsupported, AgentProtocolError) as exc:
            stop = Failed(message=str(exc))
        await self._stop_turn(turn, stop)

    async def _stop_turn(self, turn: int, stop: StopReason) -> None:
        """Report the end of `turn` once, and only while it is the current turn."""
        if turn == self._turn and self._ended != turn:
            self._ended = turn
            await self._events.send(d.TurnStopped(stop))

    async def _steer(self, prompt: d.PromptInput) -> None:
        client = self._require_client()
        blocks, _ = await prompt_blocks(prompt, self._state.facts)
        try:
            result = await client.extension(STEER_METHOD, {"sessionId": self._state.session_id, "prompt": blocks})
            accepted = isinstance(result, Mapping) and result.get("accepted") is True
        except (RpcError, AgentUnsupported, AgentExited):
            accepted = False
        await self._events.send(d.SteerResult(accepted=accepted))

    async def _cancel(self) -> None:
        for pending in self._pending.values():
            if not pending.done():
                pending.set_result(None)
        with suppress(AgentExited):  # the exit watcher reports it
            await self._require_client().cancel(self._state.session_id)

    async def _configure(self, option: str, value: ConfigValue) -> None:
        async with self._configuring:
            try:
                await self._set_option(option, value)
            except RpcError as exc:
                await self._warn(f"agent rejected configure `{option}`: {exc.message}")
                return
            except AgentUnsupported as exc:
                await self._warn(f"agent rejected configure `{option}`: {exc}")
                return
            except AgentExited:
                return
            await self._events.send(d.InfoChanged(self._state.info()))

    async def _set_option(self, option: str, value: ConfigValue) -> None:
        """`mode` from v1 modes → `session/set_mode`; the first-class `model` → `session/set_model`; anything else
        → `session/set_config_option`, whose answer lists the options as they now are. An answer without an error
        means the agent took the value, whatever else it holds (real agents answer `{}`)."""
        client, session_id = self._require_client(), self._state.session_id
        if self._state.uses_set_mode(option):
            with suppress(AgentProtocolError):  # an answer off the schema is still no error
                await client.set_mode(session_id, str(value))
            self._state.apply_value(option, value)
            return
        if self._state.uses_set_model(option):
            await client.set_model(session_id, str(value))
            self._state.apply_value(option, value)
            return
        result = await client.set_config_option(session_id, option, value)
        options = result.dump().get("configOptions") if result is not None else None
        if isinstance(options, list) and options:
            self._state.apply_config_options(options)
        else:  # `{}` (or an empty list): the agent took the value without restating its options
            self._state.apply_value(option, value)

    # --- from the agent ------------------------------------------------------------------------------------

    async def _on_update(self, event: SessionEvent) -> None:
        for item in self._mapper.map(event.raw, parsed=event.update is not None):
            if self._live:
                await self._events.send(item)
            elif self._mapper.replaying and self.history is not None and isinstance(item, d.AdapterEvent):
                self.history.append(item)  # the session's state is the mapper's already: only what was said

    async def _on_permission(self, request: PermissionRequest) -> str | None:
        params = request.dump()
        opened = self._mapper.permission(request_id(), params)
        answer = await self._ask(opened)
        return pick_option(params.get("options") or [], answer.choice) if isinstance(answer, PermissionAnswer) else None

    async def _on_other_request(self, method: str, params: Any) -> Any:
        """Grok's questions; any other request is answered "method not found", with a Warning to the caller."""
        if method in ASK_USER_QUESTION:
            request = question_request(request_id(), params)
            if self._live and self._state.see(Capability.QUESTIONS):
                await self._events.send(d.InfoChanged(self._state.info()))
            return question_reply(request, await self._ask(RequestOpened(request=QuestionAsk(request=request))))
        if self._live:
            await self._warn(f"the agent sent the request `{method}`, which the ACP adapter does not answer")
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    async def _on_other_notification(self, method: str, params: Any) -> None:
        """Grok's turn end (only for the current prompt's id); any other notification becomes an Info diagnostic."""
        if method == PROMPT_COMPLETE:
            end = prompt_complete(params)
            if end.prompt_id is not None and end.prompt_id == self._prompt_id:
                await self._stop_turn(self._turn, end.stop)
        elif self._live:
            await self._events.send(unhandled_notification(method, params))

    async def _ask(self, opened: RequestOpened) -> Answer | None:
        """Open a request to the caller and wait for the answer; None when it is cancelled or cannot be asked."""
        if not self._live or self._closing:
            return None
        request_id = opened.request.request.id
        pending: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = pending
        try:
            await self._events.send(d.AdapterEvent(opened))
            return await pending
        finally:
            del self._pending[request_id]

    async def _watch_exit(self) -> None:
        exited = await self._require_client().wait_exited()
        await self._report_exit(exited.status, exited.stderr)

    # --- plumbing ------------------------------------------------------------------------------------------

    def _require_client(self) -> AcpClient:
        assert self._client is not None, "the session is not open"
        return self._client
