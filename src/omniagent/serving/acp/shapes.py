"""How each ACP version spells the updates and ids the agent sends: data, no behaviour.

Kept apart from `serving.acp.builders` so the `initialize` answer (which needs only `state_updates` and the id key of
auth methods) does not import `engine.events`, the yuke models or the ACP models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from omniagent.protocols.acp.versions import SPECS

if TYPE_CHECKING:
    from collections.abc import Callable

    from omniagent.protocols.acp._base import AcpModel


class Models(Protocol):
    """One version's models module (`protocols.acp.v1` or `.v2`) as the face builds with it: each class name
    builds that model from keywords. v1 and v2 share most names, so one builder serves both versions."""

    def __getattr__(self, name: str) -> Callable[..., AcpModel]: ...


@dataclass(frozen=True, slots=True)
class Shapes:
    """How one ACP version spells the updates we send."""

    version: int
    # v2: `state_update` running / requires_action / idle{stopReason}; v1: the stop reason is the prompt response.
    state_updates: bool
    # v2: the agent acks each prompt with a whole `user_message` carrying its own messageId.
    user_message_ack: bool
    # v2: replay sends whole `user_message` / `agent_message` / `agent_thought`; v1 sends chunks.
    whole_messages: bool
    # The update that creates a tool call: v1 `tool_call` (title required), v2 the first `tool_call_update`.
    tool_create: str
    # Tool status of a call that was cancelled: v2 has `cancelled`, v1 only `failed`.
    cancelled_status: str
    # v2 diffs: `changes` + a git patch; v1 diffs: `path`, `oldText`, `newText`.
    structured_diffs: bool
    # The id of a config option, as the models' field: v2 `config_id` (`configId`), v1 `id`.
    config_id_field: str
    # The id member of auth methods: v2 `methodId`, v1 `id`.
    auth_id_key: str
    # v2 tags a command (`type: "command"`) and its input (`{"type":"text","hint"}`); v1 tags neither.
    typed_command_input: bool
    # v2 plans: `plan_update` with `plan: {type: "items", planId, entries}`; v1: `plan` with `entries`.
    plan_items: bool
    # v2: a permission request has a title and names its subject (`{type: "tool_call", toolCall}`); v1 has only
    # `toolCall`.
    permission_subject: bool

    @property
    def models(self) -> Models:
        """This version's ACP models, `protocols.acp.v1` or `.v2` (imported on first use, as the answer to
        `initialize` needs none)."""
        return SPECS[self.version].models


V1 = Shapes(1, False, False, False, "tool_call", "failed", False, "id", "id", False, False, False)
V2 = Shapes(2, True, True, True, "tool_call_update", "cancelled", True, "config_id", "methodId", True, True, True)
SHAPES = {1: V1, 2: V2}
