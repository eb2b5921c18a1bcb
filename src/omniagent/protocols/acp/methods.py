"""Per-version ACP method tables: method name → params and result models, for each side, plus parsing helpers.

The tables themselves are generated (from the schemas' `x-method` / `x-side` annotations) into `v1.py` and `v2.py`;
this module picks the table for a negotiated version; `parse` validates raw JSON against a model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniagent.protocols.acp import v1, v2
from omniagent.protocols.acp._base import ValidationError, dump, parse


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

# Validation is `_base.parse` (raw JSON → model, strict) and `_base.dump` (model → wire JSON), re-exported here so
# the ACP face and client read one module.
__all__ = ["TABLES", "V1", "V2", "MethodTable", "ValidationError", "dump", "parse"]
