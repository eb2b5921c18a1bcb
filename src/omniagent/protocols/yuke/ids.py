"""Scalars of the yuke wire: ids, counters and strict primitive types."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict

# JSON integers on this wire stay within the doubles' exact range.
MAX_WIRE_INT = 2**53 - 1

U64 = Annotated[int, Strict(), Field(ge=0, le=MAX_WIRE_INT)]
U32 = Annotated[int, Strict(), Field(ge=0, le=2**32 - 1)]
F64 = Annotated[float, Strict()]
Bool = Annotated[bool, Strict()]
Str = Annotated[str, Strict()]

SessionId = Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{32}$")]
LoginId = Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{64}$")]
CatalogRev = Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{128}$")]
AgentConfigRev = Annotated[str, Strict(), Field(pattern=r"^[0-9a-f]{64}$")]
MessageId = Annotated[int, Strict(), Field(ge=1, le=MAX_WIRE_INT)]
RunId = Annotated[int, Strict(), Field(ge=1, le=MAX_WIRE_INT)]
InputId = Annotated[int, Strict(), Field(ge=1, le=MAX_WIRE_INT)]
PartId = U64
Seq = Annotated[int, Strict(), Field(ge=1, le=MAX_WIRE_INT)]
ConfigRev = U64
SessionRevision = U64
ProviderId = Str
ModelId = Str
