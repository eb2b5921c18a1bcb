"""`AcpAgent`: one ACP connection (any transport's `Peer`) to the hub's sessions, through one `HubClient`.

    facts = AgentFacts("claude")  # what `initialize` says of the agent `session/new` opens
    connection = AcpAgent(peer, hub.client(ClientInfo("zed", transport="stdio")), handshake=Handshake(facts))
    ...                                  # the peer runs; the client calls initialize, session/new, session/prompt, …
    await connection.aclose()            # detach from everything

Every ACP face serves this one agent: `omniagent acp [--agent ID]` on stdio, the hub's `/acp` over HTTP and
WebSocket, `acp --hub`. Decisions (docs/acp.md, "What it offers"):
- Versions (`serving/acp/handshake.py`): 2 when asked for 2 or more, else 1. What `initialize` advertises depends
  on the agent (`AgentFacts`: our engine also forks, loads and names auth methods), never how ACP is spoken.
- `session/new` opens a session of the connection's default agent, or of `_meta.omniagent.agent` when the params
  name one (an id of `omniagent agents`); the client is its controller. `mcpServers` become the session's MCP servers.
- `session/load` (v1) and `session/resume` with `replayFrom: {type: "start"}` (v2) attach to a hub session as its
  controller and replay its kept events before answering; a plain `session/resume` attaches without replay. A
  session the hub has only in its index (an earlier process's, or one that ended) is first resumed by its agent
  (`Hub.resume`: its resume token, its directory, the same id; the request's `mcpServers` as its MCP servers), with
  its history where the agent tells one (our engine's stored conversation).
- `session/fork` (agents that fork) opens a new session of the source's agent from its resume token, history first;
  `session/delete` closes a session for every client and forgets it (our engine removes it from its store).
- The multi-client extension (ACP's draft RFD "multi-client session attach"): `session/attach {sessionId, role:
  controller|observer, historyPolicy: full|pending_only|none, after?}` (`after`: the last sequence the client has;
  it wins over `historyPolicy`) replays, answers, then follows live; `session/detach {sessionId}` stops following
  (the session goes on). Advertised as `sessionCapabilities.attach` (v1) / `capabilities.session.attach` (v2).
- Every `session/update` of an event carries `_meta.omniagent.sequence`.
- A v1 `session/prompt` answers when the turn it started, steered or was queued into ends, with its stop reason (a
  failed turn is error -32603 naming the failure); a v2 prompt answers its receipt `{messageId}` once the session took
  it (the agent's own id for the message where it names one; `_meta.omniagent` says `promptId`, how it was delivered
  and the `userMessageId` of the `user_message` that echoes it), and the turn ends with `state_update` idle. Two
  controllers' prompts follow the session loop's turn rules (queue or steer).
- `session/close` ends the session for every client; an observer may not prompt, answer, cancel, configure or close
  (-32600).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from msgspec.structs import replace

from omniagent.hub.hub import HubClient
from omniagent.hub.session import Attachment, History, Role
from omniagent.protocols.acp import methods
from omniagent.protocols.acp.methods import ValidationError
from omniagent.protocols.acp.versions import SPECS
from omniagent.protocols.sidecar.agents import SessionInfo
from omniagent.runtime.errors import (
    AgentError,
    AuthRequired,
    InvalidConfiguration,
    InvalidRequest,
    NotInstalled,
    ResumeFailed,
    UnknownSession,
    UnsupportedFeature,
)
from omniagent.runtime.options import OpenOptions
from omniagent.serving.acp import builders as b
from omniagent.serving.acp.follow import Follower, SessionEnded, prompt_message_id
from omniagent.serving.acp.handshake import Handshake
from omniagent.serving.acp.requests import agent_of, directory, listed, mcp_servers, prompt_text
from omniagent.serving.acp.shapes import Shapes
from omniagent.serving.acp.view import config_options, failure, mode_option, stop_reason, v1_modes
from omniagent.wire.jsonrpc import Peer
from omniagent.wire.messages import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    RpcError,
)

log = logging.getLogger(__name__)

ATTACH = "session/attach"
DETACH = "session/detach"
# The operations served, by the names of `protocols.acp.versions` (the version's spelling is looked up there).
_OPERATIONS = (
    *("authenticate", "logout", "new", "load", "resume", "fork", "close", "delete", "list", "prompt"),
    *("set_mode", "set_model", "set_config_option"),
)
_ERRORS: list[tuple[type[AgentError], int]] = [
    (UnknownSession, RESOURCE_NOT_FOUND),
    (InvalidRequest, INVALID_REQUEST),
    (ResumeFailed, INVALID_REQUEST),
    (InvalidConfiguration, INVALID_PARAMS),
    (UnsupportedFeature, INVALID_PARAMS),
    (NotInstalled, INVALID_PARAMS),
    (AuthRequired, AUTH_REQUIRED),
]
_HISTORIES = {h.value: h for h in History}
_ROLES = {r.value: r for r in Role}
_Handler = Callable[[dict[str, Any]], Awaitable[Any]]


def rpc_error(exc: AgentError) -> RpcError:
    """A runtime refusal as an ACP error (the runtime's sentences are redacted of secrets)."""
    code = next((code for kind, code in _ERRORS if isinstance(exc, kind)), INTERNAL_ERROR)
    if isinstance(exc, UnknownSession):
        return RpcError(code, str(exc), {"sessionId": exc.session})
    return RpcError(code, str(exc))


class AcpAgent:
    """Serves one ACP connection over `peer` with the hub sessions `client` opens or attaches to.

    `handshake` answers `initialize` (a face may have answered the first one already, before this existed) and says
    the agent `session/new` opens unless its params name another (`_meta.omniagent.agent`). `attach_to` names a hub
    session the connection's first `session/new` joins instead of opening one (controller, its whole kept history
    after the answer): how an editor that only knows `session/new` joins a session. `alone`: no other client can
    answer this one's sessions (a stdio face), so a question this client cannot show is declined rather than left
    open for another client.
    """

    def __init__(
        self,
        peer: Peer,
        client: HubClient,
        *,
        handshake: Handshake,
        attach_to: str | None = None,
        alone: bool = False,
    ) -> None:
        self.peer = peer
        self.client = client
        self.handshake = handshake
        self.default_agent = handshake.facts.agent
        self._attach_to = attach_to
        self._alone = alone
        self._followers: dict[str, Follower] = {}
        peer.on_request("initialize", self._initialize)
        names = {name for spec in SPECS.values() for op, name in spec.method_names.items() if op in _OPERATIONS}
        for name in names:
            peer.on_request(name, self._route(name))
        peer.on_request(ATTACH, self._route(ATTACH))
        peer.on_request(DETACH, self._route(DETACH))
        peer.on_notification("session/cancel", self._cancel)

    @property
    def shapes(self) -> Shapes:
        return self.handshake.shapes

    # --- initialize and auth ---------------------------------------------------------------------------------------

    async def _initialize(self, params: Any) -> dict[str, Any]:
        return self.handshake.initialize(params)

    async def _authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        """Whether the provider a method names has its key now (our engine's methods: one per provider lacking
        one); another agent names no method, as it logs in its own way."""
        facts = self.handshake.facts
        if not facts.engine:
            raise RpcError(INVALID_PARAMS, f"{facts.agent} logs in its own way: see `omniagent agents`")
        if params.get("methodId") in {key.provider_id for key in facts.missing_keys()}:
            raise RpcError(AUTH_REQUIRED, "no key for this provider: set its environment variable and restart")
        return {}

    async def _logout(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {}  # keys come from the environment or the engine's own key file: nothing to forget here

    # --- routing ---------------------------------------------------------------------------------------------------

    def _route(self, method: str) -> _Handler:
        async def run(params: Any) -> Any:
            spec = self.handshake.spec
            if spec is None:
                raise RpcError(INVALID_REQUEST, "initialize first")
            operation = next((op for op, name in spec.method_names.items() if name == method), method)
            handler = self._handlers().get(operation)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            model = spec.table.agent_requests.get(method)
            if model is not None:
                try:
                    methods.parse(model[0], params if params is not None else {})
                except ValidationError:
                    raise RpcError(INVALID_PARAMS, f"invalid params for {method}") from None
            if params is not None and not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, f"invalid params for {method}")
            try:
                return await handler(params or {})
            except AgentError as exc:
                raise rpc_error(exc) from None

        return run

    def _handlers(self) -> dict[str, _Handler]:
        return {
            "authenticate": self._authenticate,
            "logout": self._logout,
            "new": self._new,
            "load": self._load,
            "resume": self._resume,
            "fork": self._fork,
            "close": self._close,
            "delete": self._delete,
            "list": self._list,
            "prompt": self._prompt,
            "set_mode": self._set_mode,
            "set_model": self._set_model,
            "set_config_option": self._set_config_option,
            ATTACH: self._attach,
            DETACH: self._detach,
        }

    # --- sessions --------------------------------------------------------------------------------------------------

    async def _new(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._attach_to is not None:
            # The connection was made to join a session (`omniagent acp --hub URL --session S`): an editor's
            # `session/new` is answered with that session, its history following the answer, then its live events.
            session_id, self._attach_to = self._attach_to, None
            await self._unfollow(session_id)
            return self._answered(self.client.attach(session_id, Role.CONTROLLER), seen=False)
        cwd = directory(params)
        agent = agent_of(params) or self.default_agent
        options = OpenOptions(mcp_servers=mcp_servers(params.get("mcpServers")))
        return self._answered(await self.client.open(agent, cwd, options), seen=True)

    async def _fork(self, params: dict[str, Any]) -> dict[str, Any]:
        """A new session of the source's agent working in the request's `cwd`, with the source's whole conversation
        (told first, as history); the source goes on as it was."""
        source = str(params.get("sessionId"))
        agent, token = self._forkable(source)
        options = OpenOptions(fork=token, history=True, mcp_servers=mcp_servers(params.get("mcpServers")))
        return self._answered(await self.client.open(agent, directory(params), options), seen=True)

    def _forkable(self, session_id: str) -> tuple[str, str]:
        """The agent of `session_id` (live here or in the index) and its resume token, which a fork starts from."""
        hub = self.client.hub
        try:
            live = hub.session(session_id)
        except UnknownSession:
            entry = hub.indexed(session_id)
            if entry is None:
                raise RpcError(RESOURCE_NOT_FOUND, "unknown session", {"sessionId": session_id}) from None
            agent, token = entry.agent, entry.resume_token
        else:
            agent, token = live.agent, live.info().resume_token
        if token is None:
            raise RpcError(INVALID_PARAMS, f"{agent} cannot fork this session")
        return agent, token

    def _answered(self, attachment: Attachment, *, seen: bool) -> dict[str, Any]:
        """A `session/new` answer for `attachment`; its events follow the answer."""
        follower = self._follow(attachment, catch_up=False, seen=attachment.info() if seen else None)
        follower.hold()
        follower.start()
        try:
            result = self._described(attachment)
            result["sessionId"] = attachment.id
            return result
        finally:
            follower.release_soon()
            follower.tell_commands_soon()

    async def _load(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = await self._resumed(params)
        return await self._attach_and_answer(session_id, Role.CONTROLLER, History.FULL, None)

    async def _resume(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = await self._resumed(params)
        replay = params.get("replayFrom")
        history = History.FULL if isinstance(replay, dict) and replay.get("type") == "start" else History.NONE
        return await self._attach_and_answer(session_id, Role.CONTROLLER, history, None)

    async def _resumed(self, params: dict[str, Any]) -> str:
        """The session a load or resume names, live in the hub (resumed by its agent when only the index has it)."""
        session_id = str(params.get("sessionId"))
        options = OpenOptions(mcp_servers=mcp_servers(params.get("mcpServers")))
        await self.client.resume(session_id, options)
        return session_id

    async def _attach(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        role = _ROLES.get(params.get("role", Role.CONTROLLER.value))
        history = _HISTORIES.get(params.get("historyPolicy", History.FULL.value))
        after = params.get("after")
        if not isinstance(session_id, str) or role is None or history is None:
            raise RpcError(
                INVALID_PARAMS,
                "session/attach takes sessionId, role (controller|observer) and historyPolicy (full|pending_only|none)",
            )
        if after is not None and (not isinstance(after, int) or isinstance(after, bool) or after < 0):
            raise RpcError(INVALID_PARAMS, "after is the last sequence the client has (an integer ≥ 0)")
        result = await self._attach_and_answer(session_id, role, history, after)
        result["sessionId"] = session_id
        result["role"] = role.value
        return result

    async def _attach_and_answer(
        self, session_id: str, role: Role, history: History, after: int | None
    ) -> dict[str, Any]:
        await self._unfollow(session_id)
        attachment = self.client.attach(session_id, role, after=after, history=history)
        # The answer tells the session's options as they are now: the replay and what follows the answer tell them
        # again only where they differ (an agent just resumed reports its options as it settles, after the answer).
        # Not its title, which the answer does not carry: the replay tells it.
        primes = history is History.FULL and after is None  # a replay from the start, to a client that has none
        follower = self._follow(attachment, catch_up=True, primes=primes, seen=replace(attachment.info(), title=None))
        follower.start()
        try:
            await follower.caught_up()
            result = self._described(attachment)
            result.setdefault("_meta", {})["omniagent"] |= {"cursor": attachment.cursor, "missed": attachment.missed}
            return result
        finally:
            follower.after_replay_soon()

    async def _detach(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params.get("sessionId")
        if not isinstance(session_id, str):
            raise RpcError(INVALID_PARAMS, "session/detach takes sessionId")
        await self._unfollow(session_id)
        self.client.detach(session_id)
        return {}

    async def _delete(self, params: dict[str, Any]) -> dict[str, Any]:
        """The session closed for every client and gone from the hub and its index; deleting a session that does
        not exist succeeds (the draft)."""
        session_id = params.get("sessionId")
        if isinstance(session_id, str):
            await self._unfollow(session_id)
            self.client.detach(session_id)
            await self.client.hub.forget(session_id)
        return {}

    async def _close(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._gone(params.get("sessionId")):
            return {}  # the draft: closing a session that does not exist (any more) succeeds
        attachment = self._attachment(params)
        await attachment.close()
        await self._unfollow(attachment.id)
        self.client.detach(attachment.id)
        return {}

    async def _list(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        infos: list[dict[str, Any]] = []
        for session in self.client.hub.sessions():
            extra = {"activity": session.activity.value, "clients": len(session.clients)}
            info = session.info()
            newest = session.log.since(session.log.last - 1).events
            when = newest[-1].occurred_at.secs_since_epoch if newest else session.created_at
            infos.append(listed(session.id, session.directory, info.title, session.agent, when, extra))
        for entry in self.client.hub.past():
            # Not ended: open in another process sharing the hub's folder, or its process died with it open.
            extra = {
                "activity": "ended" if entry.ended else "elsewhere",
                "ended": entry.ended,
                "resumable": entry.resume_token is not None,
            }
            infos.append(listed(entry.id, entry.directory, entry.title, entry.agent, entry.created_at, extra))
        return {"sessions": [i for i in infos if cwd is None or i["cwd"] == cwd]}

    def _described(self, attachment: Attachment) -> dict[str, Any]:
        """What the answers to new, load, resume and attach say of the session: its config options (v1: and its
        modes) and, in `_meta.omniagent`, its agent."""
        info = attachment.info()
        result: dict[str, Any] = {"configOptions": b.wire(config_options(self.shapes, info))}
        if not self.shapes.state_updates:
            modes = v1_modes(info)
            if modes is not None:
                result["modes"] = b.wire(modes)
        result["_meta"] = {"omniagent": {"agent": attachment.session.agent, "role": attachment.role.value}}
        return result

    # --- turns -----------------------------------------------------------------------------------------------------

    async def _prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        attachment = self._attachment(params)
        follower = self._followers.get(attachment.id)
        if follower is None or follower.ended:
            raise RpcError(INVALID_REQUEST, "the session has ended")
        text = prompt_text(params.get("prompt"))
        if self.shapes.state_updates:
            return await self._prompt_v2(attachment, follower, text)
        delivery = await attachment.prompt(text)
        try:
            stop = await follower.turn_end(delivery)
        except SessionEnded as exc:
            raise RpcError(INTERNAL_ERROR, f"the session ended before the turn did: {exc.args[0]}") from None
        except asyncio.CancelledError:
            # The client withdrew its prompt (or went away): the turn stops too.
            with contextlib.suppress(AgentError):
                await asyncio.shield(attachment.cancel())
            raise
        failed = failure(stop)
        if failed is not None:
            raise RpcError(INTERNAL_ERROR, f"the turn failed: {failed}")
        return {"stopReason": stop_reason(stop)}

    async def _prompt_v2(self, attachment: Attachment, follower: Follower, text: str) -> dict[str, Any]:
        """`{messageId}` (the current draft's receipt) once the session took the prompt; then (after the answer,
        before the turn's updates) the `user_message` that echoes it."""
        follower.hold()
        try:
            delivery = await attachment.prompt(text)
            message_id = await prompt_message_id(attachment.session, delivery)
            m = self.shapes.models
            echo = m.SessionUpdateUserMessage(message_id=message_id, content=[m.ContentBlockText(text=text)])
            asyncio.get_running_loop().call_soon(follower.send, echo)
        finally:
            follower.release_soon()
        how = type(delivery.kind).__name__.lower()
        meta = {"promptId": delivery.prompt_id, "delivery": how, "userMessageId": message_id}
        return {"messageId": message_id, "_meta": {"omniagent": meta}}

    async def _cancel(self, params: Any) -> None:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        attachment = self.client.attachment(session_id) if isinstance(session_id, str) else None
        if attachment is None or attachment.role is not Role.CONTROLLER:
            return  # a notification has no answer: nothing to cancel here
        with contextlib.suppress(AgentError):
            await attachment.cancel()

    # --- configuration ---------------------------------------------------------------------------------------------

    async def _set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        attachment = self._attachment(params)
        option, value = params.get("configId"), params.get("value")
        if not isinstance(option, str) or not isinstance(value, str | bool):
            raise RpcError(INVALID_PARAMS, "set_config_option takes a configId and a value id (or a boolean)")
        await attachment.configure(option, value)
        # The agent's confirmation reaches the session's info with its next event: answer with the value set.
        info = attachment.info()
        now = replace(info.configuration, options={**info.configuration.options, option: value})
        return {"configOptions": b.wire(config_options(self.shapes, replace(info, configuration=now)))}

    async def _set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        attachment = self._attachment(params)
        option = mode_option(attachment.info())
        if option is None:
            raise RpcError(INVALID_PARAMS, "this agent has no modes")
        await attachment.configure(option.id, str(params.get("modeId")))
        return {}

    async def _set_model(self, params: dict[str, Any]) -> dict[str, Any]:
        attachment = self._attachment(params)
        await attachment.configure("model", str(params.get("modelId")))
        return {}

    # --- following -------------------------------------------------------------------------------------------------

    def _attachment(self, params: dict[str, Any]) -> Attachment:
        session_id = params.get("sessionId")
        attachment = self.client.attachment(session_id) if isinstance(session_id, str) else None
        if attachment is None or attachment.detached:
            raise RpcError(
                RESOURCE_NOT_FOUND, "unknown session: open, load or attach it first", {"sessionId": session_id}
            )
        return attachment

    def _gone(self, session_id: Any) -> bool:
        """Whether `session_id` names no session of the hub, or one that has ended (a live session this
        connection is not attached to is neither: closing it needs an attachment)."""
        if not isinstance(session_id, str):
            return False
        try:
            return self.client.hub.session(session_id).closed
        except UnknownSession:
            return True

    def _follow(
        self, attachment: Attachment, *, catch_up: bool, primes: bool = False, seen: SessionInfo | None = None
    ) -> Follower:
        follower = Follower(
            self.peer,
            self.shapes,
            attachment,
            elicits=self.handshake.elicits,
            alone=self._alone,
            catch_up=catch_up,
            primes=primes,
            seen=seen,
            on_end=self._ended,
        )
        self._followers[attachment.id] = follower
        return follower

    def _ended(self, follower: Follower) -> None:
        if self._followers.get(follower.session_id) is follower:
            del self._followers[follower.session_id]

    async def _unfollow(self, session_id: str) -> None:
        follower = self._followers.pop(session_id, None)
        if follower is not None:
            await follower.stop()

    async def reattach(self, session_id: str, after: int) -> None:
        """Follow `session_id` again from after sequence `after` (an SSE stream reconnected with Last-Event-ID),
        in the role this connection had on it (controller when it had none). Raises: `UnknownSession`."""
        earlier = self.client.attachment(session_id)
        role = earlier.role if earlier is not None else Role.CONTROLLER
        await self._unfollow(session_id)
        attachment = self.client.attach(session_id, role, after=after)
        self._follow(attachment, catch_up=False).start()

    def turning(self) -> list[Attachment]:
        """The attachments (as controller) whose session runs a turn now: what EOF must stop."""
        return [
            f.attachment
            for f in self._followers.values()
            if f.view.in_turn and f.attachment.role is Role.CONTROLLER and not f.attachment.detached
        ]

    async def aclose(self) -> None:
        """Stop following every session and let the client go (detach; close what it owns)."""
        followers, self._followers = list(self._followers.values()), {}
        for follower in followers:
            await follower.stop()
        await self.client.aclose()
