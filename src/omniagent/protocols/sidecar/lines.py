"""Output lines: hello, reply, error, event, session error, closed (`Line` in the schema; untagged)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from msgspec import UNSET, UnsetType

from omniagent.protocols.sidecar.agents import LoginMethod
from omniagent.protocols.sidecar.base import SidecarModel
from omniagent.protocols.sidecar.events import Event


class ErrorKind(StrEnum):
    """Every `ErrorBody.kind` the sidecar sends, with the extra fields each carries."""

    NOT_INSTALLED = "NotInstalled"  # agent
    SPAWN_FAILED = "SpawnFailed"  # detail
    AUTH_REQUIRED = "AuthRequired"  # login
    HANDSHAKE_TIMEOUT = "HandshakeTimeout"
    UNSUPPORTED_FEATURE = "UnsupportedFeature"  # detail
    INVALID_CONFIGURATION = "InvalidConfiguration"  # detail
    INVALID_REQUEST = "InvalidRequest"  # detail
    RESUME_FAILED = "ResumeFailed"  # detail
    SESSION_BUSY = "SessionBusy"
    PROTOCOL_FAILED = "ProtocolFailed"  # detail
    PROCESS_EXITED = "ProcessExited"  # status, stderr
    SESSION_CLOSED = "SessionClosed"
    BAD_FRAME = "BadFrame"  # detail
    UNKNOWN_SESSION = "UnknownSession"  # session


class ErrorBody(SidecarModel):
    """`{"kind", "message", …variant fields}`: each kind's own fields (see `ErrorKind`), left out when unset."""

    kind: str
    message: str
    agent: str | UnsetType = UNSET
    detail: str | UnsetType = UNSET
    login: list[LoginMethod] | UnsetType = UNSET
    status: str | UnsetType = UNSET
    stderr: str | UnsetType = UNSET
    session: str | UnsetType = UNSET


class Hello(SidecarModel):
    protocol: int
    anyagent: str


class HelloLine(SidecarModel):
    hello: Hello


class ReplyLine(SidecarModel):
    id: int
    ok: Any


class ErrorLine(SidecarModel):
    id: int | None
    error: ErrorBody


class EventLine(SidecarModel):
    event: Event


class SessionErrorLine(SidecarModel):
    session: str
    error: ErrorBody


class ClosedLine(SidecarModel):
    closed: str
