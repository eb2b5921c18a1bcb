"""The base of the generated ACP models: extra fields kept, explicit `null` kept, tags always written.

ACP v2 patches are three-state (omitted = unchanged, `null` = clear, value = replace), so `dump()` drops only the
fields nobody set (`exclude_unset`), never the ones set to None. Unknown fields and `_meta` ride along
(`extra="allow"`), because implementations must preserve them when storing or proxying (acp.md §5.10).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import ConfigDict

from omniagent.protocols._model import WireModel


class AcpModel(WireModel):
    """An ACP object. Build with Python names or wire names; `dump()` gives the wire JSON."""

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, defer_build=True, protected_namespaces=(), use_enum_values=False
    )
    # Python names of discriminator fields: set by default, yet always written (a variant without its tag is void).
    tag_fields: ClassVar[tuple[str, ...]] = ()

    def model_post_init(self, context: Any, /) -> None:
        for name in self.tag_fields:
            self.__pydantic_fields_set__.add(name)

    def dump(self) -> dict[str, Any]:
        """The wire JSON: wire names, only the fields that were set (an explicit None stays `null`)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def tag_picker(
    wire_name: str, attr: str, known: Sequence[str], *, other: bool, default: str | None
) -> Callable[[Any], str | None]:
    """Discriminator for an open tagged union: known tag → its variant (strict), unknown → `~other`, none → default.

    Returning None makes pydantic reject the value (a closed union with an unknown tag and no default).
    """
    known_set = frozenset(known)

    def pick(value: Any) -> str | None:
        tag = value.get(wire_name) if isinstance(value, dict) else getattr(value, attr, None)
        if tag is None:
            return default
        if isinstance(tag, str) and tag in known_set:
            return tag
        if other:
            return "~other"
        return default

    return pick
