"""The base of every wire model: pydantic v2, aliases kept verbatim, `dump()` in JSON mode.

Each wire chooses its own null policy in its own base class (the sidecar writes `null` for absent optionals; the
yuke wire omits them), so this base only fixes what every wire shares.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """Base for wire models. Frozen-ish by convention: build a new model rather than mutating a sent one."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", use_enum_values=False)

    def dump(self) -> Any:
        """The JSON value this model puts on its wire."""
        return self.model_dump(mode="json", by_alias=True)
