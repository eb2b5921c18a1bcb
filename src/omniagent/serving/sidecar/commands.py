"""The sidecar's commands and events (`omniagent serve`, and a hub's `/sidecar`, after the hello): each command line →
one call and its reply line; each followed session's events → event lines, then `closed`.

The sessions come from a `SessionHost`: `RuntimeHost` for `omniagent serve` (the wire owns its sessions: EOF closes
them), or a hub's (`serving/sidecar/hub_host.py`: the hub owns them; the wire attaches, and EOF detaches). The wire
is the same over both; the hub's extension (`attach`, `detach`, `list`) needs a hub.

Commands run concurrently (replies may come out of order; one session's commands apply in arrival order).
One writer owns the output (`connection.py` starts it); logs go to stderr. Nothing here decides a turn rule.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol

from omniagent.protocols.sidecar.base import ENCODER, SidecarModel, ValidationError, convert, describe, wire
from omniagent.protocols.sidecar.commands import (
    Attach,
    Attached,
    Cancel,
    Close,
    Command,
    Compact,
    Configure,
    Dequeue,
    Detach,
    Discover,
    Generate,
    GetPlanUsage,
    Info,
    ListSessions,
    Open,
    Probe,
    Rollback,
    SendAnswer,
    SendPrompt,
    SessionCommand,
    SessionList,
)
from omniagent.protocols.sidecar.events import Event
from omniagent.protocols.sidecar.lines import (
    ClosedLine,
    ErrorBody,
    ErrorKind,
    ErrorLine,
    ReplyLine,
    SessionErrorLine,
)
from omniagent.runtime.errors import AgentError, InvalidRequest, ProtocolFailed, UnknownSession
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import Runtime
from omniagent.runtime.session import Session, SessionControls
from omniagent.wire.decode import BadJson, NumberOutOfRange, decode_line
from omniagent.wire.encode import dumps
from omniagent.wire.errors import WireError
from omniagent.wire.jsonl import LineWriter

log = logging.getLogger("omniagent.serve")

# Lines the writer may hold before event forwarders wait for the reader (a slow reader then makes sessions lag).
WRITER_BACKLOG = 256
_U64 = 2**64


# One session as the wire's session commands reach it: the runtime's `Session`, or a hub `Attachment`.
SessionHandle = SessionControls


class SessionHost(Protocol):
    """Where a wire's sessions come from, and what leaving does to them (the seam between `serve` and a hub)."""

    @property
    def runtime(self) -> Runtime:
        """For the commands that are no session's: discover, probe, plan_usage, generate."""
        ...

    async def open(self, command: Open) -> SessionHandle:
        """A new session for this wire. Raises what `Runtime.open` raises."""
        ...

    async def attach(self, command: Attach) -> tuple[SessionHandle, Attached]:
        """Follow a session that exists already (one of an earlier run of the hub resumed first); the reply says
        what the replay covers."""
        ...

    def detach(self, session_id: str) -> None:
        """Stop following the session (its `follow` then ends); the session goes on."""
        ...

    async def sessions(self, after: int | None) -> SessionList:
        """Every session the host knows; with `after` (a list version), once the list changed past it."""
        ...

    def follow(self, session: SessionHandle) -> AsyncIterator[list[bytes]]:
        """The session's events as this wire's lines (`event_line`), in lists of what is ready. Ends when the
        session ends (raising its agent's error, if any) or this wire stops following it (a detach, a reader too
        far behind)."""
        ...

    async def leave(self) -> None:
        """The wire ended (EOF): what happens to its sessions is the host's (closed, or left running)."""
        ...


class RuntimeHost:
    """`omniagent serve`: the wire owns the sessions it opens, in a Runtime of its own; EOF closes them all."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    async def open(self, command: Open) -> SessionHandle:
        return await self._runtime.open(command.agent, command.dir, OpenOptions.from_wire(command))

    async def attach(self, command: Attach) -> tuple[SessionHandle, Attached]:
        raise _needs_a_hub(command.cmd)

    def detach(self, session_id: str) -> None:
        raise _needs_a_hub("detach")

    async def sessions(self, after: int | None) -> SessionList:
        raise _needs_a_hub("list")

    async def follow(self, session: SessionHandle) -> AsyncIterator[list[bytes]]:
        assert isinstance(session, Session)
        async for events in session.events.batches():
            yield [event_line(event) for event in events]

    async def leave(self) -> None:
        await self._runtime.aclose()


def _needs_a_hub(command: str) -> InvalidRequest:
    return InvalidRequest(f"`{command}` is a hub command: `omniagent serve` owns its sessions (see `omniagent hub`)")


class Sidecar:
    """Serves one host's sessions over the sidecar wire: lines from `serve`'s input, replies and events to
    `writer`. `broken` is set when the writer's output fails."""

    def __init__(self, host: SessionHost, writer: LineWriter, broken: asyncio.Event) -> None:
        self._host = host
        self._writer = writer
        self._broken = broken
        self._eof = False
        self._forwarders: set[asyncio.Task[None]] = set()
        self._following: dict[str, asyncio.Task[None]] = {}  # session id → the forwarder of its events
        self._attaching: set[str] = set()  # sessions an `attach` of this wire is resuming or attaching to
        # Sessions this wire opened or attached to (ended ones kept). The runtime also holds probe/generate
        # throwaways, which an app never opened: their ids must answer UnknownSession.
        self._sessions: dict[str, SessionHandle] = {}

    async def serve(self, lines: AsyncIterator[bytes | WireError]) -> None:
        """Answer command lines until EOF (or broken output), then leave (the host closes or detaches every
        session) and wait for every `closed`. A `WireError` in `lines` is a frame that could not be read (too
        large, not text): it is answered `BadFrame`. The caller closes the writer after this returns: a reader
        that is behind is still owed buffered events and `closed`."""
        async with asyncio.TaskGroup() as commands:
            reading = asyncio.ensure_future(self._read(lines, commands))
            broken = asyncio.ensure_future(self._broken.wait())
            await asyncio.wait({reading, broken}, return_when=asyncio.FIRST_COMPLETED)
            reading.cancel()
            broken.cancel()
            self._eof = True
            await self._close_all()
        # Every command has replied; sessions opened meanwhile were closed by their own `open` handler.
        await asyncio.gather(*self._forwarders)

    async def _read(self, lines: AsyncIterator[bytes | WireError], commands: asyncio.TaskGroup) -> None:
        async for line in lines:
            if isinstance(line, WireError):
                self._send_error(None, _bad_frame(str(line)))
                continue
            commands.create_task(self._dispatch(line))

    async def _close_all(self) -> None:
        await self._host.leave()

    # --- one command ---------------------------------------------------------------------------------------

    async def _dispatch(self, line: bytes) -> None:
        out_of_range = None  # JSON holding a number out of range: the frame is refused, with its id when it has one
        try:
            value = decode_line(line)
        except NumberOutOfRange as exc:
            value, out_of_range = exc.value, exc.reason
        except BadJson as exc:
            self._send_error(None, _bad_frame(f"invalid JSON: {exc.reason}"))
            return
        frame_id = _frame_id(value)
        if frame_id is None:
            # Checked before the command: a bad frame's error keeps its id only when that id is a u64.
            self._send_error(None, _bad_frame(_why_no_id(value)))
            return
        if out_of_range is not None:
            self._send_error(frame_id, _bad_frame(out_of_range))
            return
        try:
            command: Command = convert(value, Command)
        except ValidationError as exc:
            self._send_error(frame_id, _bad_frame(describe(exc)))
            return
        reply: SidecarModel
        try:
            if isinstance(command, Open):
                await self._open(command)
                return
            if isinstance(command, Attach):
                await self._attach(command)
                return
            reply = ReplyLine(id=command.id, ok=await self._run(command))
        except AgentError as error:
            reply = ErrorLine(id=command.id, error=error.body())
        except Exception:
            log.exception("command %s failed", command.cmd)
            reply = ErrorLine(id=command.id, error=ProtocolFailed("internal error").body())
        self._send(reply)

    async def _open(self, command: Open) -> None:
        session = await self._host.open(command)
        self._start(session, ReplyLine(id=command.id, ok=session.info().dump()))
        if self._eof:
            # G5: an open that finished after EOF is left at once (closed, or detached from); its `closed` appears.
            await self._host.leave()

    async def _attach(self, command: Attach) -> None:
        self._not_following(command.session)
        self._attaching.add(command.session)  # resuming a session takes a while: a second attach must wait its turn
        try:
            session, attached = await self._host.attach(command)
        finally:
            self._attaching.discard(command.session)
        self._start(session, ReplyLine(id=command.id, ok=attached.dump()))

    def _not_following(self, session_id: str) -> None:
        following = self._following.get(session_id)
        if session_id in self._attaching or (following is not None and not following.done()):
            # A second forwarder would break G4 (`closed` once, nothing after it) for the first.
            raise InvalidRequest(f"this client follows session {session_id} already (detach first)")

    def _start(self, session: SessionHandle, reply: ReplyLine) -> None:
        self._sessions[session.id] = session
        self._send(reply)
        # G1: forwarding starts only after the reply is queued on the writer.
        forwarder = asyncio.ensure_future(self._forward(session))
        self._forwarders.add(forwarder)
        self._following[session.id] = forwarder

    async def _detach(self, command: Detach) -> None:
        if command.session not in self._sessions:
            raise UnknownSession(command.session)
        self._host.detach(command.session)  # refused by a host that owns its sessions
        following = self._following.get(command.session)
        if following is not None:
            # The session's `closed` is written before the reply: once the reply is read, nothing more of it comes.
            await asyncio.shield(following)

    async def _run(self, command: Any) -> Any:
        runtime = self._host.runtime
        if isinstance(command, Discover):
            return (await runtime.discover()).dump()
        if isinstance(command, Probe):
            return (await runtime.probe(command.agent)).dump()
        if isinstance(command, GetPlanUsage):
            return (await runtime.plan_usage(command.agent)).dump()
        if isinstance(command, Generate):
            return await runtime.generate(command.agent, command.dir, command.prompt, OpenOptions.from_wire(command))
        if isinstance(command, ListSessions):
            return (await self._host.sessions(command.after)).dump()
        if isinstance(command, Detach):
            return await self._detach(command)
        return await self._run_session_command(command)

    async def _run_session_command(self, command: SessionCommand) -> Any:
        session = self._sessions.get(command.session)
        if session is None:
            raise UnknownSession(command.session)
        if isinstance(command, Info):
            return session.info().dump()
        if isinstance(command, SendPrompt):
            return (await session.prompt(command.text, command.attachments)).dump()
        if isinstance(command, Dequeue):
            return await session.dequeue(command.prompt)
        if isinstance(command, SendAnswer):
            return await session.answer(command.request, command.answer)
        if isinstance(command, Configure):
            return await session.configure(command.option, command.value)
        if isinstance(command, Rollback):
            return await session.rollback(command.turns, command.scope)
        if isinstance(command, Compact):
            return await session.compact()
        if isinstance(command, Cancel):
            return await session.cancel(command.clear_queue)
        if isinstance(command, Close):
            return await session.close()
        raise AssertionError(f"unhandled command {command!r}")

    async def _forward(self, session: SessionHandle) -> None:
        writer = self._writer
        try:
            async for events in self._host.follow(session):  # the events' lines
                if writer.failed is not None:
                    continue  # nobody reads us any more: drain so the session can end
                writer.send_many(events)
                if writer.backlog >= WRITER_BACKLOG:
                    await writer.wait_backlog_below(WRITER_BACKLOG // 2)
        except AgentError as error:
            self._send(SessionErrorLine(session=session.id, error=error.body()))
        except Exception:
            log.exception("session %s: forwarding failed", session.id)
        self._send(ClosedLine(closed=session.id))

    # --- output --------------------------------------------------------------------------------------------

    def _send(self, line: SidecarModel) -> None:
        if self._writer.failed is None:
            self._writer.send_nowait(_encode(line))

    def _send_error(self, frame_id: int | None, body: ErrorBody) -> None:
        self._send(ErrorLine(id=frame_id, error=body))


def _frame_id(value: Any) -> int | None:
    """The id a bad frame carried, when it is a u64 (otherwise the error says `id: null`)."""
    if isinstance(value, dict):
        frame_id = value.get("id")
        if isinstance(frame_id, int) and not isinstance(frame_id, bool) and 0 <= frame_id < _U64:
            return frame_id
    return None


def _encode(line: SidecarModel) -> bytes:
    """The line's JSON; a string with no UTF-8 form (a path with undecodable bytes, as surrogate escapes) gets `?`
    in place of those characters instead of failing the command or the session's stream."""
    try:
        return line.encode()
    except UnicodeEncodeError:
        return dumps(line.dump())


def event_line(event: Event) -> bytes:
    """`{"event":…}`, encoded once (the hot path: no line model around the event)."""
    try:
        return ENCODER.encode({"event": wire(event)})
    except UnicodeEncodeError:
        return dumps({"event": event.dump()})


def _why_no_id(value: Any) -> str:
    if not isinstance(value, dict):
        return f"expected a JSON object, got {type(value).__name__}"
    if "id" not in value:
        return "missing field `id`"
    return f"id must be an integer from 0 to 2^64-1, got {json.dumps(value['id'])[:40]}"


def _bad_frame(detail: str) -> ErrorBody:
    return ErrorBody(kind=ErrorKind.BAD_FRAME.value, message=f"not a command: {detail}", detail=detail)
