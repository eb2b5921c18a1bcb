"""An ACP conformance kit: the checks the ACP conformance kit (agentclientprotocol/acp-tck) makes of an agent, written
from the schemas we keep, run against any command that starts an ACP agent on stdio.

Why here: the kit itself is on no package registry (CI installs only from registries), so these are the equivalent
checks, drawn from the current draft schema (`protocols/acp/schema/acp-v2.schema.json`), the v1 schema and the
acp-tck requirement list (MANDATORY / CAPABILITY / ADVISORY tiers, the same split).

How: `Launcher` says how to start the agent (argv, environment, a workspace), which versions it speaks, which
capabilities it is expected to advertise per version (a check compares them with its `initialize` answer, so the
declaration cannot drift), and how to get a short turn and a turn that runs until cancelled (`prepare`: our
fake-LLM agent scripts the model there; a real agent needs nothing, its prompts do it). `cases(versions,
capabilities)` lists the (version, Check) pairs that apply; `run(check, launcher, version)` runs one. Every
connection a check opens is validated when it closes: each stdout line is one UTF-8 JSON-RPC 2.0 message, and every
message in both directions fits the version's schema(s) (`agent_harness.check_message`: v2 against the current
draft and alpha.2).

A check talks raw JSON lines through `Connection` (not our runtime's ACP client): the kit must see the wire as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, Literal

from tests.faces.acp.agent_harness import SCHEMA_DIR, check_message

WAIT = 30.0  # seconds: bound on any one wait for the agent
CLOSE_WAIT = 10.0  # seconds the agent gets to exit once its stdin is closed

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
RESOURCE_NOT_FOUND = -32002
AUTH_REQUIRED = -32000

Turn = Literal["short", "long", "permission"]


class Tier(Enum):
    """How binding a check is (acp-tck's tiers)."""

    MANDATORY = "mandatory"  # every agent of the version
    CAPABILITY = "capability"  # every agent that advertises the check's capability
    ADVISORY = "advisory"  # a SHOULD: fails only a launcher that holds itself to them (`Launcher.advisory`)


@dataclass(frozen=True)
class Launcher:
    """A command that starts an ACP agent on stdio, and what the kit needs to know to drive it."""

    name: str
    argv: Sequence[str]
    workspace: Path  # an existing absolute directory: the cwd of the sessions the checks open
    versions: Sequence[int]  # the protocol versions it speaks; its latest is the answer to a newer request
    # Per version, the capability gates (`Check.gate` names) it is expected to advertise.
    capabilities: Mapping[int, frozenset[str]]
    env: Mapping[str, str] | None = None
    # Called before each prompt: "short" (a turn that ends by itself), "long" (one that runs until cancelled) or
    # "permission" (one in which the agent asks `session/request_permission` once, and ends whatever the answer).
    prepare: Callable[[Turn], Awaitable[None]] | None = None
    prompts: Mapping[Turn, str] = field(
        default_factory=lambda: {
            "short": "Reply with the single word: hello.",
            "long": "Count from 1 to 100000, one number per line, without skipping any.",
            "permission": "Create the file kit-permission.txt holding one line.",
        }
    )
    advisory: bool = False  # advisory checks fail (else they pass whatever they find)
    logout: bool = False  # the checks may call logout (it may drop a real agent's credentials)

    async def turn(self, kind: Turn) -> str:
        """The prompt text for a turn of `kind`, once the agent is ready to give it."""
        if self.prepare is not None:
            await self.prepare(kind)
        return self.prompts[kind]


# The connection -------------------------------------------------------------------------------------------------------


class Connection:
    """One ACP connection to the agent: raw JSON lines, every message kept in order, the agent's requests answered
    (a permission request with its first `allow` option, or `permission_outcome` when a check sets one; anything else
    with -32601)."""

    def __init__(self, proc: asyncio.subprocess.Process, version: int) -> None:
        self.proc = proc
        self.version = version
        self.transcript: list[tuple[str, Any]] = []  # ("in": client → agent | "out", message) in wire order
        self.lines: list[bytes] = []  # every stdout line as read
        self.init: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self.probes: set[Any] = set()  # ids of the requests the kit sent off-schema on purpose
        self.permission_outcome: dict[str, Any] | None = None  # set: every permission request is answered this
        self._reader = asyncio.ensure_future(self._read())

    # Sending --------------------------------------------------------------------------------------------------------

    async def send(self, message: Any, *, probe: bool = False) -> None:
        """Write one message (or batch) as one line; a `probe` is off-schema on purpose (not validated: the answers to
        its requests are known by their ids)."""
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and not probe:
                self.transcript.append(("in", item))
            elif isinstance(item, dict) and "method" in item and "id" in item:
                self.probes.add(item["id"])
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def call(
        self, method: str, params: Any = None, *, request_id: Any = None, probe: bool = False
    ) -> dict[str, Any]:
        """Send a request (a `probe`: off-schema on purpose); the whole response message (`result` or `error`)."""
        request_id = next(self._ids) if request_id is None else request_id
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        if probe:
            self.probes.add(request_id)
        await self.send(message, probe=probe)
        async with asyncio.timeout(WAIT):
            return await answer

    async def result(self, method: str, params: Any = None) -> dict[str, Any]:
        """A request's result; an error answer fails the check."""
        response = await self.call(method, params)
        assert "result" in response, f"{method} answered {response}"
        assert isinstance(response["result"], dict), f"{method}: the result is not an object: {response}"
        return response["result"]

    async def error(self, method: str, params: Any = None, *, probe: bool = False) -> dict[str, Any]:
        """A request's error object; a result fails the check."""
        response = await self.call(method, params, probe=probe)
        assert "error" in response, f"{method} should have failed: {response}"
        return dict(response["error"])

    async def notify(self, method: str, params: Any, *, probe: bool = False) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params}, probe=probe)

    # Reading ----------------------------------------------------------------------------------------------------------

    def received(self) -> list[Any]:
        """The agent's messages so far, in order."""
        return [m for d, m in self.transcript if d == "out"]

    def updates(self, session_id: str, start: int = 0) -> list[dict[str, Any]]:
        """The `session/update` payloads for `session_id` among the agent's messages from index `start` on."""
        return [
            m["params"]["update"]
            for m in self.received()[start:]
            if m.get("method") == "session/update" and m.get("params", {}).get("sessionId") == session_id
        ]

    async def wait_for(self, found: Callable[[], Any]) -> Any:
        """Wait until `found()` is truthy (checked after each message the agent sends); its value."""
        async with asyncio.timeout(WAIT):
            while not (value := found()):
                self._changed.clear()
                await self._changed.wait()
        return value

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            self.lines.append(line)
            try:
                message = json.loads(line)
            except ValueError:
                continue  # the transport check names it
            for item in message if isinstance(message, list) else [message]:
                self.transcript.append(("out", item))
                await self._handle(item)
            self._changed.set()
        self._changed.set()
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(AssertionError("the agent closed its stdout before answering"))

    async def _handle(self, item: Any) -> None:
        if not isinstance(item, dict):
            return
        if "method" in item and "id" in item:
            await self.send({"jsonrpc": "2.0", "id": item["id"], **self._answer(item)})
        elif "method" not in item:
            answer = self._waiting.pop(item.get("id"), None)
            if answer is not None and not answer.done():
                answer.set_result(item)

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["method"] == "session/request_permission" and self.permission_outcome is not None:
            return {"result": {"outcome": self.permission_outcome}}
        if request["method"] == "session/request_permission":
            options = request.get("params", {}).get("options") or []
            allow = [o["optionId"] for o in options if str(o.get("kind", "")).startswith("allow")]
            outcome = {"outcome": "selected", "optionId": allow[0]} if allow else {"outcome": "cancelled"}
            return {"result": {"outcome": outcome}}
        return {"error": {"code": METHOD_NOT_FOUND, "message": f"the kit does not serve {request['method']}"}}

    # Session helpers --------------------------------------------------------------------------------------------------

    async def new_session(self, cwd: Path, **extra: Any) -> str:
        """A new session in `cwd` (v1 sends the `mcpServers` it requires); its id."""
        params: dict[str, Any] = {"cwd": str(cwd), **extra}
        if self.version == 1:
            params.setdefault("mcpServers", [])
        result = await self.result("session/new", params)
        session_id = result.get("sessionId")
        assert isinstance(session_id, str) and session_id, f"session/new gave no session id: {result}"
        return session_id

    def prompt_params(self, session_id: str, text: str) -> dict[str, Any]:
        return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}

    async def turn(self, launcher: Launcher, session_id: str, kind: Turn = "short") -> TurnSeen:
        """Prompt and wait for the turn's end: v1 the prompt's answer, v2 the idle `state_update` after it."""
        start = len(self.received())
        response = await self.call("session/prompt", self.prompt_params(session_id, await launcher.turn(kind)))
        assert "result" in response, f"session/prompt answered {response}"
        if self.version == 1:
            return TurnSeen(response["result"], self.updates(session_id, start), start)
        await self.wait_for(lambda: _idle_after(self.updates(session_id, start)))
        return TurnSeen(response["result"], self.updates(session_id, start), start)

    async def in_flight(self, launcher: Launcher, session_id: str) -> Pending:
        """Start a long turn and wait until it is under way (v2 `running`, v1 its first update)."""
        start = len(self.received())
        text = await launcher.turn("long")
        request_id = next(self._ids)
        params = self.prompt_params(session_id, text)
        response = asyncio.ensure_future(self.call("session/prompt", params, request_id=request_id))

        def under_way() -> bool:
            seen = self.updates(session_id, start)
            if self.version == 1:
                return bool(seen)
            return any(u.get("sessionUpdate") == "state_update" and u.get("state") == "running" for u in seen)

        await self.wait_for(lambda: under_way() or response.done())
        assert not response.done() or "result" in response.result(), f"the long prompt failed: {response.result()}"
        return Pending(request_id, response)

    def answer_index(self, request_id: Any) -> int:
        """Where among the agent's messages the answer to `request_id` is."""
        return next(i for i, m in enumerate(self.received()) if "method" not in m and m.get("id") == request_id)

    def update_index(self, update: dict[str, Any]) -> int:
        """Where among the agent's messages the `session/update` carrying `update` (that very object) is."""
        return next(
            i
            for i, m in enumerate(self.received())
            if m.get("method") == "session/update" and m.get("params", {}).get("update") is update
        )


@dataclass(frozen=True)
class Pending:
    """A prompt sent and not yet answered: its request id and its answer to come."""

    request_id: Any
    answer: asyncio.Future[dict[str, Any]]


@dataclass(frozen=True)
class TurnSeen:
    """What one prompt brought: its result, the session's updates from the prompt on, where they started."""

    result: dict[str, Any]
    updates: list[dict[str, Any]]
    start: int

    @property
    def stop_reason(self) -> Any:
        if "stopReason" in self.result:
            return self.result["stopReason"]
        idle = _idle_after(self.updates)
        return idle.get("stopReason") if idle else None


def _idle_after(updates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first idle `state_update` that ends a turn (one after a `running`)."""
    running = False
    for update in updates:
        if update.get("sessionUpdate") != "state_update":
            continue
        if update.get("state") == "running":
            running = True
        elif update.get("state") == "idle" and running:
            return update
    return None


@contextlib.asynccontextmanager
async def connect(
    launcher: Launcher, version: int, *, asked: int | None = None, capabilities: Mapping[str, Any] | None = None
) -> AsyncIterator[Connection]:
    """Start the agent, send `initialize` asking for `asked` (default `version`), check the answer is `version`, and
    yield the connection; on leaving, close stdin, wait for the exit and validate everything that passed."""
    proc = await asyncio.create_subprocess_exec(
        *launcher.argv,
        cwd=launcher.workspace,
        env=dict(launcher.env) if launcher.env is not None else None,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=2**24,
    )
    connection = Connection(proc, version)
    try:
        params: dict[str, Any] = {"protocolVersion": version if asked is None else asked}
        if version == 2:
            params |= {"info": {"name": "acp-conformance", "version": "1"}, "capabilities": dict(capabilities or {})}
        else:
            params |= {"clientInfo": {"name": "acp-conformance", "version": "1"}}
            fs = {"readTextFile": False, "writeTextFile": False}
            params["clientCapabilities"] = dict(capabilities or {"fs": fs, "terminal": False})
        connection.init = await connection.result("initialize", params)
        assert connection.init.get("protocolVersion") == version, (
            f"asked {params['protocolVersion']}: {connection.init}"
        )
        yield connection
    finally:
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await connection._reader
                await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    check_connection(connection)


def check_connection(connection: Connection) -> None:
    """The transport and schema rules every connection keeps: one UTF-8 JSON-RPC 2.0 message (or non-empty batch)
    per line; responses only to requests sent, never to a notification; every message in both directions fits the
    version's schemas."""
    for line in connection.lines:
        text = line.decode("utf-8")  # raises on anything but UTF-8
        message = json.loads(text)
        assert isinstance(message, dict) or (isinstance(message, list) and message), f"not a message: {text!r}"
    sent = {m["id"]: m["method"] for d, m in connection.transcript if d == "in" and "method" in m and "id" in m}
    received = {m["id"]: m["method"] for d, m in connection.transcript if d == "out" and "method" in m and "id" in m}
    for direction, message in connection.transcript:
        if direction == "in":
            check_message(connection.version, message, received, side="agent")
            continue
        answer = "method" not in message
        if answer and message.get("id") is None:
            # The answer to a line that was no request (the kit's empty batch): an error, never a result.
            assert "error" in message, f"a result with no id: {message}"
        elif answer and message["id"] in connection.probes:
            # An answer to a probe: only its error, if any, has a shape to check.
            if "error" in message:
                check_message(connection.version, message, {})
        else:
            assert not answer or message["id"] in sent, f"a response to no request: {message}"
            check_message(connection.version, message, sent)


# The checks -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One conformance requirement and the function that tests it."""

    id: str
    tier: Tier
    text: str
    run: Callable[[Launcher, int], Awaitable[None]]
    versions: tuple[int, ...] = (1, 2)
    gate: str | None = None  # the capability it needs (a name in GATES), None: always

    def applies(self, version: int, versions: Sequence[int], capabilities: Mapping[int, frozenset[str]]) -> bool:
        """Whether it applies to an agent speaking `versions` with these declared capabilities, in `version`."""
        if version not in self.versions or version not in versions:
            return False
        return self.gate is None or self.gate in capabilities.get(version, frozenset())


CHECKS: list[Check] = []


def check(
    check_id: str, tier: Tier, *, versions: tuple[int, ...] = (1, 2), gate: str | None = None
) -> Callable[[Callable[[Launcher, int], Awaitable[None]]], Callable[[Launcher, int], Awaitable[None]]]:
    """Register a check; its docstring is its text."""

    def register(fn: Callable[[Launcher, int], Awaitable[None]]) -> Callable[[Launcher, int], Awaitable[None]]:
        CHECKS.append(Check(check_id, tier, (fn.__doc__ or "").strip(), fn, versions, gate))
        return fn

    return register


def _path(node: Any, path: Sequence[str]) -> Any:
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _marked(node: Any) -> bool:
    return node is not None and node is not False and node != []


# A gate's name → how it shows in an initialize answer (v1, v2). None: the gate does not exist in that version.
GATES: Mapping[str, tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = {
    "session": (None, ("capabilities", "session")),
    "load": (("agentCapabilities", "loadSession"), None),
    "list": (("agentCapabilities", "sessionCapabilities", "list"), ("capabilities", "session")),
    "resume": (("agentCapabilities", "sessionCapabilities", "resume"), ("capabilities", "session")),
    "close": (("agentCapabilities", "sessionCapabilities", "close"), ("capabilities", "session")),
    "delete": (("agentCapabilities", "sessionCapabilities", "delete"), ("capabilities", "session", "delete")),
    "fork": (("agentCapabilities", "sessionCapabilities", "fork"), ("capabilities", "session", "fork")),
    "embeddedContext": (
        ("agentCapabilities", "promptCapabilities", "embeddedContext"),
        ("capabilities", "session", "prompt", "embeddedContext"),
    ),
    "logout": (("agentCapabilities", "auth", "logout"), ("authMethods",)),
}


def advertised(init: Mapping[str, Any], version: int) -> frozenset[str]:
    """The gates an initialize answer opens."""
    found = set()
    for gate, paths in GATES.items():
        path = paths[version - 1]
        if path is not None and _marked(_path(init, path)):
            found.add(gate)
    return frozenset(found)


@cache
def stop_reasons(version: int) -> frozenset[str]:
    """The stop reasons the version's schema names (v2: the current draft's idle variants)."""
    defs = json.loads((SCHEMA_DIR / f"acp-v{version}.schema.json").read_text())["$defs"]
    union = defs["StopReason"] if version == 1 else defs["IdleStateUpdate"]
    members = union.get("anyOf") or union.get("oneOf") or []
    consts = (m.get("const") or m.get("properties", {}).get("stopReason", {}).get("const") for m in members)
    return frozenset(c for c in consts if isinstance(c, str))


def known_stop(version: int, reason: Any) -> bool:
    """A stop reason the schema defines, or a custom one (`_`-prefixed); an unknown other value is reserved."""
    return isinstance(reason, str) and (reason in stop_reasons(version) or reason.startswith("_"))


def advise(launcher: Launcher, ok: bool, what: str) -> None:
    """An advisory outcome: fails only a launcher that holds itself to advisories."""
    if launcher.advisory:
        assert ok, what


# Initialization and the wire ------------------------------------------------------------------------------------


@check("init.negotiates", Tier.MANDATORY)
async def _init_negotiates(launcher: Launcher, version: int) -> None:
    """`initialize` asking for the version answers it, with the version's shapes: v2 a non-empty `info` name and
    version and object capability markers (never booleans); the advertised capabilities are the declared ones."""
    async with connect(launcher, version) as conn:
        init = conn.init
        if version == 2:
            info = init.get("info")
            assert isinstance(info, dict) and info.get("name") and info.get("version"), f"v2 needs info: {init}"
            capabilities = init.get("capabilities") or {}
            assert isinstance(capabilities, dict)
            stack = [capabilities]
            while stack:
                node = stack.pop()
                for key, value in node.items():
                    assert not isinstance(value, bool), f"v2 capability {key} is a boolean"
                    if isinstance(value, dict) and key != "_meta":
                        stack.append(value)
        assert advertised(init, version) == launcher.capabilities.get(version, frozenset()), (
            f"advertised {sorted(advertised(init, version))}, declared {sorted(launcher.capabilities[version])}"
        )


@check("init.newer_version", Tier.MANDATORY)
async def _init_newer(launcher: Launcher, version: int) -> None:
    """A client asking for a version the agent does not know (65535) gets the agent's latest, not an error and not
    its own number back."""
    latest = max(launcher.versions)
    if version != latest:
        return  # one connection per agent says it; the other version's case is `init.older_version`
    async with connect(launcher, latest, asked=65535) as conn:
        assert conn.init["protocolVersion"] == latest


@check("init.older_version", Tier.MANDATORY, versions=(2,))
async def _init_older(launcher: Launcher, version: int) -> None:
    """A v2 agent asked for version 1 still answers (1 if it speaks it, else 2), never an error."""
    older = 1 if 1 in launcher.versions else 2
    async with connect(launcher, older, asked=1) as conn:
        assert conn.init["protocolVersion"] == older


@check("jsonrpc.ids", Tier.MANDATORY)
async def _jsonrpc_ids(launcher: Launcher, version: int) -> None:
    """A response echoes its request's id exactly, integer or string, and carries exactly one of result and error
    (an error: integer code, string message)."""
    async with connect(launcher, version) as conn:
        for request_id in ("kit-1", 77):
            response = await conn.call("_kit/unknown", {}, request_id=request_id, probe=True)
            assert response["id"] == request_id and type(response["id"]) is type(request_id)
            assert ("result" in response) != ("error" in response), response
            if "error" in response:
                assert isinstance(response["error"]["code"], int) and isinstance(response["error"]["message"], str)


@check("jsonrpc.unknown_method", Tier.ADVISORY)
async def _jsonrpc_unknown_method(launcher: Launcher, version: int) -> None:
    """An unknown method (ACP's or an extension's) is -32601, and the connection goes on serving."""
    async with connect(launcher, version) as conn:
        for method in ("session/no_such_method", "_kit/no_such_method", "session/no_such_method"):
            response = await conn.call(method, {}, probe=True)
            advise(launcher, response.get("error", {}).get("code") == METHOD_NOT_FOUND, f"{method}: {response}")


@check("jsonrpc.notifications", Tier.MANDATORY)
async def _jsonrpc_notifications(launcher: Launcher, version: int) -> None:
    """Notifications are never answered, an unknown one or a cancel of an unknown session included, and the next
    request is served (`check_connection` refuses any answer to a request never sent)."""
    async with connect(launcher, version) as conn:
        await conn.notify("_kit/notice", {"hello": True}, probe=True)
        await conn.notify("session/cancel", {"sessionId": "kit-no-such-session"})
        await conn.call("_kit/after", {}, probe=True)
        stray = [m for m in conn.received() if "method" not in m and m.get("id") is None]
        assert stray == [], f"answers to notifications: {stray}"


@check("jsonrpc.empty_batch", Tier.MANDATORY)
async def _jsonrpc_empty_batch(launcher: Launcher, version: int) -> None:
    """An empty batch `[]` gets one Invalid Request error with `id: null` (never an array), and the connection goes
    on."""
    async with connect(launcher, version) as conn:
        await conn.send([])
        await conn.wait_for(lambda: [m for m in conn.received() if m.get("id") is None and "error" in m])
        errors = [m for m in conn.received() if m.get("id") is None and "error" in m]
        assert errors[0]["error"]["code"] == INVALID_REQUEST, errors
        assert not any(line.startswith(b"[") for line in conn.lines), "a batch answer to an empty batch"
        await conn.call("_kit/after", {}, probe=True)


def _replies(conn: Connection, start: int) -> list[Any]:
    """The lines the agent wrote from line `start` on that hold a reply, parsed: a line made only of the agent's own
    notifications and requests (bare or batched) is no reply."""
    out = []
    for line in conn.lines[start:]:
        message = json.loads(line)
        items = message if isinstance(message, list) else [message]
        if not all(isinstance(item, dict) and "method" in item for item in items):
            out.append(message)
    return out


@check("jsonrpc.batch_notifications", Tier.MANDATORY, versions=(2,))
async def _jsonrpc_batch_notifications(launcher: Launcher, version: int) -> None:
    """A batch of notifications only gets no reply at all, not even an empty array or an error (acp-tck
    ACP-BATCH-202, and ACP-JSONRPC-003's batch half); the next request is served, and its answer is the first
    reply."""
    async with connect(launcher, version) as conn:
        start = len(conn.lines)
        await conn.send([{"jsonrpc": "2.0", "method": "_kit/notify_only"}], probe=True)
        after = await conn.call("_kit/after", {}, request_id="kit-after-batch", probe=True)
        replies = _replies(conn, start)
        assert replies and replies[0] == after, f"replies to a batch of notifications only: {replies}"


@check("jsonrpc.batch_requests", Tier.MANDATORY, versions=(2,))
async def _jsonrpc_batch_requests(launcher: Launcher, version: int) -> None:
    """A batch of two requests (`session/list`, side-effect free) is answered by one array holding both responses,
    matched by id (in any order), each a result (acp-tck ACP-JSONRPC-001's batch half, with ACP-BATCH-204/205)."""
    async with connect(launcher, version) as conn:
        start = len(conn.lines)
        ids = ("kit-batch-a", "kit-batch-b")
        await conn.send([{"jsonrpc": "2.0", "id": i, "method": "session/list"} for i in ids], probe=True)
        reply = (await conn.wait_for(lambda: _replies(conn, start)))[0]  # the first reply is judged
        assert isinstance(reply, list) and len(reply) == 2, f"not one array of both responses: {reply}"
        by_id = {item.get("id"): item for item in reply if isinstance(item, dict)}
        assert set(by_id) == set(ids), f"the array's ids are not the requests': {reply}"
        assert all("result" in by_id[i] for i in ids), f"a batched session/list did not succeed: {reply}"


@check("auth.methods", Tier.MANDATORY)
async def _auth_methods(launcher: Launcher, version: int) -> None:
    """Auth methods: v2 types are `agent`, `terminal` or `_`-prefixed (v1: also `env_var`); no `terminal` method
    unless the client offered terminal auth; method ids unique (advisory)."""
    async with connect(launcher, version) as conn:
        methods = conn.init.get("authMethods") or []
        assert isinstance(methods, list)
        known = {"agent", "terminal"} | ({"env_var"} if version == 1 else set())
        key = "methodId" if version == 2 else "id"
        for method in methods:
            kind = method.get("type", "agent")
            assert kind in known or str(kind).startswith("_"), f"auth method type {kind!r}"
            assert kind != "terminal", "a terminal auth method though the client offered no terminal auth"
        ids = [m.get(key) for m in methods]
        advise(launcher, len(ids) == len(set(ids)), f"auth method ids repeat: {ids}")


@check("auth.logout", Tier.CAPABILITY, gate="logout")
async def _auth_logout(launcher: Launcher, version: int) -> None:
    """Where logging out is offered (v1 `auth.logout`, v2 any auth method), it answers without an error."""
    if not launcher.logout:
        return  # it may drop a real agent's credentials: only where the launcher allows it
    async with connect(launcher, version) as conn:
        await conn.result("logout" if version == 1 else "auth/logout", {})


# Sessions and turns ---------------------------------------------------------------------------------------------

SESSION = "session"  # v2's baseline gate (v1's session methods need none)


def _session_check(check_id: str, tier: Tier) -> Callable[[Any], Any]:
    """Register a check of the session baseline: mandatory in v1, gated on `capabilities.session` in v2."""

    def register(fn: Callable[[Launcher, int], Awaitable[None]]) -> Callable[[Launcher, int], Awaitable[None]]:
        text = (fn.__doc__ or "").strip()
        CHECKS.append(Check(check_id, tier, text, fn, (1,)))
        CHECKS.append(Check(check_id, Tier.CAPABILITY if tier is Tier.MANDATORY else tier, text, fn, (2,), SESSION))
        return fn

    return register


@_session_check("session.new", Tier.MANDATORY)
async def _session_new(launcher: Launcher, version: int) -> None:
    """`session/new` with an absolute cwd answers a non-empty session id, a new one each time (v2: with
    `mcpServers` left out or empty alike)."""
    async with connect(launcher, version) as conn:
        first = await conn.new_session(launcher.workspace)
        second = await conn.new_session(launcher.workspace, mcpServers=[])
        assert first != second


@_session_check("prompt.turn", Tier.MANDATORY)
async def _prompt_turn(launcher: Launcher, version: int) -> None:
    """A prompt's turn: updates for the session, then its end with a defined (or `_`) stop reason — v1 in the prompt's
    answer; v2 a receipt naming the user message's `messageId` (echoed by a `user_message` update with that id before
    the turn's end), `running`, then `idle` with the stop reason. Two prompts get two message ids."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        first = await conn.turn(launcher, session_id)
        assert known_stop(version, first.stop_reason), f"stop reason {first.stop_reason!r}"
        if version == 1:
            assert "stopReason" in first.result
            return
        message_id = first.result.get("messageId")
        assert isinstance(message_id, str) and message_id, f"the prompt's receipt has no messageId: {first.result}"
        ending = _idle_after(first.updates)
        idle_at = next(i for i, u in enumerate(first.updates) if u is ending)
        echoed = [
            i
            for i, u in enumerate(first.updates)
            if u.get("sessionUpdate") in ("user_message", "user_message_chunk") and u.get("messageId") == message_id
        ]
        kinds = [u.get("sessionUpdate") for u in first.updates]
        assert echoed and echoed[0] < idle_at, f"user message {message_id} not echoed before the turn's end: {kinds}"
        second = await conn.turn(launcher, session_id)
        assert second.result.get("messageId") not in (None, message_id), "two prompts, one message id"


@_session_check("prompt.cancel", Tier.MANDATORY)
async def _prompt_cancel(launcher: Launcher, version: int) -> None:
    """`session/cancel` (a notification, never answered; with or without `_meta`) ends the running turn
    `cancelled`: v1 the prompt's answer, v2 the idle `state_update` (the prompt itself was answered with its
    receipt)."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        start = len(conn.received())
        pending = await conn.in_flight(launcher, session_id)
        await conn.notify("session/cancel", {"sessionId": session_id, "_meta": {"kit": True}})
        async with asyncio.timeout(WAIT):
            answer = await pending.answer
        if version == 1:
            assert answer.get("result", {}).get("stopReason") == "cancelled", answer
            return
        assert "result" in answer, f"a cancelled turn's prompt failed: {answer}"
        idle = await conn.wait_for(lambda: _idle_after(conn.updates(session_id, start)))
        assert idle.get("stopReason") == "cancelled", idle


@_session_check("session.unknown", Tier.MANDATORY)
async def _session_unknown(launcher: Launcher, version: int) -> None:
    """A prompt naming a session the agent never made is refused with -32002 (resource not found)."""
    async with connect(launcher, version) as conn:
        error = await conn.error("session/prompt", conn.prompt_params("f" * 32, "hello"))
        assert error["code"] == RESOURCE_NOT_FOUND, error


@_session_check("prompt.invalid_params", Tier.ADVISORY)
async def _prompt_invalid(launcher: Launcher, version: int) -> None:
    """A prompt without its `prompt` member is -32602 (invalid params), and the session still takes prompts."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        error = await conn.error("session/prompt", {"sessionId": session_id}, probe=True)
        advise(launcher, error["code"] == INVALID_PARAMS, f"{error}")
        assert known_stop(version, (await conn.turn(launcher, session_id)).stop_reason)


@check("prompt.permission_unknown_outcome", Tier.ADVISORY, versions=(2,), gate=SESSION)
async def _prompt_permission_unknown(launcher: Launcher, version: int) -> None:
    """A permission request answered with an outcome the agent cannot know (`_`-prefixed: an extension's) is
    tolerated: the prompt is not refused -32602 and the turn goes on to its idle (acp-tck ACP-ENUM-203; ACP: such an
    outcome is no approval, and the agent declines it). The launcher's permission turn must ask once."""
    async with connect(launcher, version) as conn:
        conn.permission_outcome = {"outcome": "_kit/unknown"}
        session_id = await conn.new_session(launcher.workspace)
        start = len(conn.received())
        response = await conn.call("session/prompt", conn.prompt_params(session_id, await launcher.turn("permission")))
        advise(launcher, response.get("error", {}).get("code") != INVALID_PARAMS, f"the prompt was refused: {response}")
        with contextlib.suppress(TimeoutError):  # judged below: the turn would hang on a request nobody closed
            await conn.wait_for(lambda: _idle_after(conn.updates(session_id, start)))
        asked = [m for m in conn.received()[start:] if m.get("method") == "session/request_permission"]
        advise(launcher, bool(asked), "the permission turn asked no permission: the launcher's prompt must make it")
        kinds = [u.get("sessionUpdate") for u in conn.updates(session_id, start)]
        ended = _idle_after(conn.updates(session_id, start)) is not None
        advise(launcher, ended, f"no idle after a `_` permission outcome within {WAIT}s: {kinds}")


@check("prompt.embedded_context", Tier.CAPABILITY, gate="embeddedContext")
async def _prompt_embedded(launcher: Launcher, version: int) -> None:
    """Where embedded context is advertised, a prompt of text and an embedded text resource is taken and its turn
    ends."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        text = await launcher.turn("short")
        resource = {"uri": (launcher.workspace / "notes.txt").as_uri(), "mimeType": "text/plain", "text": "one\n"}
        blocks = [{"type": "text", "text": text}, {"type": "resource", "resource": resource}]
        params = {"sessionId": session_id, "prompt": blocks}
        start = len(conn.received())
        response = await conn.call("session/prompt", params)
        assert "result" in response, response
        if version == 2:
            await conn.wait_for(lambda: _idle_after(conn.updates(session_id, start)))


def _sessions(result: dict[str, Any]) -> list[dict[str, Any]]:
    sessions = result.get("sessions")
    assert isinstance(sessions, list), f"session/list gave no sessions array: {result}"
    return sessions


@check("session.list", Tier.CAPABILITY, gate="list")
async def _session_list(launcher: Launcher, version: int) -> None:
    """`session/list` answers a `sessions` array: filtered by the workspace, only sessions there (absolute cwds);
    filtered by a directory no session uses, none."""
    async with connect(launcher, version) as conn:
        await conn.new_session(launcher.workspace)
        for info in _sessions(await conn.result("session/list", {})):
            assert os.path.isabs(info["cwd"]), info
        for info in _sessions(await conn.result("session/list", {"cwd": str(launcher.workspace)})):
            assert info["cwd"] == str(launcher.workspace), info
        nowhere = str(launcher.workspace / "kit-no-session-works-here")
        assert _sessions(await conn.result("session/list", {"cwd": nowhere})) == []


def _replay_window(conn: Connection, session_id: str, start: int, request_id: Any) -> list[dict[str, Any]]:
    """The session's updates between message `start` and the answer to `request_id`: what a resume replayed."""
    answered = conn.answer_index(request_id)
    return [u for u in conn.updates(session_id, start) if conn.update_index(u) < answered]


def _check_replay(replayed: list[dict[str, Any]], message_id: Any) -> None:
    """A v2 replay: the user message under the id its prompt's receipt named (acp-tck ACP-RESUME-204), and each
    `*_chunk` after the whole-message update of its `messageId` with `content: []` (ACP-RESUME-205: whole messages
    are upserts that chunks append to, so a replayed chunk needs its message first; a replay of whole messages
    only has nothing to check)."""
    users = [u for u in replayed if u.get("sessionUpdate") in ("user_message", "user_message_chunk")]
    assert users == [] or users[0]["messageId"] == message_id, f"replayed as {users[0]}, receipt {message_id}"
    for index, update in enumerate(replayed):
        kind = str(update.get("sessionUpdate"))
        if not kind.endswith("_chunk") or kind == "tool_call_content_chunk":
            continue
        whole = kind.removesuffix("_chunk")
        primed = any(
            u.get("sessionUpdate") == whole and u.get("messageId") == update.get("messageId") and u.get("content") == []
            for u in replayed[:index]
        )
        kinds = [u.get("sessionUpdate") for u in replayed]
        assert primed, f"replayed {kind} of {update.get('messageId')} without an empty {whole} first: {kinds}"


@check("session.resume", Tier.CAPABILITY, gate="resume")
async def _session_resume(launcher: Launcher, version: int) -> None:
    """A session resumed on a new connection answers an object and replays nothing first; v2 with
    `replayFrom: start` replays its history before the answer, on the connection that made it (as acp-tck resumes
    it) and on a new one: the user message under the id its prompt's receipt named, and a chunk only after its
    message, whole and empty."""
    params: dict[str, Any] = {"cwd": str(launcher.workspace)}
    if version == 1:
        params["mcpServers"] = []
    replay_from = {"replayFrom": {"type": "start"}}
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        params["sessionId"] = session_id
        message_id = (await conn.turn(launcher, session_id)).result.get("messageId")
        if version == 2:
            start, request_id = len(conn.received()), next(conn._ids)
            response = await conn.call("session/resume", params | replay_from, request_id=request_id)
            assert "result" in response, response
            _check_replay(_replay_window(conn, session_id, start, request_id), message_id)
    async with connect(launcher, version) as conn:
        await conn.result("session/resume", params)
        history = [
            u
            for u in conn.updates(session_id)
            if u.get("sessionUpdate") in ("user_message", "user_message_chunk", "agent_message", "agent_message_chunk")
        ]
        assert history == [], f"resume without replay replayed {history}"
    if version == 1:
        return
    async with connect(launcher, version) as conn:
        response = await conn.call("session/resume", params | replay_from)
        assert "result" in response, response
        answered = conn.received().index(response)
        after = [m for m in conn.received()[answered:] if m.get("method") == "session/update"]
        assert after == [], f"replay after the answer: {after}"
        _check_replay(conn.updates(session_id), message_id)


@check("session.load", Tier.CAPABILITY, versions=(1,), gate="load")
async def _session_load(launcher: Launcher, version: int) -> None:
    """v1 `session/load` on a new connection replays the conversation (the user's prompt first) before answering."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        await conn.turn(launcher, session_id)
    async with connect(launcher, version) as conn:
        params = {"sessionId": session_id, "cwd": str(launcher.workspace), "mcpServers": []}
        response = await conn.call("session/load", params)
        assert "result" in response, response
        answered = conn.received().index(response)
        replayed = [m["params"]["update"] for m in conn.received()[:answered] if m.get("method") == "session/update"]
        kinds = [u.get("sessionUpdate") for u in replayed]
        assert kinds and kinds[0] == "user_message_chunk", f"replayed {kinds}"


@check("session.close", Tier.CAPABILITY, gate="close")
async def _session_close(launcher: Launcher, version: int) -> None:
    """`session/close` of an idle session answers `{}`; of a session whose turn runs, it cancels the turn as
    `session/cancel` does and its end (v2 idle `cancelled`, v1 the prompt's `cancelled`) comes before the close's
    answer; closing a session that does not exist succeeds (advisory)."""
    async with connect(launcher, version) as conn:
        idle = await conn.new_session(launcher.workspace)
        assert await conn.result("session/close", {"sessionId": idle}) == {}
        busy = await conn.new_session(launcher.workspace)
        start = len(conn.received())
        pending = await conn.in_flight(launcher, busy)
        close_id = next(conn._ids)
        closed = await conn.call("session/close", {"sessionId": busy}, request_id=close_id)
        assert "result" in closed, closed
        closed_at = conn.answer_index(close_id)
        async with asyncio.timeout(WAIT):
            answer = await pending.answer
        if version == 1:
            assert conn.answer_index(pending.request_id) < closed_at, "the close answered before the cancelled turn"
            assert answer.get("result", {}).get("stopReason") == "cancelled", answer
        else:
            ending = _idle_after(conn.updates(busy, start))
            assert ending is not None and ending.get("stopReason") == "cancelled", ending
            assert conn.update_index(ending) < closed_at, "the close answered before the cancelled turn's end"
        unknown = await conn.call("session/close", {"sessionId": "f" * 32})
        advise(launcher, "result" in unknown, f"closing an unknown session: {unknown}")


@check("session.delete", Tier.CAPABILITY, gate="delete")
async def _session_delete(launcher: Launcher, version: int) -> None:
    """`session/delete` of a session answers `{}` and the session leaves `session/list`; deleting one that never
    existed succeeds silently (advisory)."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        await conn.turn(launcher, session_id)
        assert await conn.result("session/delete", {"sessionId": session_id}) == {}
        if "list" in advertised(conn.init, version):
            listed = [s["sessionId"] for s in _sessions(await conn.result("session/list", {}))]
            assert session_id not in listed
        unknown = await conn.call("session/delete", {"sessionId": "f" * 32})
        advise(launcher, unknown.get("result") == {}, f"deleting a session that never existed: {unknown}")


@check("session.fork", Tier.CAPABILITY, gate="fork")
async def _session_fork(launcher: Launcher, version: int) -> None:
    """`session/fork` of a session with a turn answers a new session id, which takes prompts."""
    async with connect(launcher, version) as conn:
        session_id = await conn.new_session(launcher.workspace)
        await conn.turn(launcher, session_id)
        params: dict[str, Any] = {"sessionId": session_id, "cwd": str(launcher.workspace)}
        if version == 1:
            params["mcpServers"] = []
        forked = (await conn.result("session/fork", params)).get("sessionId")
        assert isinstance(forked, str) and forked and forked != session_id
        assert known_stop(version, (await conn.turn(launcher, forked)).stop_reason)


@_session_check("config.options", Tier.CAPABILITY)
async def _config_options(launcher: Launcher, version: int) -> None:
    """Config options, where `session/new` offers any: each select's current value is one of its values; setting
    another value answers the complete list with that value current; an unknown option is -32602."""
    async with connect(launcher, version) as conn:
        params: dict[str, Any] = {"cwd": str(launcher.workspace)} | ({"mcpServers": []} if version == 1 else {})
        result = await conn.result("session/new", params)
        options = result.get("configOptions") or []
        selects = [o for o in options if o.get("type") == "select"]
        key = "configId" if version == 2 else "id"
        for option in selects:
            assert option["currentValue"] in _values(option), option
        changeable = next((o for o in selects if len(_values(o)) > 1), None)
        if changeable is None:
            return  # nothing to change
        value = next(v for v in _values(changeable) if v != changeable["currentValue"])
        params = {"sessionId": result["sessionId"], "configId": changeable[key], "value": value}
        if version == 2:
            params["type"] = "id"
        changed = (await conn.result("session/set_config_option", params))["configOptions"]
        assert {o[key] for o in options} <= {o[key] for o in changed}, "set_config_option dropped options"
        assert next(o for o in changed if o[key] == changeable[key])["currentValue"] == value
        refused = await conn.error("session/set_config_option", params | {"configId": "kit-no-such-option"}, probe=True)
        assert refused["code"] == INVALID_PARAMS, refused


def _values(option: dict[str, Any]) -> list[str]:
    """A select option's values, flat or grouped."""
    out: list[str] = []
    for entry in option.get("options") or []:
        out += [o["value"] for o in entry["options"]] if "group" in entry or "groupId" in entry else [entry["value"]]
    return out


@check("modes.set", Tier.CAPABILITY, versions=(1,))
async def _modes(launcher: Launcher, version: int) -> None:
    """v1 session modes, where `session/new` offers them: the current mode is one of them and `session/set_mode`
    to another answers without an error."""
    async with connect(launcher, version) as conn:
        result = await conn.result("session/new", {"cwd": str(launcher.workspace), "mcpServers": []})
        modes = result.get("modes")
        if modes is None:
            return  # no modes offered
        ids = [m["id"] for m in modes["availableModes"]]
        assert modes["currentModeId"] in ids
        other = next((i for i in ids if i != modes["currentModeId"]), None)
        if other is not None:
            await conn.result("session/set_mode", {"sessionId": result["sessionId"], "modeId": other})


def cases(versions: Sequence[int], capabilities: Mapping[int, frozenset[str]]) -> list[tuple[int, Check]]:
    """The (version, check) pairs that apply to an agent speaking `versions` with the declared `capabilities` (what
    its `Launcher` will say), for parametrizing before the agent exists."""
    return [(version, c) for version in (1, 2) for c in CHECKS if c.applies(version, versions, capabilities)]


async def run(check_: Check, launcher: Launcher, version: int) -> None:
    """Run one check against the launcher (raises AssertionError when the agent falls short)."""
    await check_.run(launcher, version)
