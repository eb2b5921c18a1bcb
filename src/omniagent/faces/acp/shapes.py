"""How each ACP version spells the updates and ids the agent sends (acp.md §3.2, §3.3): data, no behaviour.

Kept apart from `faces.acp.translate` so the `initialize` answer (which needs only `state_updates` and the id key of
auth methods) does not import `engine.events` and the yuke models.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    # The id member of config options and auth methods: v2 `configId` / `methodId`, v1 `id` for both.
    config_id_key: str
    auth_id_key: str
    # A command's input: v2 tags it (`{"type":"text","hint"}`), v1 has only the untagged `{"hint"}`.
    typed_command_input: bool
    # v2 plans: `plan_update` with `plan: {type: "items", planId, entries}`; v1: `plan` with `entries`.
    plan_items: bool


V1 = Shapes(1, False, False, False, "tool_call", "failed", False, "id", "id", False, False)
V2 = Shapes(2, True, True, True, "tool_call_update", "cancelled", True, "configId", "methodId", True, True)
SHAPES = {1: V1, 2: V2}
