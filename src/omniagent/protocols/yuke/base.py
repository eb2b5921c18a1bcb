"""The yuke null policy: absent optionals are omitted, never written as `null`."""

from __future__ import annotations

from typing import Any

from omniagent.protocols._model import WireModel


class YukeModel(WireModel):
    """Base of every yuke model; an explicit `null` on input reads as absent."""

    def dump(self) -> dict[str, Any]:
        """The JSON-ready wire form: aliases, no `None` values."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Empty(YukeModel):
    """Empty params or result object."""
