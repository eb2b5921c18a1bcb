"""A real `omniagent serve` subprocess for tests, read through a checker that holds the wire to its rules.

Every stdout line is parsed and validated against the anyagent schema (`tests.sidecar_schema.validate_line`).
On top of the schema the client checks, passively and on every line, the guarantees any app relies on
(docs/sidecar.md, "Output lines" and "Ordering guarantees"): hello first and once; each command id answered at
most once; G1 no line of a session before its `open` reply; G2 each session's `sequence` from 1, gap-free; G3
nothing but events after a session error; G4 `closed` at most once and nothing after it.
A broken rule fails the next wait and the teardown.

Waits are bounded (`WAIT`) and wake on new lines; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from tests.sidecar_schema import validate_line

WAIT = 10.0  # seconds: the bound on every wait
READ_LIMIT = 1024 * 1024  # our stdout reader buffers at most about twice this before the pipe fills
Line = dict[str, Any]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mock-scripts"

# An event line differs from the previous ones of the same shape only in these two members; validating the shape
# once and these two by themselves is the same check as validating every line whole, at a fraction of the cost.
_VOLATILE = re.compile(rb'"sequence":(\d+),"occurred_at":(\{"secs_since_epoch":(\d+),"nanos_since_epoch":(\d+)\})')
# SystemTime's bounds (the schema's): both u64, nanos below one second. Checked by hand on a line whose shape was
# validated already, so that a reader keeps up with a 10k events/s flood on a loaded machine.
_U64 = 2**64


class WireViolation(AssertionError):
    """The sidecar wrote a line that breaks the schema or an ordering rule."""


class _Checker:
    """Validates each line and tracks the per-session rules."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self.opened: list[str] = []  # session ids, in the order their `open` replies arrived
        self.closed: list[str] = []
        self.sent: dict[int, str] = {}  # id → cmd, for commands sent through `send`
        self._replied: set[int] = set()
        self._sequence: dict[str, int] = {}
        self._failed: set[str] = set()
        self._shapes: set[bytes] = set()
        self._count = 0

    def check(self, raw: bytes) -> Line:
        self._count += 1
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self._fail(f"not a JSON object: {raw[:200]!r}")
            return {}
        line: Line = value
        self._validate(raw, line)
        if self._count == 1:
            if set(line) != {"hello"}:
                self._fail(f"first line is not hello: {line}")
        elif "hello" in line:
            self._fail("a second hello")
        if "id" in line:
            self._on_reply(line)
        elif "event" in line:
            self._on_event(line["event"])
        elif "session" in line:
            self._on_session_line(line["session"], line)
            self._failed.add(line["session"])
        elif "closed" in line:
            session = line["closed"]
            self._on_session_line(session, line)
            self.closed.append(session)
        return line

    def _validate(self, raw: bytes, line: Any) -> None:
        try:
            match = _VOLATILE.search(raw) if isinstance(line, dict) and "event" in line else None
            if match is None:
                validate_line(line)
                return
            shape = raw[: match.start()] + raw[match.end() :]
            if shape not in self._shapes:
                validate_line(line)
                self._shapes.add(shape)
            else:  # the sequence is digits: a u64 already
                secs, nanos = int(match.group(3)), int(match.group(4))
                if not (secs < _U64 and nanos < 1_000_000_000):
                    self._fail(f"schema: SystemTime out of range in {raw[:300]!r}")
        except Exception as exc:  # jsonschema.ValidationError, with the line for context
            self._fail(f"schema: {exc.__class__.__name__}: {str(exc)[:300]} in {raw[:300]!r}")

    def _on_reply(self, line: Line) -> None:
        frame_id = line["id"]
        if frame_id is None:
            return
        if frame_id in self._replied:
            self._fail(f"id {frame_id} answered twice")
        self._replied.add(frame_id)
        if self.sent.get(frame_id) == "open" and "ok" in line:
            self.opened.append(line["ok"]["id"])

    def _on_event(self, event: Line) -> None:
        session = event["session_id"]
        self._on_session_line(session, {"event": event})
        expected = self._sequence.get(session, 0) + 1
        if event["sequence"] != expected:
            self._fail(f"G2: {session} sequence {event['sequence']}, expected {expected}")
        self._sequence[session] = event["sequence"]

    def _on_session_line(self, session: str, line: Line) -> None:
        if session not in self.opened:
            self._fail(f"G1: a line of {session} before its open reply: {line}")
        if session in self.closed:
            self._fail(f"G4: a line of {session} after its closed: {line}")
        if session in self._failed and "event" not in line and "closed" not in line:
            self._fail(f"G3: a line after the session error of {session}: {line}")

    def _fail(self, message: str) -> None:
        self.violations.append(message)


class Sidecar:
    """One `python -m omniagent serve` subprocess. Use `async with Sidecar.running(mock=...) as sidecar:`."""

    def __init__(self, proc: asyncio.subprocess.Process, stdout: asyncio.StreamReader,
                 stdout_transport: asyncio.ReadTransport, wait: float = WAIT) -> None:  # fmt: skip
        self.proc = proc
        self.wait = wait  # the bound on every wait of this sidecar
        self.lines: list[Line] = []
        self.stderr = bytearray()
        self.check = _Checker()
        self._stdout = stdout
        self._stdout_transport = stdout_transport
        self._grew = asyncio.Event()
        self._stderr_grew = asyncio.Event()
        self._reading = asyncio.Event()
        self._reading.set()
        self._eof = False
        self._next_id = 1
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]

    @classmethod
    async def start(cls, *args: str, mock: str | None = None, env: Mapping[str, str] | None = None,
                    prefix: Sequence[str] = (), wait: float = WAIT) -> Sidecar:  # fmt: skip
        """Spawn the sidecar with pipes; `mock` is a bundled script name or a fixture file name (`x.json`).
        `prefix` runs it through another command (a network namespace's nsenter); `wait` bounds every wait."""
        argv = [*prefix, sys.executable, "-m", "omniagent", "serve", *args]
        if mock is not None:
            argv += ["--mock", str(FIXTURES / mock) if mock.endswith(".json") else mock]
        # Our own pipe for stdout, so a test can close its read end (a consumer that went away).
        read_fd, write_fd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=write_fd, stderr=asyncio.subprocess.PIPE,
                env=dict(env) if env is not None else None,
            )  # fmt: skip
        finally:
            os.close(write_fd)
        reader = asyncio.StreamReader(limit=READ_LIMIT)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
        )
        return cls(proc, reader, transport, wait)

    @classmethod
    @asynccontextmanager
    async def running(cls, *args: str, mock: str | None = None, env: Mapping[str, str] | None = None,
                      prefix: Sequence[str] = (), wait: float = WAIT) -> AsyncIterator[Sidecar]:  # fmt: skip
        sidecar = await cls.start(*args, mock=mock, env=env, prefix=prefix, wait=wait)
        try:
            yield sidecar
        finally:
            await sidecar.aclose()
        sidecar.assert_clean()

    # --- input ---------------------------------------------------------------------------------------------

    async def send(self, cmd: str, **fields: Any) -> int:
        """Send one command with a fresh id; returns the id."""
        frame_id = self._next_id
        self._next_id += 1
        self.check.sent[frame_id] = cmd
        await self.send_raw(json.dumps({"id": frame_id, "cmd": cmd, **fields}).encode() + b"\n")
        return frame_id

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        async with asyncio.timeout(self.wait):
            await self.proc.stdin.drain()

    async def end_input(self) -> None:
        """Close the sidecar's stdin (EOF)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with suppress(ConnectionError):
            await self.proc.stdin.wait_closed()

    # --- replies -------------------------------------------------------------------------------------------

    async def reply(self, frame_id: int) -> Line:
        """The `ok` or `error` line answering `frame_id`."""
        return await self.wait_for(lambda line: line.get("id") == frame_id, f"the reply to {frame_id}")

    async def ok(self, cmd: str, **fields: Any) -> Any:
        """Send a command that must succeed; returns its `ok` value."""
        line = await self.reply(await self.send(cmd, **fields))
        assert "ok" in line, f"{cmd} failed: {line}"
        return line["ok"]

    async def error(self, cmd: str, **fields: Any) -> Line:
        """Send a command that must fail; returns its ErrorBody."""
        line = await self.reply(await self.send(cmd, **fields))
        assert "error" in line, f"{cmd} did not fail: {line}"
        body: Line = line["error"]
        return body

    async def open(self, **fields: Any) -> str:
        """Open a mock session in the current directory; returns its id."""
        info = await self.ok("open", **{"agent": "mock", "dir": ".", **fields})
        session: str = info["id"]
        return session

    # --- waiting -------------------------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[Line], bool], what: str, *, start: int = 0) -> Line:
        """The first line at index ≥ `start` matching `predicate`, waiting (bounded) for it to arrive."""
        index = start
        try:
            async with asyncio.timeout(self.wait):
                while True:
                    self._raise_violations()
                    while index < len(self.lines):
                        if predicate(self.lines[index]):
                            return self.lines[index]
                        index += 1
                    if self._eof:
                        raise AssertionError(f"stdout ended before {what}; last lines: {self.lines[-5:]}")
                    self._grew.clear()
                    await self._grew.wait()
        except TimeoutError:
            raise AssertionError(f"no {what} within {self.wait} s; last lines: {self.lines[-5:]}") from None

    async def wait_closed(self, session: str) -> Line:
        return await self.wait_for(lambda line: line.get("closed") == session, f"closed {session}")

    async def wait_event(self, session: str, kind: str, *, start: int = 0) -> Line:
        """The first `kind` event of `session` at or after line `start`; returns the event."""
        line = await self.wait_for(
            lambda line: "event" in line and line["event"]["session_id"] == session and kind_of(line["event"]) == kind,
            f"{kind} on {session}",
            start=start,
        )
        event: Line = line["event"]
        return event

    async def wait_stderr(self, text: str) -> None:
        """Wait (bounded) until stderr contains `text` (stderr is read even while stdout is paused)."""
        try:
            async with asyncio.timeout(self.wait):
                while text.encode() not in self.stderr:
                    self._stderr_grew.clear()
                    await self._stderr_grew.wait()
        except TimeoutError:
            raise AssertionError(f"stderr never said {text!r}: {self.stderr[-500:]!r}") from None

    async def wait_exit(self) -> int:
        """Wait (bounded) until the process exited and stdout ended; returns the exit code."""
        async with asyncio.timeout(self.wait):
            code = await self.proc.wait()
            await asyncio.gather(*self._tasks)
        return code

    def events(self, session: str) -> list[Line]:
        """Every event of `session` seen so far, in arrival order."""
        return [line["event"] for line in self.lines if "event" in line and line["event"]["session_id"] == session]

    # --- flow control --------------------------------------------------------------------------------------

    def pause_reading(self) -> None:
        """Stop reading stdout (the pipe then fills and the sidecar's writes wait)."""
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def close_stdout(self) -> None:
        """Close our read end of the sidecar's stdout: its next write fails."""
        self._stdout_transport.close()

    # --- teardown ------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """EOF, then wait for the exit (bounded), killing the process if it hangs."""
        self.resume_reading()
        if self.proc.returncode is None:
            with suppress(ConnectionError):
                await self.end_input()
            try:
                async with asyncio.timeout(self.wait):
                    await self.proc.wait()
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
                raise AssertionError("the sidecar did not exit within the bound after EOF") from None
        try:
            async with asyncio.timeout(self.wait):
                await asyncio.gather(*self._tasks)
        finally:
            self._stdout_transport.close()

    def assert_clean(self) -> None:
        self._raise_violations()
        assert b"Traceback" not in self.stderr, self.stderr.decode(errors="replace")

    def _raise_violations(self) -> None:
        if self.check.violations:
            raise WireViolation("; ".join(self.check.violations[:5]))

    async def _read_stdout(self) -> None:
        while True:
            await self._reading.wait()
            try:
                raw = await self._stdout.readline()
            except (ConnectionError, OSError):
                break
            if not raw:
                break
            if not raw.endswith(b"\n"):
                self.check.violations.append(f"a line without newline at EOF: {raw[:200]!r}")
            self.lines.append(self.check.check(raw.rstrip(b"\n")))
            self._grew.set()
        self._eof = True
        self._grew.set()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            self._stderr_grew.set()


def kind_of(event: Line) -> str:
    """An event's kind tag: a unit kind is a bare string, a data kind a single-key object."""
    kind = event["kind"]
    return kind if isinstance(kind, str) else next(iter(kind))


def texts(events: list[Line]) -> list[str]:
    """The text of every TextDelta among `events`, in order."""
    return [e["kind"]["TextDelta"]["text"] for e in events if kind_of(e) == "TextDelta"]


def statuses(events: list[Line]) -> list[str]:
    return [e["kind"]["StatusChanged"] for e in events if kind_of(e) == "StatusChanged"]
