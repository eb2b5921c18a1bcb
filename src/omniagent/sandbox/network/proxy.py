"""The engine's end of the exec sandbox's allowlist proxy: the connections one sandboxed command opens, each served
as an HTTP proxy under the session's `NetworkRules`, logged, and summed up for the model.

The bridge (bridge.py) hands every connection accepted inside the sandbox to the engine over a socketpair. Each
one is then served here, in the engine's network namespace:

- `CONNECT host:port` (https, and any TLS or other TCP protocol): a tunnel, once allowed.
- An absolute `http://` URL (`GET http://host/path HTTP/1.1`): forwarded as one request to the host, with
  `Connection: close` (one request per connection) and the proxy's own headers (`Proxy-*`) dropped.
- Anything else is answered 400.

A request is allowed when a rule names its host and port (allowlist.py); the name is then resolved here, once,
and every address checked as `fetch` checks them (addresses.py: loopback and private addresses only when
the session allows its private network; link-local such as 169.254.169.254, multicast and reserved never). The
connection goes to a checked address, never to the name again, so a DNS answer that changes in between cannot
steer it (DNS rebinding). A refusal is answered `403` (`502` when the host cannot be resolved or reached) with the
reason as the status line's phrase and the body, which curl (`-v`) and Python show.

Every connection is logged when it ends (`omniagent.sandbox.network.proxy`: allowed at INFO, refused at
WARNING): time, session, host:port, address, verdict, bytes each way; never a path, a header or a body. The
refusals also end the exec result the model reads (`notes`), so it knows why a download failed.

What this is not: the rules (allowlist.py), the sandbox's side (bridge.py) nor the sandbox (command_line.py). The
sandboxed command is not trusted: whatever it sends over the socketpair is checked (a TCP socket or nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

from omniagent.errors import OmniagentError
from omniagent.sandbox.network.addresses import IPAddress, address_refusal, ip_literal, resolve
from omniagent.sandbox.network.allowlist import NetworkRules, normalize_host

__all__ = ["AllowlistProxy"]

log = logging.getLogger(__name__)

# Bytes of a request line and its headers; a larger head is refused (431).
HEAD_MAX = 16 * 1024
# Seconds a connection may take to send its request head.
HEAD_TIMEOUT = 30.0
# Seconds to resolve the host and open the connection to it.
CONNECT_TIMEOUT = 10.0
# Seconds a refusal's answer may take to be written.
ANSWER_TIMEOUT = 5.0
# Connections one command may have open at once (each costs the engine two file descriptors).
MAX_CONNECTIONS = 64
# Bytes moved per read while tunnelling.
PIPE_CHUNK = 64 * 1024
# File descriptors taken from one message of the bridge (it sends one); the kernel closes any beyond.
FDS_PER_MESSAGE = 4
# Distinct refusals listed in the exec result; the rest are counted (and all are in the log).
MAX_NOTES = 5
USAGE = "the proxy takes CONNECT host:port or an absolute http:// URL"
_METHOD = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# Headers meant for the proxy or for this one connection: never forwarded.
_HOP_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})

Verdict = Literal["allowed", "refused", "failed", "closed"]


class _Refused(OmniagentError):
    """A request the proxy answers with an error status instead of a connection."""

    def __init__(self, status: int, phrase: str, reason: str, verdict: Verdict = "refused") -> None:
        super().__init__(reason)
        self.status = status
        self.phrase = phrase
        self.reason = reason
        self.verdict = verdict


@dataclass(slots=True)
class _Record:
    """What the log says about one connection."""

    started: float
    target: str = ""
    address: str = ""
    verdict: Verdict = "closed"
    reason: str = ""
    up: int = 0
    down: int = 0


@dataclass(frozen=True, slots=True)
class _Request:
    host: str
    port: int
    # The head to send to the host (an absolute-URL request); None for CONNECT.
    forward: bytes | None

    @property
    def target(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


class AllowlistProxy:
    """The proxy of one sandboxed command: pass `sandbox_fd` into the sandbox, run the command inside
    `async with`, then read `notes()`. Leaving the block closes every connection the command still has open."""

    def __init__(self, rules: NetworkRules) -> None:
        self._rules = rules
        # SEQPACKET keeps the bridge's messages apart, each with its one descriptor.
        self._engine_end, self._sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._engine_end.setblocking(False)
        self._tasks: set[asyncio.Task[None]] = set()
        self._records: list[_Record] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reading = False

    @property
    def sandbox_fd(self) -> int:
        """The socketpair end the sandbox's bridge sends connections over."""
        return self._sandbox_end.fileno()

    async def __aenter__(self) -> AllowlistProxy:
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._engine_end.fileno(), self._receive)
        self._reading = True
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop_reading()
        self._engine_end.close()
        self._sandbox_end.close()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks))

    def notes(self) -> tuple[str, ...]:
        """One line per distinct refusal or failure, for the end of the exec result."""
        counts: dict[tuple[Verdict, str, str], int] = {}
        for record in self._records:
            if record.verdict in ("refused", "failed"):
                key = (record.verdict, record.target or "a request", record.reason)
                counts[key] = counts.get(key, 0) + 1
        lines = [
            f"[network: {verdict} {target} — {reason}{f' ({n} times)' if n > 1 else ''}]"
            for (verdict, target, reason), n in list(counts.items())[:MAX_NOTES]
        ]
        if len(counts) > MAX_NOTES:
            lines.append(f"[network: {len(counts) - MAX_NOTES} more kinds of refusal; the engine's log lists them]")
        return tuple(lines)

    # Receiving connections from the bridge -------------------------------------------------------------------

    def _stop_reading(self) -> None:
        if self._reading and self._loop is not None:
            self._loop.remove_reader(self._engine_end.fileno())
            self._reading = False

    def _receive(self) -> None:
        while True:
            try:
                message, fds, _flags, _address = socket.recv_fds(self._engine_end, 16, FDS_PER_MESSAGE)
            except BlockingIOError:
                return
            except OSError:
                self._stop_reading()
                return
            if not message and not fds:
                self._stop_reading()  # the bridge is gone: the sandbox ended
                return
            for fd in fds:
                self._accept(fd)

    def _accept(self, fd: int) -> None:
        try:
            sock = socket.socket(fileno=fd)
        except OSError:
            os.close(fd)  # not a socket: the command sent something of its own
            return
        try:
            stream = sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
            connected = stream and not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        except OSError:
            connected = False
        if not connected:
            sock.close()  # only a TCP connection the bridge accepted is served
            return
        if len(self._tasks) >= MAX_CONNECTIONS:
            record = _Record(time.time(), verdict="refused", reason=f"more than {MAX_CONNECTIONS} connections at once")
            self._records.append(record)
            self._log(record, 0.0)
            with contextlib.suppress(OSError):
                sock.setblocking(False)
                sock.send(_answer(503, "Too Many Connections", record.reason))
            sock.close()
            return
        assert self._loop is not None
        task = self._loop.create_task(self._serve(sock))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # Serving one connection ------------------------------------------------------------------------------------

    async def _serve(self, sock: socket.socket) -> None:
        record = _Record(time.time())
        self._records.append(record)
        began = asyncio.get_running_loop().time()
        writer: asyncio.StreamWriter | None = None
        upstream: asyncio.StreamWriter | None = None
        try:
            reader, writer = await asyncio.open_connection(sock=sock, limit=HEAD_MAX)
            request = await _read_request(reader)
            if request is None:
                return  # closed before asking anything
            record.target = request.target
            refusal = self._rules.refusal(request.host, request.port)
            if refusal is not None:
                raise _Refused(403, refusal, refusal)
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    addresses = await self._resolve(request)
                    up_reader, upstream, address = await _connect(request, addresses)
            except TimeoutError:
                why = f"{request.target} did not answer within {CONNECT_TIMEOUT:g} s"
                raise _Refused(504, why, why, "failed") from None
            record.address, record.verdict = str(address), "allowed"
            if request.forward is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.write(request.forward)
                record.up += len(request.forward)
            await _splice(reader, writer, up_reader, upstream, record)
        except _Refused as refused:
            record.verdict, record.reason = refused.verdict, refused.reason
            if writer is not None:
                await _say(writer, _answer(refused.status, refused.phrase, refused.reason))
        except OSError:
            pass  # the command or the host dropped the connection: the record says how far it got
        except Exception:
            # A fault of ours: this connection ends, the command and the engine go on.
            record.verdict, record.reason = "failed", "the engine's proxy failed on this connection"
            log.exception("the allowlist proxy failed on a connection")
        finally:
            for end in (writer, upstream):
                if end is not None:
                    end.close()
            if writer is None:
                sock.close()
            self._log(record, asyncio.get_running_loop().time() - began)

    async def _resolve(self, request: _Request) -> list[IPAddress]:
        """The host's addresses, resolved once (a literal is its own), when every one of them is allowed."""
        host = request.host
        literal = ip_literal(host)
        pinned = self._rules.pinned(host) if literal is None else []
        if pinned:
            found = [ipaddress.ip_address(address) for address in pinned]
        else:
            found = await resolve(host, request.port)
        if not found:
            why = f"{host} could not be resolved"
            raise _Refused(502, why, why, "failed")
        for address in found:
            kind = _address_kind(address, allow_private=self._rules.allow_private)
            if kind is not None:
                named = f"{address} is" if literal is not None else f"{host} resolves to {address},"
                why = f"{named} {kind}"
                raise _Refused(403, why, why)
        return found

    def _log(self, record: _Record, seconds: float) -> None:
        when = datetime.fromtimestamp(record.started, UTC).isoformat(timespec="milliseconds")
        level = logging.WARNING if record.verdict in ("refused", "failed") else logging.INFO
        log.log(
            level,
            "exec network %s session=%s %s %s address=%s up=%d down=%d seconds=%.2f%s",
            when,
            self._rules.session or "-",
            record.verdict,
            record.target or "-",
            record.address or "-",
            record.up,
            record.down,
            seconds,
            f": {record.reason}" if record.reason else "",
        )


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """The request the connection opens with; None when it closes before sending one."""
    try:
        async with asyncio.timeout(HEAD_TIMEOUT):
            head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise _Refused(400, "Bad Request", USAGE) from None
        return None
    except TimeoutError:
        why = f"no request within {HEAD_TIMEOUT:g} s"
        raise _Refused(408, "Request Timeout", why) from None
    except asyncio.LimitOverrunError:
        why = f"a request head larger than {HEAD_MAX} bytes"
        raise _Refused(431, "Request Header Fields Too Large", why) from None
    return _parse(head)


def _parse(head: bytes) -> _Request:
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise _Refused(400, "Bad Request", USAGE) from None
    line, *headers = text[:-4].split("\r\n")
    parts = line.split(" ")
    if len(parts) != 3 or not _METHOD.match(parts[0]) or not parts[2].startswith("HTTP/1."):
        raise _Refused(400, "Bad Request", USAGE)
    if any(":" not in header or header[:1] in (" ", "\t") for header in headers):
        raise _Refused(400, "Bad Request", USAGE)
    method, target, version = parts
    if method == "CONNECT":
        authority, _, port_text = target.rpartition(":")
        return _Request(_host(authority.removeprefix("[").removesuffix("]")), _port(port_text), None)
    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError:
        raise _Refused(400, "Bad Request", USAGE) from None
    if url.scheme.lower() != "http" or not url.hostname:
        hint = " (https goes through CONNECT)" if url.scheme.lower() == "https" else ""
        raise _Refused(400, "Bad Request", USAGE + hint)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [h for h in headers if h.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
    if not any(h.split(":", 1)[0].strip().lower() == "host" for h in kept):
        kept.insert(0, f"Host: {url.netloc.rpartition('@')[2]}")
    forward = "".join(f"{h}\r\n" for h in [f"{method} {path} {version}", *kept, "Connection: close"]) + "\r\n"
    return _Request(_host(url.hostname), port, forward.encode("ascii"))


def _host(text: str) -> str:
    try:
        return normalize_host(text)
    except ValueError:
        raise _Refused(400, "Bad Request", "the request does not name a valid host") from None


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise _Refused(400, "Bad Request", USAGE)
    return int(text)


def _address_kind(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why a sandboxed command may not reach `address` (what kind it is), or None; fetch's rules, our words."""
    if address_refusal(address, allow_private=True) is not None:
        return "a link-local, multicast, reserved or unspecified address, which the sandbox never reaches"
    if address_refusal(address, allow_private=allow_private) is not None:
        return (
            "a private or loopback address, which sandboxed commands reach only when the session allows its "
            "private network"
        )
    return None


async def _connect(
    request: _Request, addresses: list[IPAddress]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, IPAddress]:
    """A connection to the first checked address that answers (no name is resolved here)."""
    error: OSError | None = None
    for address in addresses:
        try:
            reader, writer = await asyncio.open_connection(str(address), request.port)
        except OSError as exc:
            error = exc
        else:
            return reader, writer, address
    why = f"{request.target} ({addresses[0]}) could not be reached"
    if error is not None and error.strerror:
        why += f": {error.strerror}"
    raise _Refused(502, why, why, "failed")


async def _splice(
    client_reader: asyncio.StreamReader,
    client: asyncio.StreamWriter,
    host_reader: asyncio.StreamReader,
    host: asyncio.StreamWriter,
    record: _Record,
) -> None:
    """Move bytes both ways until both sides are done; an end one side closes is passed on (half-close)."""

    async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, upward: bool) -> None:
        try:
            while data := await source.read(PIPE_CHUNK):
                if sink.is_closing():
                    return
                sink.write(data)
                if upward:
                    record.up += len(data)
                else:
                    record.down += len(data)
                await sink.drain()
            if not sink.is_closing() and sink.can_write_eof():
                sink.write_eof()
        except OSError:
            # One side is gone: end both, so the other direction's read returns too.
            client.close()
            host.close()

    await asyncio.gather(pump(client_reader, host, True), pump(host_reader, client, False))


async def _say(writer: asyncio.StreamWriter, answer: bytes) -> None:
    """Write a refusal, bounded in time (a command that never reads must not hold the connection)."""
    with contextlib.suppress(OSError, TimeoutError):
        async with asyncio.timeout(ANSWER_TIMEOUT):
            writer.write(answer)
            await writer.drain()


def _answer(status: int, phrase: str, reason: str) -> bytes:
    """An error answer whose status phrase and body both carry the reason (curl -v and Python show the phrase)."""
    phrase = phrase.replace("\r", " ").replace("\n", " ")
    body = f"omniagent exec sandbox: {reason}\n".encode()
    head = (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii", "replace") + body
