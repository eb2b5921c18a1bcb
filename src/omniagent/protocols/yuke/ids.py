"""Scalars of the yuke wire: ids, counters and their bounds.

msgspec decodes strictly by default (no "7" for 7, no `true` or `7.0` for an int), so the primitive aliases need no
marker; the constraints live in `Meta`.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

# JSON integers on this wire stay within the doubles' exact range.
MAX_WIRE_INT = 2**53 - 1

U64 = Annotated[int, Meta(ge=0, le=MAX_WIRE_INT)]
U32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
F64 = float
Bool = bool
Str = str

SessionId = Annotated[str, Meta(pattern=r"^[0-9a-f]{32}$")]
LoginId = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
CatalogRev = Annotated[str, Meta(pattern=r"^[0-9a-f]{128}$")]
AgentConfigRev = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
MessageId = Annotated[int, Meta(ge=1, le=MAX_WIRE_INT)]
RunId = Annotated[int, Meta(ge=1, le=MAX_WIRE_INT)]
InputId = Annotated[int, Meta(ge=1, le=MAX_WIRE_INT)]
PartId = U64
Seq = Annotated[int, Meta(ge=1, le=MAX_WIRE_INT)]
ConfigRev = U64
SessionRevision = U64
ProviderId = Str
ModelId = Str
