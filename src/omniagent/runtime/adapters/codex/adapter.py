"""The adapter for Codex's native wire, `codex app-server` (JSON-RPC 2.0 without the `jsonrpc` member).

`connect` spawns the app-server in the session's directory, runs the handshake (`launch.py`) and yields a driver
that turns commands into app-server calls and notifications into driver events (`translate.py`, tool items in
`tools.py`; server requests in `requests.py`; login, options and capabilities in `info.py`); see
docs/agents.md "Codex, natively".

Turn bookkeeping the wire forces on us (never a turn rule; the loop owns those):
- `TurnAck` is sent when our thread's `turn/started` arrives, in order with the frames it precedes: anything before
  it belongs to an older turn.
- `turn/steer` is refused before `turn/started` and `turn/interrupt` needs the turn id, so both are held until then.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from omniagent.protocols.sidecar.agents import AgentInstallation, LoginMethod
from omniagent.protocols.sidecar.commands import Answer
from omniagent.protocols.sidecar.events import DiagnosticEvent, Failed
from omniagent.runtime import catalog
from omniagent.runtime import driver as d
from omniagent.runtime.adapters.acp.prompt import prompt_text
from omniagent.runtime.adapters.codex import requests as server_requests
from omniagent.runtime.adapters.codex.info import EFFORT, CodexState
from omniagent.runtime.adapters.codex.launch import handshake, launch_argv, mcp_config
from omniagent.runtime.adapters.codex.translate import CLIENT_MESSAGE_PREFIX, ThreadTranslator
from omniagent.runtime.adapters.driver_loop import DriverLoop, stderr_tail
from omniagent.runtime.errors import HandshakeTimeout, ProtocolFailed, SpawnFailed
from omniagent.runtime.view import launch_prefix
from omniagent.wire.dialects import CODEX
from omniagent.wire.errors import PeerClosed
from omniagent.wire.jsonrpc import Peer, current_request_id
from omniagent.wire.messages import METHOD_NOT_FOUND, RpcError
from omniagent.wire.process import ChildProcess, SpawnError, open_process

# Diagnostics the app-server sends before the session is open (e.g. its bubblewrap warning), kept for after.
EARLY_DIAGNOSTICS = 16


class CodexAdapter:
    """Speaks the Codex app-server wire, one process per session."""

    def __init__(self, installation: AgentInstallation) -> None:
        self.installation = installation

    @asynccontextmanager
    async def connect(self, request: d.ConnectRequest, events: d.EventSink) -> AsyncIterator[d.Driver]:
        mcp_config(request.mcp_servers)  # refuses what cannot be forwarded before anything starts
        driver = _CodexDriver(request, events)
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(d.HANDSHAKE_TIMEOUT):
                    child = await stack.enter_async_context(
                        open_process(
                            launch_argv(request.installation),
                            cwd=str(request.directory),
                            prefix=launch_prefix(request),
                        )
                    )
                    peer = await stack.enter_async_context(driver.peer_on(child))
                    with _transport_errors(child):
                        driver.state, driver.overrides = await handshake(peer, request, driver.warnings)
            except TimeoutError as exc:
                raise HandshakeTimeout() from exc
            except SpawnError as exc:
                raise SpawnFailed(str(exc)) from exc
            await driver.opened()
            group = await stack.enter_async_context(asyncio.TaskGroup())
            driver.group = group
            group.create_task(driver.run())
            try:
                yield driver
            finally:
                driver.stop()


@contextmanager
def _transport_errors(child: ChildProcess) -> Iterator[None]:
    """The app-server went away or answered an error mid-handshake: `ProtocolFailed` with its last words."""
    try:
        yield
    except PeerClosed as exc:
        code = child.returncode
        status = f"exit status: {code}" if code is not None else "closed its output"
        raise ProtocolFailed(
            f"the agent exited during the handshake ({status}){stderr_tail(child.stderr_tail())}"
        ) from exc
    except RpcError as exc:
        raise ProtocolFailed(f"{exc.message} ({exc.code})") from exc


@dataclass(slots=True)
class _Pending:
    """A server request waiting for the caller's answer (None: the turn was cancelled)."""

    method: str
    params: Mapping[str, Any]
    answer: asyncio.Future[Answer | None]


class _CodexDriver(DriverLoop):
    def __init__(self, request: d.ConnectRequest, events: d.EventSink) -> None:
        super().__init__(events)
        self._request = request
        self.state = CodexState()
        self.overrides: dict[str, Any] = {}  # live options that ride every `turn/start`
        self._peer: Peer | None = None
        self._child: ChildProcess | None = None
        self._threads = ThreadTranslator()
        self._live = False
        self._early: list[d.AdapterEvent] = []
        self.warnings: list[str] = []  # the handshake's, sent once the session is open
        self._messages = 0  # numbers our `clientUserMessageId`s
        self._starting = False  # a `turn/start` went out and its `turn/started` has not come back
        self._interrupt_held = False
        self._steers_held: list[d.PromptInput] = []
        self._pending: dict[str, _Pending] = {}

    @property
    def info(self) -> d.DriverInfo:
        return self.state.info()

    def peer_on(self, child: ChildProcess) -> Peer:
        """The JSON-RPC peer over the child's stdio, with every app-server request and notification routed here."""
        self._child = child
        requests = {method: self._request_handler(method) for method in server_requests.SERVER_REQUESTS}
        self._peer = Peer(
            child.stdout,
            child.stdin,
            dialect=CODEX,
            requests=requests,
            notifications={
                "turn/started": self._on_turn_started,
                "turn/completed": self._on_turn_completed,
                "thread/name/updated": self._on_name,
            },
            other_notifications=self._on_notification,
            name="codex",
        )
        return self._peer

    async def opened(self) -> None:
        """The thread is bound: translate its frames from now on, and report what arrived before."""
        self._threads.thread_id = self.state.thread_id
        self._live = True
        for warning in self.warnings:
            await self._warn(warning)
        for event in self._early:
            await self._events.send(event)
        self._early.clear()

    # --- commands ------------------------------------------------------------------------------------------

    def _helpers(self) -> list[Coroutine[Any, Any, None]]:
        return [self._watch_exit(), self._load_commands()]

    async def _handle(self, command: d.DriverCommand) -> None:
        if isinstance(command, d.StartTurn):
            self._starting = True
            self._spawn(self._start_turn(command.input))
        elif isinstance(command, d.Steer):
            if self._threads.turn_id is None or self._starting:
                self._steers_held.append(command.input)
            else:
                self._spawn(self._steer(command.input, self._threads.turn_id))
        elif isinstance(command, d.AnswerRequest):
            pending = self._pending.get(command.request_id)
            if pending is not None and not pending.answer.done():
                pending.answer.set_result(command.answer)
        elif isinstance(command, d.Configure):
            self.state.apply_value(command.option, command.value)
            self.overrides[command.option] = command.value
            if EFFORT in self.overrides and self.overrides[EFFORT] != self.state.effort:
                # A new model without the effort asked for earlier: the server keeps a turn's effort for later
                # turns, so the new model's default must be sent in its place.
                self.overrides[EFFORT] = self.state.effort
            await self._events.send(d.InfoChanged(self.state.info()))
        elif isinstance(command, d.Cancel):
            self._cancel_requests()
            if self._threads.turn_id is None or self._starting:
                self._interrupt_held = True
            else:
                self._spawn(self._interrupt(self._threads.turn_id))
        elif isinstance(command, d.Rollback):
            # Awaited, not spawned: the server unloads the thread while it reverts, and a `turn/start` arriving
            # meanwhile is interrupted. Rollback is only sent while idle, so nothing else waits on it.
            await self._rollback(command.turns)
        elif isinstance(command, d.Compact):
            self._spawn(self._compact())

    async def _start_turn(self, prompt: d.PromptInput) -> None:
        self._messages += 1
        params = {
            "threadId": self.state.thread_id,
            "clientUserMessageId": f"{CLIENT_MESSAGE_PREFIX}{self._messages}",
            "input": user_input(prompt, self.state.skills),
            "summary": "auto",  # without it no reasoning deltas stream
            **self.overrides,
        }
        try:
            await self._call("turn/start", params)
        except RpcError as exc:
            if self._starting:  # refused: no `turn/started` will come, so end the turn we were asked to start
                self._starting = self._interrupt_held = False
                await self._events.send(d.TurnAck())
                await self._events.send(d.TurnStopped(Failed(message=f"{exc.message} ({exc.code})")))

    async def _steer(self, prompt: d.PromptInput, turn_id: str) -> None:
        self._messages += 1
        params = {
            "threadId": self.state.thread_id,
            "expectedTurnId": turn_id,
            "clientUserMessageId": f"{CLIENT_MESSAGE_PREFIX}{self._messages}",
            "input": user_input(prompt, self.state.skills),
        }
        try:
            await self._call("turn/steer", params)
            accepted = True
        except RpcError:
            accepted = False  # the turn ended meanwhile: the loop queues the input instead
        await self._events.send(d.SteerResult(accepted=accepted))

    async def _interrupt(self, turn_id: str) -> None:
        with suppress(RpcError):  # the turn ended meanwhile: its `turn/completed` ends it all the same
            await self._call("turn/interrupt", {"threadId": self.state.thread_id, "turnId": turn_id})

    async def _rollback(self, turns: int) -> None:
        """Drop the last `turns` turns from the thread's history (`thread/revert` keeps files as they are)."""
        thread = self.state.thread_id
        try:
            listed = await self._call("thread/turns/list", {"threadId": thread, "limit": turns})
            recent = listed.get("data") if isinstance(listed, Mapping) else None
            if not isinstance(recent, list) or not recent:
                await self._warn("rollback: the thread has no turns")
                return
            oldest = recent[min(turns, len(recent)) - 1]  # newest first: the last listed is the cut point
            await self._call("thread/revert", {"threadId": thread, "beforeTurnId": str(oldest.get("id"))})
        except RpcError as exc:
            await self._warn(f"agent rejected rollback({turns}): {exc.message}")
        except PeerClosed:
            return  # the exit watcher reports it

    async def _compact(self) -> None:
        try:
            await self._call("thread/compact/start", {"threadId": self.state.thread_id})
        except RpcError as exc:
            message = f"agent rejected compaction: {exc.message}"
            await self._warn(message)
            await self._events.send(d.TurnStopped(Failed(message=message)))

    async def _load_commands(self) -> None:
        """Skills are the app-server's slash commands; they arrive after the session opened."""
        with suppress(RpcError):
            result = await self._call("skills/list", {"cwds": [self._request.cwd]})
            if self.state.apply_skills(result):
                await self._events.send(d.InfoChanged(self.state.info()))

    # --- from the agent ------------------------------------------------------------------------------------

    async def _on_turn_started(self, params: Any) -> None:
        if not self._live or not isinstance(params, Mapping) or not self._threads.turn_started(params):
            return
        turn_id = self._threads.turn_id
        if self._starting:
            self._starting = False
            await self._events.send(d.TurnAck())
        if turn_id is None:
            return
        if self._interrupt_held:
            self._interrupt_held = False
            self._spawn(self._interrupt(turn_id))
        held, self._steers_held = self._steers_held, []
        for prompt in held:
            self._spawn(self._steer(prompt, turn_id))

    async def _on_turn_completed(self, params: Any) -> None:
        if not self._live or not isinstance(params, Mapping):
            return
        events = self._threads.turn_completed(params)
        if not events:
            return
        self._interrupt_held = False
        self._cancel_requests()
        for _ in self._steers_held:
            await self._events.send(d.SteerResult(accepted=False))
        self._steers_held.clear()
        for event in events:
            await self._events.send(event)

    async def _on_name(self, params: Any) -> None:
        if not isinstance(params, Mapping) or params.get("threadId") != self.state.thread_id:
            return
        if self.state.apply_title(params.get("threadName")) and self._live:
            await self._events.send(d.InfoChanged(self.state.info()))

    async def _on_notification(self, method: str, params: Any) -> None:
        events = [
            d.AuthLost(self._logins()) if isinstance(event, d.AuthLost) else event
            for event in self._threads.notification(method, params if isinstance(params, Mapping) else {})
        ]
        if self._live:
            for event in events:
                await self._events.send(event)
            return
        for event in events:  # before the thread is bound only diagnostics are news
            diagnostic = isinstance(event, d.AdapterEvent) and isinstance(event.kind, DiagnosticEvent)
            if diagnostic and len(self._early) < EARLY_DIAGNOSTICS:
                assert isinstance(event, d.AdapterEvent)
                self._early.append(event)

    def _request_handler(self, method: str) -> Any:
        async def handle(params: Any) -> Any:
            return await self._on_request(method, params if isinstance(params, Mapping) else {})

        return handle

    async def _on_request(self, method: str, params: Mapping[str, Any]) -> Any:
        if method not in server_requests.HANDLED:
            await self._warn(f"refused the agent's {method} request (not supported)")
            raise RpcError(METHOD_NOT_FOUND, f"{method} is not supported by this client")
        if not self._live or self._closing:
            return server_requests.answer_result(method, None, params)
        request_id = "r" + json.dumps(current_request_id.get())  # `r` + the raw id's JSON
        opened = server_requests.opened(method, request_id, params, self._threads)
        pending = _Pending(method, params, asyncio.get_running_loop().create_future())
        self._pending[request_id] = pending
        try:
            thread = params.get("threadId")
            parent = self._threads.children.get(str(thread)) if thread != self.state.thread_id else None
            await self._events.send(d.AdapterEvent(opened, parent_tool_id=parent))
            return server_requests.answer_result(method, await pending.answer, params)
        finally:
            del self._pending[request_id]

    def _logins(self) -> list[LoginMethod]:
        installation = self._request.installation
        row = catalog.profile(installation.id)
        return catalog.login_methods(row, installation.executable_path) if row is not None else []

    def _cancel_requests(self) -> None:
        for pending in self._pending.values():
            if not pending.answer.done():
                pending.answer.set_result(None)

    async def _watch_exit(self) -> None:
        assert self._child is not None
        status = await self._child.wait()
        await self._report_exit(status, self._child.stderr_tail())

    # --- plumbing ------------------------------------------------------------------------------------------

    async def _call(self, method: str, params: Mapping[str, Any]) -> Any:
        """One app-server call. Raises `RpcError` (refused) or `PeerClosed` (the app-server went away)."""
        assert self._peer is not None
        return await self._peer.request(method, params)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return super()._spawn(_until_gone(work))


async def _until_gone(work: Coroutine[Any, Any, None]) -> None:
    """Run `work`; a connection that closed under it is the exit watcher's to report, not an error here."""
    with suppress(PeerClosed):
        await work


def user_input(prompt: d.PromptInput, skills: Mapping[str, str]) -> list[dict[str, Any]]:
    """`turn/start` input: a `/skill` the text starts with as that skill's input, image attachments as local image
    refs (the app-server reads them), then the text naming every attachment."""
    words = prompt.text.split(maxsplit=1)
    name = words[0][1:] if words and words[0].startswith("/") else ""
    skill = [{"type": "skill", "name": name, "path": skills[name]}] if name in skills else []
    images = [
        {"type": "localImage", "path": path}
        for path in prompt.attachments
        if (mimetypes.guess_type(path)[0] or "").startswith("image/")
    ]
    return [*skill, *images, {"type": "text", "text": prompt_text(prompt)}]
