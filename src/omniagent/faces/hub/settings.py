"""What the hub's server is told at start: where it listens (for the Host and Origin checks) and its limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from omniagent.hub.log import DEFAULT_RETENTION
from omniagent.wire.jsonl import MAX_LINE_BYTES

# The names a loopback client may use for us, whatever address we bound.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True, slots=True)
class Limits:
    """What one hub grants its clients. The defaults are in docs/hub.md."""

    # ACP connections open at once (streamable HTTP and WebSocket together); the next one is refused with 503.
    max_clients: int = 64
    # One POST body or WebSocket message: the ACP line limit of the stdio faces.
    max_body_bytes: int = MAX_LINE_BYTES
    # A streamable HTTP connection with no stream open and no request for this long is closed.
    idle_seconds: float = 300.0
    # Server→client messages a streamable HTTP connection keeps for a `Last-Event-ID` reconnect.
    replay_messages: int = 4096
    # Lines of one per-session stream waiting for its reader before the oldest is dropped: a whole replay fits.
    session_backlog: int = DEFAULT_RETENTION
    # Seconds between SSE comment lines on a quiet stream, so a dead client is noticed and proxies keep it open.
    keepalive_seconds: float = 15.0
    # Seconds `initialize` may take before the POST that sent it is answered 504.
    initialize_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class Listener:
    """Where the hub listens, as clients must name it: `Host` must be one of `hosts` with `port` (or no port when
    `port` is the scheme's default), and an `Origin`, when present, the same scheme, host and port."""

    port: int
    tls: bool = False
    hosts: frozenset[str] = field(default_factory=lambda: frozenset(LOOPBACK_NAMES))

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def allows_host(self, value: str) -> bool:
        """Whether a `Host` header (or HTTP/2 `:authority`) names this listener."""
        host, port = _split_authority(value.strip().lower())
        default = 443 if self.tls else 80
        return host in self.hosts and (port == self.port or (port is None and self.port == default))

    def allows_origin(self, value: str) -> bool:
        """Whether an `Origin` header names this listener (a page served by the hub itself, if any)."""
        scheme, sep, authority = value.strip().lower().partition("://")
        return sep == "://" and scheme == self.scheme and "/" not in authority and self.allows_host(authority)


def _split_authority(value: str) -> tuple[str, int | None]:
    """`host[:port]` (an IPv6 host in brackets) → (host, port); a malformed port reads as port -1 (never ours)."""
    if value.startswith("["):
        host, _, rest = value.partition("]")
        host += "]"
        if not rest:
            return host, None
        port_text = rest[1:] if rest.startswith(":") else "x"
    else:
        host, sep, port_text = value.rpartition(":")
        if not sep:
            return value, None
    return host, int(port_text) if port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 else -1
