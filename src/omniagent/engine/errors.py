"""The engine's refusal: one error type carrying a yuke error code and a fixed, safe sentence."""

from __future__ import annotations

from omniagent.errors import OmniagentError
from omniagent.protocols.yuke.envelope import ErrorCode


class EngineError(OmniagentError):
    """A request the engine refuses. `message` names no secret, no path and no traceback."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @classmethod
    def unknown_session(cls) -> EngineError:
        return cls(ErrorCode.UNKNOWN_SESSION, "unknown session")

    @classmethod
    def bad_request(cls, message: str) -> EngineError:
        return cls(ErrorCode.BAD_REQUEST, message)

    @classmethod
    def unknown_interaction(cls) -> EngineError:
        return cls(ErrorCode.UNKNOWN_INTERACTION, "unknown interaction")
