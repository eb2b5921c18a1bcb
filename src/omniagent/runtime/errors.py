"""The runtime's error vocabulary: one class per sidecar `ErrorBody.kind`, each with the fields that kind carries."""

from __future__ import annotations

from typing import Any

from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.agents import LoginMethod
from omniagent.protocols.sidecar.lines import ErrorBody, ErrorKind
from omniagent.wire.redact import clip, named_secrets, redact

# Characters of an agent's stderr an error carries: its last lines, not a whole log.
STDERR_CHARS = 2000


class AgentError(OmniagentError):
    """A runtime call failed. `kind` names the failure; `fields()` are the extra ErrorBody fields."""

    kind: ErrorKind

    def fields(self) -> dict[str, Any]:
        return {}

    def body(self) -> ErrorBody:
        """This error as the sidecar's ErrorBody."""
        return ErrorBody(kind=self.kind.value, message=str(self), **self.fields())


class _WithDetail(AgentError):
    _template = "{detail}"

    def __init__(self, detail: str) -> None:
        super().__init__(self._template.format(detail=detail))
        self.detail = detail

    def fields(self) -> dict[str, Any]:
        return {"detail": self.detail}


class NotInstalled(AgentError):
    kind = ErrorKind.NOT_INSTALLED

    def __init__(self, agent: str) -> None:
        from omniagent.runtime.advice import install_hint  # the catalog is not needed until this happens

        super().__init__(f"agent not installed: {agent}; {install_hint(agent)}")
        self.agent = agent

    def fields(self) -> dict[str, Any]:
        return {"agent": self.agent}


class SpawnFailed(_WithDetail):
    kind = ErrorKind.SPAWN_FAILED
    _template = "could not start agent: {detail}"


class AuthRequired(AgentError):
    kind = ErrorKind.AUTH_REQUIRED

    def __init__(self, login: list[LoginMethod], *, rejected: str | None = None) -> None:
        super().__init__("agent needs login")
        self.login = login
        # The credential the provider turned down (a variable name or a description), when known: then the
        # login is there but wrong, which a person fixes differently from a missing one (`advice.next_step`).
        self.rejected = rejected

    def fields(self) -> dict[str, Any]:
        return {"login": self.login}


class HandshakeTimeout(AgentError):
    kind = ErrorKind.HANDSHAKE_TIMEOUT

    def __init__(self) -> None:
        super().__init__("agent did not finish its handshake in time")


class UnsupportedFeature(_WithDetail):
    kind = ErrorKind.UNSUPPORTED_FEATURE
    _template = "this agent does not support {detail}"


class InvalidConfiguration(_WithDetail):
    kind = ErrorKind.INVALID_CONFIGURATION
    _template = "invalid configuration: {detail}"


class InvalidRequest(_WithDetail):
    kind = ErrorKind.INVALID_REQUEST
    _template = "invalid request: {detail}"


class ResumeFailed(_WithDetail):
    kind = ErrorKind.RESUME_FAILED
    _template = "could not resume session: {detail}"


class SessionBusy(AgentError):
    kind = ErrorKind.SESSION_BUSY

    def __init__(self) -> None:
        super().__init__("session is busy with a running turn")


class ProtocolFailed(_WithDetail):
    kind = ErrorKind.PROTOCOL_FAILED
    _template = "protocol failure: {detail}"


class ProcessExited(AgentError):
    """The agent process ended by itself: `status` is its exit status (or signal) as text, `stderr` its last stderr
    lines, redacted of secrets (those of our environment, which the agent inherits, and key-shaped words) and cut
    to the last STDERR_CHARS characters."""

    kind = ErrorKind.PROCESS_EXITED

    def __init__(self, status: str, stderr: str) -> None:
        stderr = clip(redact(stderr, named_secrets()), STDERR_CHARS, keep_end=True)
        super().__init__(f"agent process exited ({status}): {stderr}")
        self.status = status
        self.stderr = stderr

    def during_turn(self) -> str:
        """The failure of the turn this exit cut short, with the status and the stderr tail: often the only
        account of why the agent died."""
        return f"agent exited during the turn ({self.status})" + (f": {self.stderr}" if self.stderr else "")

    def fields(self) -> dict[str, Any]:
        return {"status": self.status, "stderr": self.stderr}


class SessionClosed(AgentError):
    kind = ErrorKind.SESSION_CLOSED

    def __init__(self) -> None:
        super().__init__("session is closed")


class UnknownSession(AgentError):
    kind = ErrorKind.UNKNOWN_SESSION

    def __init__(self, session: str) -> None:
        super().__init__(f"no session {session}")
        self.session = session

    def fields(self) -> dict[str, Any]:
        return {"session": self.session}
