"""The engine as an ACP agent: one connection, v1 or v2 as the client asks, driving the Engine in process.

Negotiation is `faces.acp.handshake`'s, answered by `faces.acp.serve` before the engine exists; this agent
is built on the first other request, for the version chosen then (a repeated initialize keeps it). Method names per
version come from `protocols.acp.versions` (the client's data); update shapes from `faces.acp.translate`; routing of
engine broadcasts from `faces.acp.relay`. Sessions are engine sessions (same ids, same store), so `omniagent rpc` sees
them too.

Decisions (docs/acp.md): a prompt while the session's turn runs is refused with -32600 (no queueing); the `mcpServers`
of `session/new`, `load`, `resume` and `fork` become the session's MCP servers (stdio and HTTP,
`faces/acp/mcp_servers.py`; they stop at `session/close` or when the connection ends); additional directories are
accepted and ignored (not advertised); the model's questions (`ask_user`) go out as `elicitation/create` forms when the
client advertised them, else the tool fails with a sentence saying so (a secret question always does: forms must not ask
for secrets); a failed run ends a v1 prompt with a -32603 error naming the failure, and a v2 turn with the failure as
agent text and `end_turn`; `session/fork` (v1 and v2, unstable) copies the whole committed conversation into a new
engine session working in the request's `cwd` (engine `session.fork`). A prompt's turn lasts until the session's tree of
child sessions has settled (the children's reports start the session's next runs inside it); cancel stops the whole
tree, and delete removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from omniagent.engine.api import SANDBOX_OPTION_IDS, EngineApi, EngineError, ErrorCode, PermissionMode
from omniagent.faces.acp import history, mcp_servers, options
from omniagent.faces.acp import translate as t
from omniagent.faces.acp.relay import Relay, Spawn, turn_failure
from omniagent.protocols.acp import methods
from omniagent.protocols.acp.methods import ValidationError
from omniagent.protocols.acp.versions import VersionSpec
from omniagent.protocols.yuke.content import ContentPart, ContentText, InputContent, InputSkill
from omniagent.protocols.yuke.runs import RunOutcomeFailed
from omniagent.protocols.yuke.sessions import SendInputStarted, Session
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.shapes import SHAPES
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    RESOURCE_NOT_FOUND,
    RpcError,
)

# Seconds `session/close` and `session/delete` wait for a cancelled turn to record its end.
DELETE_WAIT = 10.0
_SESSION_ID = re.compile(r"^[0-9a-f]{32}$")
_PARAMS_CODES = {
    ErrorCode.UNKNOWN_SESSION: RESOURCE_NOT_FOUND,
    ErrorCode.BAD_REQUEST: INVALID_PARAMS,
    ErrorCode.UNSUPPORTED_MODEL: INVALID_PARAMS,
    ErrorCode.UNSUPPORTED_REASONING: INVALID_PARAMS,
    ErrorCode.INVALID_PATCH: INVALID_PARAMS,
    ErrorCode.SESSION_BUSY: INVALID_REQUEST,
}


def rpc_error(exc: EngineError) -> RpcError:
    """An engine refusal as an ACP error (the engine's sentence names no secret)."""
    return RpcError(_PARAMS_CODES.get(exc.code, INTERNAL_ERROR), exc.message)


class EngineAcpAgent:
    """Serves one ACP connection over `peer` with `engine`, in the version `initialize` chose (faces/acp/serve.py
    answers `initialize` itself, before the engine exists, then routes every other method here)."""

    def __init__(
        self, engine: EngineApi, peer: Peer, spawn: Spawn, spec: VersionSpec, *, elicits: bool = False
    ) -> None:
        self._engine = engine
        self._peer = peer
        self._spec = spec
        self._relay = Relay(engine, peer, SHAPES[spec.version], spawn, elicits=elicits)
        names = spec.method_names
        handlers = {
            "authenticate": self._login,
            "logout": self._logout,
            "new": self._new,
            "load": self._load,
            "resume": self._resume,
            "close": self._close,
            "list": self._list,
            "delete": self._delete,
            "prompt": self._prompt,
            "set_mode": self._set_mode,
            "set_config_option": self._set_config_option,
        }
        if engine.serves("session.fork"):
            handlers["fork"] = self._fork
        self.handlers: dict[str, Any] = {
            names[operation]: self._checked(names[operation], handler)
            for operation, handler in handlers.items()
            if operation in names
        }
        """Wire method name → handler of its params (validated against the version's model first)."""

    def close(self) -> None:
        """Stop listening to the engine."""
        self._relay.close_all()

    def _checked(self, method: str, handler: Any) -> Any:
        """Validate params against the version's model first: off-schema params are -32602, never a crash."""
        model = self._spec.table.agent_requests[method][0]

        async def run(params: Any) -> Any:
            try:
                methods.parse(model, params if params is not None else {})
            except ValidationError:
                raise RpcError(INVALID_PARAMS, f"invalid params for {method}") from None
            try:
                return await handler(params or {})
            except EngineError as exc:
                raise rpc_error(exc) from None

        return run

    @property
    def relay(self) -> Relay:
        return self._relay

    # Auth -----------------------------------------------------------------------------------------------------

    async def _login(self, params: dict[str, Any]) -> dict[str, Any]:
        method_id = str(params.get("methodId", ""))
        if not options.provider_ready(self._engine, method_id):
            raise RpcError(AUTH_REQUIRED, "no key for this provider: set its environment variable and restart")
        return {}

    async def _logout(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {}  # keys come from the environment or `omniagent rpc`'s auth.set_api_key; nothing to forget here

    # Sessions -------------------------------------------------------------------------------------------------

    async def _session(self, session_id: Any) -> Session:
        """The engine session `session_id` names; -32002 with the draft's `{sessionId}` data when there is none."""
        if isinstance(session_id, str) and _SESSION_ID.match(session_id):
            try:
                return await self._engine.session(session_id)
            except EngineError as exc:
                if exc.code != ErrorCode.UNKNOWN_SESSION:
                    raise
        raise RpcError(RESOURCE_NOT_FOUND, "unknown session", {"sessionId": session_id})

    async def _existing(self, session_id: Any) -> Session | None:
        """The session, or None when it does not exist (for the methods where that is no error)."""
        try:
            return await self._session(session_id)
        except RpcError as exc:
            if exc.code == RESOURCE_NOT_FOUND:
                return None
            raise

    async def _opened(self, session: Session, new_id: bool) -> dict[str, Any]:
        self.relay.open(session)
        result: dict[str, Any] = {
            "configOptions": b.wire(options.config_options(self._engine, self.relay.shapes, session))
        }
        if new_id:
            result["sessionId"] = session.id
        if not self.relay.shapes.state_updates:
            result["modes"] = b.wire(options.v1_modes(self._engine, session.id))
        skills = (await self._engine.skills(session)).commands()
        if skills:
            # After the answer, which the peer queues once this handler returns: the client knows the session then.
            update = t.available_commands(self.relay.shapes, skills)
            asyncio.get_running_loop().call_soon(self.relay.send, session.id, update)
        return result

    async def _new(self, params: dict[str, Any]) -> dict[str, Any]:
        specs = mcp_servers.server_specs(params.get("mcpServers"))
        try:
            created = await self._engine.create_session(str(params["cwd"]))
        except EngineError as exc:
            if exc.code == ErrorCode.UNSUPPORTED_MODEL and self._engine.catalog.missing_keys():
                raise RpcError(AUTH_REQUIRED, "no model is ready: set a provider's API key (see authMethods)") from None
            raise
        await self._engine.attach_mcp(created.id, specs)
        return await self._opened(created, True)

    async def _fork(self, params: dict[str, Any]) -> dict[str, Any]:
        """The whole conversation copied into a new engine session working in the request's `cwd`."""
        source = await self._session(params.get("sessionId"))
        specs = mcp_servers.server_specs(params.get("mcpServers"))
        forked = await self._engine.fork_session(source.id, str(params["cwd"]))
        await self._engine.attach_mcp(forked.id, specs)
        return await self._opened(forked, True)

    async def _load(self, params: dict[str, Any]) -> dict[str, Any]:
        session = await self._session(params.get("sessionId"))
        await self._engine.attach_mcp(session.id, mcp_servers.server_specs(params.get("mcpServers")))
        await self._replay(session)
        return await self._opened(session, False)

    async def _resume(self, params: dict[str, Any]) -> dict[str, Any]:
        session = await self._session(params.get("sessionId"))
        await self._engine.attach_mcp(session.id, mcp_servers.server_specs(params.get("mcpServers")))
        replay = params.get("replayFrom")
        if isinstance(replay, dict) and replay.get("type") == "start":
            await self._replay(session)
        return await self._opened(session, False)

    async def _replay(self, session: Session) -> None:
        """Send the whole conversation as updates, oldest first, before the caller answers."""
        for message in await self._engine.conversation(session.id):
            for update in t.replay(self.relay.shapes, session.root, message):
                self.relay.send(session.id, update)

    async def _close(self, params: dict[str, Any]) -> dict[str, Any]:
        """Cancel the session's turn, then stop relaying it; closing a session that does not exist succeeds (draft)."""
        session = await self._existing(params.get("sessionId"))
        if session is None:
            return {}
        open_ = self.relay.sessions.get(session.id)
        if not await self._engine.settled(session.id):
            if open_ is None:
                await self._engine.stop_tree(session.id)
            else:
                # As `session/cancel`: the turn's last updates and its end (v2 idle `cancelled`, v1 the prompt's
                # answer) go out before the close's answer, as the draft requires.
                ended = open_.turn.turn_end()
                await open_.turn.cancel()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ended), DELETE_WAIT)
        self.relay.close(session.id)
        await self._engine.detach_mcp(session.id)
        return {}

    async def _delete(self, params: dict[str, Any]) -> dict[str, Any]:
        """Delete the session and its children; deleting one that does not exist succeeds silently (draft)."""
        session = await self._existing(params.get("sessionId"))
        if session is None:
            return {}
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._engine.stop_tree(session.id), DELETE_WAIT)
        self.relay.close(session.id)
        await self._engine.remove_session(session.id, with_children=True)
        return {}

    async def _list(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd, cursor = params.get("cwd"), params.get("cursor")
        page = await self._engine.list_sessions(cursor)
        infos = [b.wire(history.session_info(i.session)) for i in page.items if cwd is None or i.session.root == cwd]
        result: dict[str, Any] = {"sessions": infos}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    # Config -----------------------------------------------------------------------------------------------------

    async def _set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        session = await self._session(params.get("sessionId"))
        config_id, value = params.get("configId"), params.get("value")
        if config_id == "network" and isinstance(value, bool):
            value = "on" if value else "off"
        if not isinstance(value, str):
            raise RpcError(INVALID_PARAMS, "this option takes a value id")
        if config_id in SANDBOX_OPTION_IDS:
            refusal = self._engine.choose_sandbox(session.id, config_id, value)
            if refusal is not None:
                raise RpcError(INVALID_PARAMS, refusal)
        elif config_id == "mode":
            self._set_permission_mode(session.id, value)
        elif config_id in ("model", "reasoning"):
            if config_id == "model":
                session = await self._engine.patch_session(session.id, model=value)
            else:
                session = await self._engine.patch_session(session.id, reasoning=value)
        else:
            raise RpcError(INVALID_PARAMS, "unknown config option")
        return {"configOptions": b.wire(options.config_options(self._engine, self.relay.shapes, session))}

    async def _set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        session = await self._session(params.get("sessionId"))
        self._set_permission_mode(session.id, str(params.get("modeId")))
        return {}

    def _set_permission_mode(self, session_id: str, mode: str) -> None:
        modes: dict[str, PermissionMode] = {"ask": "ask", "auto": "auto"}
        if mode not in modes:
            raise RpcError(INVALID_PARAMS, "the mode is ask or auto")
        self._engine.set_permission_mode(session_id, modes[mode])

    # Turns ------------------------------------------------------------------------------------------------------

    async def _prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session = await self._session(params.get("sessionId"))
        parts = b.prompt_parts(list(params.get("prompt") or []))
        if isinstance(parts, str):
            raise RpcError(INVALID_PARAMS, parts)
        if self._engine.is_busy(session.id):
            raise RpcError(INVALID_REQUEST, "a turn is already running in this session")
        relay, sid = self.relay, session.id
        open_ = relay.open(session)
        turn = open_.turn
        v2 = relay.shapes.state_updates
        skill = await self._skill_command(session, parts)
        if v2:
            relay.hold(sid)
        open_.user_message_id = None
        try:
            started = await turn.start_turn(skill or InputContent(content=parts))
        finally:
            if v2:
                relay.release_soon(sid)  # runs after the peer queued our answer (relay.py module doc)
        if not isinstance(started, SendInputStarted):  # queued behind a run that started meanwhile
            raise RpcError(INVALID_REQUEST, "a turn is already running in this session")
        if v2:
            # The draft's receipt: the id of the inserted user message, which its `user_message` update carries too
            # (the engine commits it before `start_turn` returns); an alpha.2 client ignores the member.
            if open_.user_message_id is None:
                raise RpcError(INTERNAL_ERROR, "the prompt was not recorded")
            return {"messageId": open_.user_message_id}
        # Made after the run started, so only this turn's end resolves it (a settled end needs the run's end first).
        ended = turn.turn_end()
        try:
            last = await asyncio.shield(ended)  # the children's reports continue the turn
        except asyncio.CancelledError:
            # The client cancelled the request or went away: stop the turn (and its children) too.
            await self._engine.stop_tree(sid)
            raise
        stop, outcome = relay.stop_reason(last), last.last_run.outcome
        if stop != "cancelled" and isinstance(outcome, RunOutcomeFailed) and outcome.code != "max_rounds":
            raise RpcError(INTERNAL_ERROR, turn_failure(outcome))
        return {"stopReason": stop}

    async def _skill_command(self, session: Session, parts: list[ContentPart]) -> InputSkill | None:
        """A prompt that is one `/name arguments` text naming one of the session's skills runs that skill."""
        if len(parts) != 1 or not isinstance(parts[0], ContentText):
            return None
        ref = (await self._engine.skills(session)).command(parts[0].text)
        return InputSkill(skill=ref) if ref is not None else None

    async def cancel(self, params: Any) -> None:
        """The version's cancel notification: stop the session's run and its children's, if any."""
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        open_ = self.relay.sessions.get(session_id) if isinstance(session_id, str) else None
        if open_ is not None:
            with contextlib.suppress(EngineError):
                await open_.turn.cancel()
        elif isinstance(session_id, str) and _SESSION_ID.match(session_id):
            with contextlib.suppress(EngineError):
                await self._engine.stop_tree(session_id)
