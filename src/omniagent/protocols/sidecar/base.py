"""Base classes and scalars shared by the sidecar models."""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any

from pydantic import Field

from omniagent.protocols._model import WireModel


class SidecarModel(WireModel):
    """Sidecar null policy: absent optionals are written as `null` (serde's default)."""

    def encode(self) -> bytes:
        """This model as one compact JSON line (no newline), serialized in one pass."""
        return self.__pydantic_serializer__.to_json(self)


class SystemTime(SidecarModel):
    """A wall-clock instant as serde encodes `std::time::SystemTime`."""

    secs_since_epoch: int = Field(ge=0)
    nanos_since_epoch: int = Field(ge=0, lt=1_000_000_000)

    @classmethod
    def now(cls) -> SystemTime:
        ns = time.time_ns()
        return cls(secs_since_epoch=ns // 1_000_000_000, nanos_since_epoch=ns % 1_000_000_000)


def omitted_when_none(value: Any) -> bool:
    """`exclude_if` predicate for the two optionals the wire omits instead of writing `null`."""
    return value is None


class DiagnosticLevel(StrEnum):
    INFO = "Info"
    WARNING = "Warning"
    ERROR = "Error"


class Diagnostic(SidecarModel):
    level: DiagnosticLevel
    message: str
