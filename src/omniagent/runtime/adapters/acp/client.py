"""Drive any ACP agent, v1 or v2, as its client: spawn, negotiate, sessions, prompts, permissions, updates.

Layer: behaviour over `wire.process` (the child), `wire.jsonrpc` (the peer) and `protocols.acp` (typed models).
Above it sits the runtime's ACP adapter, which turns `SessionEvent`s into its own events. Version differences
come from `protocols.acp.versions` (data); this module never tests a version number.

    handlers = ClientHandlers(on_update=..., on_permission=...)
    async with open_acp_client(["gemini", "--acp"], handlers=handlers) as acp:
        acp.version                                   # 1 or 2: what the agent answered to our 2
        session = await acp.new_session("/repo")      # v1/v2 NewSessionResponse
        end = await acp.prompt(session.session_id, [{"type": "text", "text": "hi"}])
        end.stop_reason                               # "end_turn", "cancelled", …

API (all coroutines unless noted; models are `protocols.acp.v1` or `.v2` per `acp.version`):
- `open_acp_client(argv, *, handlers, cwd=None, env=None, client_name, client_version, handshake_timeout,
  protocol_version=2)` → async context manager yielding `AcpClient` after `initialize`.
- `AcpClient.version`, `.spec`, `.init_result` (raw dict), `.agent` (typed InitializeResponse),
  `.supports(operation)` (sync), `.stderr_tail()` (sync).
- `authenticate(method_id)`, `logout()`.
- `new_session(cwd, *, mcp_servers=(), additional_directories=None)`, `load_session(session_id, cwd, …)` (v1
  `session/load`; v2 `session/resume` with replay from start), `resume_session(session_id, cwd, *, replay=False, …)`,
  `fork_session`, `list_sessions(cwd=None, cursor=None)`, `close_session(session_id)`.
- `set_mode(session_id, mode_id)` (v1 only), `set_model(session_id, model_id)` (v1 only, unstable),
  `set_config_option(session_id, config_id, value)` (None when the answer leaves the options out).
- `prompt(session_id, blocks) -> TurnEnd`: v1 ends with the response's stop reason; v2's response is `{}` and the
  turn ends with an idle `state_update`. `cancel(session_id)` (notification; pending permissions answer cancelled).
- Incoming: `session/update` → `handlers.on_update(SessionEvent)` in order; `session/request_permission` →
  `handlers.on_permission(request) -> optionId | None` (None = cancelled; no handler = cancelled);
  `elicitation/create` → `handlers.on_elicitation(request) -> response model` (advertised only if given); any
  other request or notification (vendor extensions) → `handlers.on_other_request` / `on_other_notification`.

Raises (any call): `AgentUnsupported` (operation absent in this version or not advertised), `AgentExited` (the
process went away; carries exit status and stderr tail), `AgentProtocolError` (handshake or reply off-schema),
`wire.messages.RpcError` (the agent answered an error, e.g. code AUTH_REQUIRED).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from omniagent._version import __version__
from omniagent.errors import OmniagentError
from omniagent.protocols.acp import methods, v1, v2
from omniagent.protocols.acp.methods import ValidationError
from omniagent.protocols.acp.versions import LATEST, SPECS, VersionSpec, advertised, spec_for
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import FallbackNotificationHandler, FallbackRequestHandler, Peer
from omniagent.wire.messages import INVALID_PARAMS, RpcError
from omniagent.wire.process import ChildProcess, open_process

log = logging.getLogger(__name__)

# Seconds an agent gets to answer `initialize` (npm agents load for several seconds on a cold cache).
HANDSHAKE_TIMEOUT = 60.0
# Seconds to wait for an agent's exit status after its stdout closed (for the AgentExited message).
EXIT_STATUS_WAIT = 2.0

PermissionRequest = v1.RequestPermissionRequest | v2.RequestPermissionRequest
UpdateHandler = Callable[["SessionEvent"], Awaitable[None]]
PermissionHandler = Callable[[PermissionRequest], Awaitable[str | None]]
ElicitationHandler = Callable[[Any], Awaitable[Any]]


class AcpError(OmniagentError):
    """An ACP client call failed."""


class AgentUnsupported(AcpError):
    """The operation does not exist in the negotiated version, or the agent did not advertise it."""


class AgentExited(AcpError):
    """The agent process closed the connection; `status` is its exit status text, `stderr` its last lines."""

    def __init__(self, status: str, stderr: list[str]) -> None:
        super().__init__(f"the agent exited ({status})")
        self.status = status
        self.stderr = stderr


class AgentProtocolError(AcpError):
    """The agent's answer does not fit the protocol (unknown version, malformed reply)."""


@dataclass(frozen=True, slots=True)
class ClientHandlers:
    """What the caller supplies for traffic the agent starts. Each handler may await anything."""

    on_update: UpdateHandler | None = None
    on_permission: PermissionHandler | None = None
    on_elicitation: ElicitationHandler | None = None
    # Any other request (vendor extensions such as `_x.ai/ask_user_question`): `(method, raw params) -> raw result`;
    # raise `RpcError` to answer an error. Without it, such requests are answered "method not found".
    on_other_request: FallbackRequestHandler | None = None
    # Any notification other than `session/update`: `(method, raw params)`. Without it, they are ignored.
    on_other_notification: FallbackNotificationHandler | None = None


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One `session/update`: `update` is the typed variant of the negotiated version, or None if it did not parse
    (then only `raw` holds it)."""

    session_id: str
    update: Any
    raw: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a prompt turn ended."""

    stop_reason: str | None
    usage: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """An MCP server to forward to the agent: stdio (`command`) or HTTP (`url`)."""

    name: str
    command: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    sse: bool = False  # a `url` server spoken over SSE (v1 only; v2 dropped SSE)


@dataclass(slots=True)
class _Turn:
    done: asyncio.Future[TurnEnd]
    running_seen: bool = False


class AcpClient:
    """A negotiated connection to one agent process. Made by `open_acp_client`."""

    def __init__(self, peer: Peer, child: ChildProcess, handlers: ClientHandlers) -> None:
        self._peer = peer
        self._child = child
        self._handlers = handlers
        self.spec: VersionSpec = SPECS[LATEST]  # until initialize answers
        self.init_result: dict[str, Any] = {}
        self.agent: Any = None
        self._turns: dict[str, _Turn] = {}
        self._permissions: dict[str, set[asyncio.Task[Any]]] = {}
        self._cancelling: set[asyncio.Task[Any]] = set()
        peer.on_notification("session/update", self._on_update)
        peer.on_request("session/request_permission", self._on_permission)
        if handlers.on_elicitation is not None:
            peer.on_request("elicitation/create", self._on_elicitation)
        if handlers.on_other_request is not None:
            peer.on_other_requests(handlers.on_other_request)
        if handlers.on_other_notification is not None:
            peer.on_other_notifications(handlers.on_other_notification)

    @property
    def version(self) -> int:
        """The protocol version the agent chose."""
        return self.spec.version

    def supports(self, operation: str) -> bool:
        """Whether `operation` (a key of `VersionSpec.method_names`, e.g. "load", "fork") may be called."""
        method = self.spec.method_names.get(operation)
        if operation == "load" and self.spec.load_via_resume:
            method = self.spec.method_names["resume"]
        return method is not None and advertised(self.spec, self.init_result, method)

    def stderr_tail(self) -> list[str]:
        """The agent's last stderr lines."""
        return self._child.stderr_tail()

    # --- handshake -----------------------------------------------------------------------------------------

    async def initialize(
        self, *, client_name: str, client_version: str, handshake_timeout: float, protocol_version: int = LATEST
    ) -> None:
        """Ask for `protocol_version` and follow the agent's answer for the whole connection."""
        capabilities: dict[str, Any] = {}
        if self._handlers.on_elicitation is not None:
            capabilities["elicitation"] = {"form": {}}
        request = v2.InitializeRequest(
            protocol_version=protocol_version,
            info=v2.Implementation(name=client_name, version=client_version),
            capabilities=methods.parse(v2.ClientCapabilities, capabilities),
        )
        try:
            async with asyncio.timeout(handshake_timeout):
                raw = await self._call_raw("initialize", request.dump())
        except TimeoutError as exc:
            raise AgentProtocolError(f"the agent did not answer initialize within {handshake_timeout:g} s") from exc
        if not isinstance(raw, dict):
            raise AgentProtocolError("the agent's initialize result is not an object")
        spec = spec_for(raw.get("protocolVersion"))
        if spec is None:
            raise AgentProtocolError(f"the agent speaks ACP version {raw.get('protocolVersion')!r}, not 1 or 2")
        self.spec, self.init_result = spec, raw
        try:
            self.agent = methods.parse(spec.table.agent_requests["initialize"][1], raw)
        except ValidationError as exc:
            # Real agents stray from the schema in small ways; gating reads the raw result, so go on.
            log.warning("initialize result does not fit ACP v%d: %s", spec.version, exc)

    # --- operations ----------------------------------------------------------------------------------------

    async def authenticate(self, method_id: str) -> Any:
        """Log in with one of the agent's auth methods (v1 `authenticate`, v2 `auth/login`)."""
        return await self._call("authenticate", {"methodId": method_id})

    async def logout(self) -> Any:
        """Log out (v1 `logout`, gated by `auth.logout`; v2 `auth/logout`)."""
        return await self._call("logout", {})

    async def new_session(
        self,
        cwd: str,
        *,
        mcp_servers: Sequence[McpServerConfig] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> Any:
        """Create a session; returns the version's NewSessionResponse (`session_id`, config options, v1 modes)."""
        params = self._session_params(cwd, mcp_servers, additional_directories)
        return await self._call("new", params)

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        *,
        mcp_servers: Sequence[McpServerConfig] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> Any:
        """Reopen a session and replay its history as updates before returning (v1 load, v2 resume from start)."""
        if self.spec.load_via_resume:
            return await self.resume_session(
                session_id, cwd, mcp_servers=mcp_servers, replay=True, additional_directories=additional_directories
            )
        params = {"sessionId": session_id, **self._session_params(cwd, mcp_servers, additional_directories)}
        return await self._call("load", params)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        *,
        mcp_servers: Sequence[McpServerConfig] = (),
        replay: bool = False,
        additional_directories: Sequence[str] | None = None,
    ) -> Any:
        """Reopen a session without replay (or, v2 only, with `replay=True`)."""
        params = {"sessionId": session_id, **self._session_params(cwd, mcp_servers, additional_directories)}
        if replay:
            if not self.spec.load_via_resume:
                raise AgentUnsupported("replay on resume needs ACP v2; use load_session")
            params["replayFrom"] = {"type": "start"}
        return await self._call("resume", params)

    async def fork_session(self, session_id: str, cwd: str, *, mcp_servers: Sequence[McpServerConfig] = ()) -> Any:
        """Fork a session (unstable; only where advertised)."""
        params = {"sessionId": session_id, **self._session_params(cwd, mcp_servers, None)}
        return await self._call("fork", params)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None) -> Any:
        """One page of the agent's sessions."""
        params = {key: value for key, value in (("cwd", cwd), ("cursor", cursor)) if value is not None}
        return await self._call("list", params)

    async def close_session(self, session_id: str) -> Any:
        """Close a session (the agent frees it)."""
        return await self._call("close", {"sessionId": session_id})

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        """v1 only: switch the session mode (v2 uses a config option with category "mode")."""
        return await self._call("set_mode", {"sessionId": session_id, "modeId": mode_id})

    async def set_model(self, session_id: str, model_id: str) -> Any:
        """v1 only, unstable: switch the model an agent offered as first-class `models`; returns the raw result.

        Sent unchecked: no bundled schema describes `session/set_model` (the v1 SDK dropped it for config options
        with category "model"), yet the agents that answer `models` still take it.
        """
        return await self._call_checked("set_model", {"sessionId": session_id, "modelId": model_id})

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """Set a config option: a value id (select) or a boolean. Returns the version's response (the options as
        they now are), or None when the answer does not fit it.

        Read leniently because real agents answer `{}` (the value taken, the options left out), which the schema's
        required `configOptions` refuses; an answer without an error means the value was taken.
        """
        params: dict[str, Any] = {"sessionId": session_id, "configId": config_id, "value": value}
        if isinstance(value, bool):
            params["type"] = "boolean"
        elif self.spec.config_id_value_tagged:
            params["type"] = "id"
        raw = await self._call_checked("set_config_option", self._params("set_config_option", params))
        response = self.spec.table.agent_requests[self.spec.method_names["set_config_option"]][1]
        try:
            return methods.parse(response, raw)
        except ValidationError:
            log.info("session/set_config_option answered off-schema for v%d: %r", self.version, raw)
            return None

    async def prompt(self, session_id: str, blocks: Sequence[Any], *, meta: Mapping[str, Any] | None = None) -> TurnEnd:
        """Send a prompt and wait for the turn to end. Updates stream to `on_update` meanwhile.

        `blocks` are ContentBlock models of the negotiated version or their wire dicts; `meta` goes out as the
        request's `_meta`.
        """
        body: dict[str, Any] = {"sessionId": session_id, "prompt": [methods.dump(b) for b in blocks]}
        if meta is not None:
            body["_meta"] = dict(meta)
        params = self._params("prompt", body)
        if self.spec.prompt_response_ends_turn:
            raw = await self._call_checked("prompt", params)
            return _turn_end(raw if isinstance(raw, dict) else {})
        turn = _Turn(asyncio.get_running_loop().create_future())
        self._turns[session_id] = turn  # before sending: the idle may follow the `{}` answer at once
        try:
            await self._call_checked("prompt", params)
            return await self._wait_turn(turn)
        finally:
            if self._turns.get(session_id) is turn:
                del self._turns[session_id]

    async def _wait_turn(self, turn: _Turn) -> TurnEnd:
        """Wait for the idle update, or fail if the agent goes away first (never a hang)."""
        closed = asyncio.ensure_future(self._peer.wait_closed())
        try:
            waits: set[asyncio.Future[Any]] = {turn.done, closed}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if not turn.done.done():
            raise await self._exited()
        return turn.done.result()

    async def cancel(self, session_id: str) -> None:
        """Cancel the session's turn; pending permission requests are answered `cancelled` (ACP cancellation)."""
        for task in self._permissions.get(session_id, set()):
            self._cancelling.add(task)
            task.cancel()
        method = self.spec.method_names["cancel"]
        params = methods.parse(self.spec.table.agent_notifications[method], {"sessionId": session_id})
        try:
            self._peer.notify(method, params.dump())
        except PeerClosed as exc:
            raise await self._exited() from exc

    async def extension(self, method: str, params: Mapping[str, Any]) -> Any:
        """Call a vendor extension method (name starts with `_`, e.g. `_session/steering`); returns the raw result."""
        if not method.startswith("_"):
            raise AgentUnsupported(f"{method} is not an extension method")
        return await self._call_raw(method, dict(params))

    async def wait_exited(self) -> AgentExited:
        """Wait until the agent closes the connection; returns the error describing how it ended."""
        await self._peer.wait_closed()
        return await self._exited()

    # --- incoming ------------------------------------------------------------------------------------------

    async def _on_update(self, params: Any) -> None:
        raw = params if isinstance(params, dict) else {}
        try:
            note = methods.parse(self.spec.table.client_notifications["session/update"], raw)
            event = SessionEvent(note.session_id, note.update, raw.get("update") or {})
        except ValidationError as exc:
            log.info("session/update off-schema for v%d, delivered raw: %s", self.version, exc)
            event = SessionEvent(str(raw.get("sessionId", "")), None, raw.get("update") or {})
        if self._handlers.on_update is not None:
            await self._handlers.on_update(event)
        self._track_turn(event)

    def _track_turn(self, event: SessionEvent) -> None:
        turn = self._turns.get(event.session_id)
        if turn is None or turn.done.done() or event.raw.get("sessionUpdate") != "state_update":
            return
        state = event.raw.get("state")
        if state == "running":
            turn.running_seen = True
        elif state == "idle" and (turn.running_seen or event.raw.get("stopReason") is not None):
            turn.done.set_result(_turn_end(event.raw))

    async def _on_permission(self, params: Any) -> Any:
        request = self._incoming("session/request_permission", params)
        task = asyncio.current_task()
        assert task is not None
        waiting = self._permissions.setdefault(request.session_id, set())
        waiting.add(task)
        option: str | None = None
        try:
            if self._handlers.on_permission is not None:
                option = await self._handlers.on_permission(request)
        except asyncio.CancelledError:
            if task not in self._cancelling:
                raise
            task.uncancel()
            option = None
        finally:
            waiting.discard(task)
            self._cancelling.discard(task)
        outcome = {"outcome": "cancelled"} if option is None else {"outcome": "selected", "optionId": option}
        response = self.spec.table.client_requests["session/request_permission"][1]
        return methods.parse(response, {"outcome": outcome}).dump()

    async def _on_elicitation(self, params: Any) -> Any:
        assert self._handlers.on_elicitation is not None
        request = self._incoming("elicitation/create", params)
        return methods.dump(await self._handlers.on_elicitation(request))

    # --- plumbing ------------------------------------------------------------------------------------------

    def _incoming(self, method: str, params: Any) -> Any:
        """An agent's request params as the version's model; off-schema params are answered -32602."""
        try:
            return methods.parse(self.spec.table.client_requests[method][0], params)
        except ValidationError as exc:
            log.info("%s params off-schema for v%d: %s", method, self.version, exc)
            raise RpcError(INVALID_PARAMS, f"invalid params for {method}") from exc

    def _session_params(
        self, cwd: str, servers: Sequence[McpServerConfig], directories: Sequence[str] | None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"cwd": cwd}
        if servers or self.spec.mcp_servers_required:
            params["mcpServers"] = [self._mcp_server(server) for server in servers]
        if directories is not None:
            params["additionalDirectories"] = list(directories)
        return params

    def _mcp_server(self, server: McpServerConfig) -> dict[str, Any]:
        if server.url is not None:
            kind = "sse" if server.sse else "http"
            return {"type": kind, "name": server.name, "url": server.url, "headers": _pairs(server.headers)}
        # v1 stdio servers are untagged; v2 requires `type: "stdio"`.
        body = {
            "name": server.name,
            "command": server.command or "",
            "args": list(server.args),
            "env": _pairs(server.env),
        }
        return body if self.version == 1 else {"type": "stdio", **body}

    def _params(self, operation: str, params: dict[str, Any]) -> Any:
        """Our params checked against the version's model (a mistake here is ours, so it raises), as wire JSON."""
        method = self.spec.method_names.get(operation)
        if method is None:
            raise AgentUnsupported(f"{operation} does not exist in ACP v{self.version}")
        return methods.dump(methods.parse(self.spec.table.agent_requests[method][0], params))

    async def _call(self, operation: str, params: dict[str, Any]) -> Any:
        raw = await self._call_checked(operation, self._params(operation, params))
        method = self.spec.method_names[operation]
        try:
            return methods.parse(self.spec.table.agent_requests[method][1], raw if raw is not None else {})
        except ValidationError as exc:
            raise AgentProtocolError(f"the agent's {method} result does not fit ACP v{self.version}") from exc

    async def _call_checked(self, operation: str, params: Any) -> Any:
        method = self.spec.method_names.get(operation)
        if method is None:
            raise AgentUnsupported(f"{operation} does not exist in ACP v{self.version}")
        if not advertised(self.spec, self.init_result, method):
            raise AgentUnsupported(f"the agent does not advertise {method}")
        return await self._call_raw(method, params)

    async def _call_raw(self, method: str, params: Any) -> Any:
        try:
            return await self._peer.request(method, params)
        except PeerClosed as exc:
            raise await self._exited() from exc

    async def _exited(self) -> AgentExited:
        """The error for a closed connection, with the exit status if the process ends soon after."""
        try:
            async with asyncio.timeout(EXIT_STATUS_WAIT):
                status = str(await self._child.wait())
        except TimeoutError:
            status = "still running, stdout closed"
        return AgentExited(status, self._child.stderr_tail())


def _pairs(values: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in values.items()]


def _turn_end(raw: Mapping[str, Any]) -> TurnEnd:
    reason = raw.get("stopReason")
    usage = raw.get("usage")
    return TurnEnd(reason if isinstance(reason, str) else None, usage if isinstance(usage, dict) else None)


@asynccontextmanager
async def open_acp_client(
    argv: Sequence[str],
    *,
    handlers: ClientHandlers | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    client_name: str = "omniagent",
    client_version: str = __version__,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    protocol_version: int = LATEST,
) -> AsyncIterator[AcpClient]:
    """Spawn an ACP agent (under `prefix`, `open_process`'s), negotiate the version, and yield the client;
    leaving closes the agent (bounded).

    Raises:
        wire.process.SpawnError: the agent cannot be started.
        AgentProtocolError: the handshake failed (timeout, unknown version).
        AgentExited: the agent exited during the handshake.
    """
    async with open_process(argv, cwd=cwd, env=env, prefix=prefix) as child:
        peer = Peer(child.stdout, child.stdin, name=f"acp:{argv[0]}", repair_surrogates=True)
        client = AcpClient(peer, child, handlers or ClientHandlers())
        async with peer:
            await client.initialize(
                client_name=client_name,
                client_version=client_version,
                handshake_timeout=handshake_timeout,
                protocol_version=protocol_version,
            )
            yield client
