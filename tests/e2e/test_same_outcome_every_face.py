"""Issue 33 acceptance ("each rule in one place"): the same engine outcomes (a plain end, the model's length limit, a
refusal, a provider failure, the engine's max rounds, a cancel mid-turn) driven through every face that reports a
turn's end, each checked against ONE table of what the outcome is.

The faces, each a real subprocess (the hub's sockets on 127.0.0.1), our engine behind each against the fake LLM:

- `omniagent acp` (the engine's own ACP face), `omniagent acp --agent omniagent` (the hub's ACP connection over
  stdio) and `omniagent hub`'s `/acp` over WebSocket, each in v1 and v2: v1 answers the prompt with its
  `stopReason` (error -32603 for a failed turn), v2 ends the turn with an idle `state_update` and its `stopReason`
  (`error`, with the error, for a failed turn);
- `omniagent serve`: the sidecar `TurnEnded.stop`;
- `omniagent run --json`: the sidecar `TurnEnded.stop` as its last line, and its exit code.

Every face runs with `OMNIAGENT_MAX_ROUNDS=1`: only a round that asks for tools reaches the cap, so the one setting
serves every row. Every ACP message is checked against the version's schemas and every sidecar line against the
anyagent schema. Waits are bounded; the cancel waits until the model's reply is held at a gate, never on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from omniagent.testing import ErrorReply, FakeLLMServer, FakeToolCall, Reply, Scenario
from omniagent.testing.scenario import Step
from tests.e2e.sidecar_client import Sidecar
from tests.faces.acp.agent_harness import check_message
from tests.hub.hub_process import running_hub
from tests.runtime.adapters.engine.harness import child_env, workspace
from tests.sidecar_schema import validate

WAIT = 30.0  # seconds: the bound on every wait for a face
PROMPT = "Do the task."
FAILURE = "scripted provider failure"  # the provider's error message, which every face must pass on
INTERNAL_ERROR = -32603


class Outcome(StrEnum):
    COMPLETED = "completed"
    LENGTH = "length"
    REFUSAL = "refusal"
    FAILURE = "failure"
    MAX_ROUNDS = "max_rounds"
    CANCEL = "cancel"


# What the model does for each outcome (the cancel's reply is held at its gate until the face cancels the turn).
SCRIPTS: dict[Outcome, Step] = {
    Outcome.COMPLETED: Reply(text="All done."),
    Outcome.LENGTH: Reply(text="This answer was cut", stop="length"),
    Outcome.REFUSAL: Reply(text="I will not do that.", stop="refusal"),
    Outcome.FAILURE: ErrorReply(400, "invalid_request_error", message=FAILURE),
    Outcome.MAX_ROUNDS: Reply(tool_calls=(FakeToolCall("read", {"path": "missing.txt"}),)),
    Outcome.CANCEL: Reply(text="Working on it", gate="cancel"),
}


@dataclass(frozen=True)
class Expected:
    """How every face says one outcome.

    `acp`: the ACP stop reason; `error` is a failed turn (v1: the prompt answered with error -32603, v2: the idle
    `state_update` with stop reason `error` and that error), whose message names the provider's failure.
    `stop`: the sidecar's `TurnEnded.stop` (`serve`, `run --json`); a `Failed` stop's message names the failure.
    `exit`: `omniagent run`'s exit code."""

    acp: str
    stop: Any
    exit: int


THE_TABLE: dict[Outcome, Expected] = {
    Outcome.COMPLETED: Expected("end_turn", {"Completed": {"source": "Protocol"}}, 0),
    Outcome.LENGTH: Expected("max_tokens", {"Completed": {"source": "Protocol", "limit": "MaxTokens"}}, 0),
    Outcome.REFUSAL: Expected("refusal", "Refused", 1),
    Outcome.FAILURE: Expected("error", {"Failed": FAILURE}, 1),
    Outcome.MAX_ROUNDS: Expected(
        "max_turn_requests", {"Completed": {"source": "Protocol", "limit": "MaxTurnRequests"}}, 1
    ),
    Outcome.CANCEL: Expected("cancelled", "Cancelled", 130),
}


@dataclass(frozen=True)
class Said:
    """What one face said of the turn's end, in the table's terms (None: the face has no such say)."""

    acp: str | None = None
    stop: Any = None
    exit: int | None = None


def _stop_of(stop: Any) -> Any:
    """A sidecar stop in the table's terms: a `Failed` stop whose message names the failure is `{"Failed": FAILURE}`."""
    if isinstance(stop, dict) and "Failed" in stop and FAILURE in str(stop["Failed"].get("message")):
        return {"Failed": FAILURE}
    return stop


def _env(tmp_path: Path, llm: FakeLLMServer) -> dict[str, str]:
    return child_env(tmp_path, llm) | {"OMNIAGENT_MAX_ROUNDS": "1"}


async def _cancel_when_held(outcome: Outcome, llm: FakeLLMServer, cancel: Callable[[], Awaitable[object]]) -> None:
    """For the cancel row: once the model's reply is held (the turn is under way), the face's own cancel."""
    if outcome is Outcome.CANCEL:
        assert await llm.wait_held_async("cancel", WAIT), "the turn never reached the model"
        await cancel()


# --- ACP: one raw JSON-RPC connection, over a child's stdio or the hub's WebSocket --------------------------------


class AcpWire:
    """Raw ACP messages over a transport; every message the agent sends is kept and checked against the version's
    schemas. The agent asks nothing of the client in these turns: a request from it fails the row."""

    def __init__(self, version: int, send: Callable[[str], Awaitable[None]]) -> None:
        self.version = version
        self._send = send
        self.received: list[dict[str, Any]] = []
        self.sent: dict[int, str] = {}  # request id → method, for the schema check of the answers
        self._ids = itertools.count(1)
        self._changed = asyncio.Event()
        self.closed = False

    def take(self, text: str) -> None:
        """One message (or batch) the agent sent."""
        message = json.loads(text)
        for item in message if isinstance(message, list) else [message]:
            check_message(self.version, item, self.sent)
            assert not ("method" in item and "id" in item), f"the agent asked the client something: {item}"
            self.received.append(item)
        self._changed.set()

    def end(self) -> None:
        self.closed = True
        self._changed.set()

    async def until(self, found: Callable[[], Any]) -> Any:
        """`found()`'s value once it is truthy, re-checked after each message (bounded)."""
        async with asyncio.timeout(WAIT):
            while not (value := found()):
                assert not self.closed, f"the connection closed; last messages: {self.received[-3:]}"
                self._changed.clear()
                await self._changed.wait()
        return value

    async def send(self, method: str, params: dict[str, Any], *, request: bool = True) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        request_id = None
        if request:
            request_id = next(self._ids)
            self.sent[request_id] = method
            message["id"] = request_id
        check_message(self.version, message, {}, side="agent")
        await self._send(json.dumps(message))
        return request_id

    def answer(self, request_id: int | None) -> dict[str, Any] | None:
        return next((m for m in self.received if "method" not in m and m.get("id") == request_id), None)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = await self.send(method, params)
        response: dict[str, Any] = await self.until(lambda: self.answer(request_id))
        assert "result" in response, f"{method} answered {response}"
        return dict(response["result"])


async def _acp_turn(wire: AcpWire, outcome: Outcome, llm: FakeLLMServer, ws: Path) -> Said:
    """initialize, session/new, one prompt (cancelled for the cancel row); what the face said of its end."""
    version = wire.version
    init: dict[str, Any] = {"protocolVersion": version}
    init |= {"info": {"name": "same-outcome", "version": "1"}, "capabilities": {}} if version == 2 else {}
    assert (await wire.call("initialize", init))["protocolVersion"] == version
    session = (await wire.call("session/new", {"cwd": str(ws), "mcpServers": []}))["sessionId"]
    start = len(wire.received)
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": PROMPT}]}
    asked = await wire.send("session/prompt", prompt)
    await _cancel_when_held(outcome, llm, lambda: wire.send("session/cancel", {"sessionId": session}, request=False))
    answer = await wire.until(lambda: wire.answer(asked))
    if version == 1:
        if "error" in answer:
            error = answer["error"]
            assert error["code"] == INTERNAL_ERROR and FAILURE in error["message"], error
            return Said(acp="error")
        return Said(acp=answer["result"]["stopReason"])
    assert "messageId" in answer.get("result", {}), f"the v2 prompt answered {answer}"
    idle = await wire.until(lambda: _idle_after(wire.received[start:], session))
    if idle["stopReason"] == "error":
        error = idle["error"]
        assert error["code"] == INTERNAL_ERROR and FAILURE in error["message"], idle
    return Said(acp=idle["stopReason"])


def _idle_after(messages: list[dict[str, Any]], session: str) -> dict[str, Any] | None:
    """The idle `state_update` that ends the session's turn (the first one after a `running`)."""
    running = False
    for message in messages:
        params = message.get("params", {})
        if message.get("method") != "session/update" or params.get("sessionId") != session:
            continue
        update = params["update"]
        if update.get("sessionUpdate") == "state_update":
            if update["state"] == "running":
                running = True
            elif update["state"] == "idle" and running:
                return dict(update)
    return None


@contextlib.asynccontextmanager
async def _stdio(argv: list[str], version: int, env: dict[str, str], cwd: Path) -> AsyncIterator[AcpWire]:
    """An ACP agent command on its stdio; closed (stdin EOF, bounded, then killed) on leaving."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=2**24,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def send(text: str) -> None:
        stdin.write(text.encode() + b"\n")
        await stdin.drain()

    wire = AcpWire(version, send)

    async def read() -> None:
        while line := await stdout.readline():
            wire.take(line.decode())
        wire.end()

    reader = asyncio.create_task(read())
    try:
        yield wire
    finally:
        stdin.close()
        try:
            async with asyncio.timeout(WAIT):
                await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            reader.cancel()


@contextlib.asynccontextmanager
async def _hub_socket(tmp_path: Path, env: dict[str, str], version: int) -> AsyncIterator[AcpWire]:
    """The real `omniagent hub` (its default agent our engine) and one ACP client on its `/acp` WebSocket."""
    async with running_hub(tmp_path / "hub", env=env) as hub:
        headers = {"Authorization": f"Bearer {hub.token}"}
        async with connect(hub.url.replace("http", "ws", 1) + "/acp", additional_headers=headers) as socket:
            wire = AcpWire(version, socket.send)
            reader = asyncio.create_task(_read_frames(socket, wire))
            try:
                yield wire
            finally:
                reader.cancel()


async def _read_frames(socket: ClientConnection, wire: AcpWire) -> None:
    with contextlib.suppress(Exception):
        async for frame in socket:
            wire.take(str(frame))
    wire.end()


def _omniagent(*args: str) -> list[str]:
    return [sys.executable, "-m", "omniagent", *args]


async def _engine_acp(version: int, outcome: Outcome, llm: FakeLLMServer, tmp_path: Path) -> Said:
    ws = workspace(tmp_path)
    async with _stdio(_omniagent("acp"), version, _env(tmp_path, llm), ws) as wire:
        return await _acp_turn(wire, outcome, llm, ws)


async def _hub_acp_stdio(version: int, outcome: Outcome, llm: FakeLLMServer, tmp_path: Path) -> Said:
    ws = workspace(tmp_path)
    async with _stdio(_omniagent("acp", "--agent", "omniagent"), version, _env(tmp_path, llm), ws) as wire:
        return await _acp_turn(wire, outcome, llm, ws)


async def _hub_acp_socket(version: int, outcome: Outcome, llm: FakeLLMServer, tmp_path: Path) -> Said:
    ws = workspace(tmp_path)
    async with _hub_socket(tmp_path, _env(tmp_path, llm), version) as wire:
        return await _acp_turn(wire, outcome, llm, ws)


# --- the sidecar wire: `omniagent serve` and `omniagent run --json` -----------------------------------------------


async def _serve(outcome: Outcome, llm: FakeLLMServer, tmp_path: Path) -> Said:
    ws = workspace(tmp_path)
    async with Sidecar.running(env=_env(tmp_path, llm)) as sidecar:
        session = (await sidecar.ok("open", agent="omniagent", dir=str(ws)))["id"]
        await sidecar.ok("prompt", session=session, text=PROMPT)

        async def cancel() -> None:
            await sidecar.ok("cancel", session=session)

        await _cancel_when_held(outcome, llm, cancel)
        ended = await sidecar.wait_event(session, "TurnEnded")
    return Said(stop=_stop_of(ended["kind"]["TurnEnded"]["stop"]))


async def _run_json(outcome: Outcome, llm: FakeLLMServer, tmp_path: Path) -> Said:
    proc = await asyncio.create_subprocess_exec(
        *_omniagent("run", "--json", PROMPT),
        cwd=workspace(tmp_path),
        env=_env(tmp_path, llm),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:

        async def interrupt() -> None:  # Ctrl-C: `run` cancels the turn and waits for its end
            proc.send_signal(signal.SIGINT)

        await _cancel_when_held(outcome, llm, interrupt)
        async with asyncio.timeout(WAIT):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    events = [json.loads(line) for line in out.decode().splitlines()]
    for event in events:
        validate("Event", event)
    assert events and "TurnEnded" in events[-1]["kind"], f"no TurnEnded last; stderr: {err.decode()}"
    return Said(stop=_stop_of(events[-1]["kind"]["TurnEnded"]["stop"]), exit=proc.returncode)


# --- the rows -----------------------------------------------------------------------------------------------------

Drive = Callable[[Outcome, FakeLLMServer, Path], Awaitable[Said]]


def _versioned(drive: Callable[[int, Outcome, FakeLLMServer, Path], Awaitable[Said]], version: int) -> Drive:
    return lambda outcome, llm, tmp_path: drive(version, outcome, llm, tmp_path)


FACES: dict[str, Drive] = {
    "acp-v1": _versioned(_engine_acp, 1),
    "acp-v2": _versioned(_engine_acp, 2),
    "acp-agent-omniagent-v1": _versioned(_hub_acp_stdio, 1),
    "acp-agent-omniagent-v2": _versioned(_hub_acp_stdio, 2),
    "hub-acp-websocket-v1": _versioned(_hub_acp_socket, 1),
    "hub-acp-websocket-v2": _versioned(_hub_acp_socket, 2),
    "serve": _serve,
    "run-json": _run_json,
}


def _expected(face: str, row: Expected) -> Said:
    """The row as `face` says it: ACP faces the ACP stop reason; `serve` the sidecar stop; `run` that and its exit."""
    if face.startswith(("acp", "hub-acp")):
        return Said(acp=row.acp)
    if face == "serve":
        return Said(stop=row.stop)
    return Said(stop=row.stop, exit=row.exit)


@pytest.mark.parametrize("outcome", list(Outcome))
@pytest.mark.parametrize("face", list(FACES))
async def test_every_face_reports_the_same_outcome(face: str, outcome: Outcome, tmp_path: Path) -> None:
    async with FakeLLMServer(Scenario([SCRIPTS[outcome]])) as llm:
        said = await FACES[face](outcome, llm, tmp_path)
    assert said == _expected(face, THE_TABLE[outcome])


def test_the_table_covers_every_outcome_and_every_face_says_each() -> None:
    """No outcome without its row and script; every face is driven through every row (the parametrization above)."""
    assert set(THE_TABLE) == set(SCRIPTS) == set(Outcome)
    assert len(FACES) == 8
