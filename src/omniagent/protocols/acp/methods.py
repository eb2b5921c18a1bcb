"""Per-version ACP method tables: method name → params and result models, for each side, plus parsing helpers.

The tables themselves are generated (from the schemas' `x-method` / `x-side` annotations) into `v1.py` and `v2.py`;
this module picks the table for a negotiated version and validates raw JSON against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from omniagent.protocols.acp import v1, v2
from omniagent.protocols.acp._base import AcpModel


@dataclass(frozen=True, slots=True)
class MethodTable:
    """The methods of one protocol version. Request entries are (params model, result model)."""

    version: int
    agent_requests: Mapping[str, tuple[Any, Any]]  # the client calls these
    client_requests: Mapping[str, tuple[Any, Any]]  # the agent calls these
    agent_notifications: Mapping[str, Any]  # the client sends these
    client_notifications: Mapping[str, Any]  # the agent sends these
    protocol_notifications: Mapping[str, Any]  # either side sends these (`$/cancel_request`)


V1 = MethodTable(
    version=1,
    agent_requests=v1.AGENT_REQUESTS,
    client_requests=v1.CLIENT_REQUESTS,
    agent_notifications=v1.AGENT_NOTIFICATIONS,
    client_notifications=v1.CLIENT_NOTIFICATIONS,
    protocol_notifications=v1.PROTOCOL_NOTIFICATIONS,
)
V2 = MethodTable(
    version=2,
    agent_requests=v2.AGENT_REQUESTS,
    client_requests=v2.CLIENT_REQUESTS,
    agent_notifications=v2.AGENT_NOTIFICATIONS,
    client_notifications=v2.CLIENT_NOTIFICATIONS,
    protocol_notifications=v2.PROTOCOL_NOTIFICATIONS,
)
TABLES: Mapping[int, MethodTable] = {1: V1, 2: V2}

_ADAPTERS: dict[int, TypeAdapter[Any]] = {}


def adapter(model: Any) -> TypeAdapter[Any]:
    """A cached TypeAdapter for a model class or union alias (aliases are not hashable, so cache by identity)."""
    found = _ADAPTERS.get(id(model))
    if found is None:
        found = _ADAPTERS[id(model)] = TypeAdapter(model)
    return found


def parse(model: Any, raw: Any) -> Any:
    """Validate raw JSON (wire names) as `model`.

    Raises:
        pydantic.ValidationError: the value does not fit the model.
    """
    return adapter(model).validate_python(raw)


def dump(value: Any) -> Any:
    """Wire JSON for a model instance (explicit nulls kept, unset fields omitted) or a plain JSON value."""
    if isinstance(value, AcpModel):
        return value.dump()
    if isinstance(value, list):
        return [dump(item) for item in value]
    return value
