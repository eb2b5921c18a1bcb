"""THE method table (MethodName → params and result types) and the broadcast table (BroadcastName → data type).

Dispatch code never names a model: it looks the method up here. A result type may be a union of models; decode
any of them with `base.decode(spec.result, value)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omniagent.protocols.yuke import agents, auth, base, catalog, initialize, interactions, notices, sessions
from omniagent.protocols.yuke.activity import SessionActivityChangedData
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.inputs import InputCanceledData, InputQueuedData
from omniagent.protocols.yuke.messages import (
    MessageCommittedData,
    MessageDiscardedData,
    MessagePartAddedData,
    MessagePartFinalizedData,
    MessageStartedData,
    PartDelta,
    ToolStateChangedData,
)
from omniagent.protocols.yuke.runs import ConfigChangedData, RunDoneData, RunStartedData, TranscriptTruncatedData


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One row of the method table; `params_optional` means the client may omit `params`."""

    params: type[YukeModel]
    result: Any  # a model class or a union of them
    params_optional: bool = False


def _m(params: type[YukeModel], result: Any, *, optional: bool = False) -> MethodSpec:
    return MethodSpec(params, result, optional)


METHODS: dict[str, MethodSpec] = {
    "agents.get": _m(base.Empty, agents.AgentsGetResult, optional=True),
    "agents.update": _m(agents.AgentsUpdateParams, agents.AgentsGetResult),
    "agents.resolve": _m(agents.AgentsResolveParams, agents.AgentsResolveResult),
    "agents.set_model": _m(agents.AgentsSetModelParams, sessions.SessionConfigResult),
    "initialize": _m(base.Empty, initialize.InitializeResult, optional=True),
    "session.list": _m(sessions.SessionListParams, sessions.SessionListResult, optional=True),
    "session.get": _m(sessions.SessionGetParams, sessions.SessionListItem),
    "session.create": _m(sessions.CreateSession, sessions.SessionResult),
    "session.patch": _m(sessions.SessionPatchParams, sessions.SessionResult),
    "session.remove": _m(sessions.SessionRemoveParams, base.Empty),
    "session.fork": _m(sessions.SessionForkParams, sessions.SessionResult),
    "session.compact": _m(sessions.SessionCompactParams, sessions.SessionCompactResult),
    "session.rewind": _m(sessions.SessionRewindParams, base.Empty),
    "session.send_input": _m(sessions.SessionSendInputParams, sessions.SessionSendInputResult),
    "session.cancel_input": _m(sessions.SessionCancelInputParams, sessions.SessionCancelInputResult),
    "session.queue": _m(sessions.SessionQueueParams, sessions.SessionQueueResult),
    "session.cancel_run": _m(sessions.SessionCancelRunParams, sessions.SessionCancelRunResult),
    "session.history": _m(sessions.SessionHistoryParams, sessions.SessionHistoryResult),
    "session.config": _m(sessions.SessionConfigParams, sessions.SessionConfigResult),
    "catalog.list": _m(catalog.CatalogListParams, catalog.CatalogListResult, optional=True),
    "catalog.reload": _m(base.Empty, catalog.CatalogReloadResult, optional=True),
    "auth.list": _m(base.Empty, auth.AuthListResult, optional=True),
    "auth.set_api_key": _m(auth.AuthSetApiKeyParams, base.Empty),
    "auth.login": _m(auth.AuthLoginParams, auth.AuthLoginResult),
    "auth.cancel_login": _m(auth.AuthCancelLoginParams, base.Empty),
    "auth.remove": _m(auth.AuthRemoveParams, base.Empty),
    "interaction.respond": _m(interactions.InteractionRespondParams, base.Empty),
}

BROADCASTS: dict[str, type[YukeModel]] = {
    "session.summary_changed": sessions.SessionSummaryChangedData,
    "session.activity_changed": SessionActivityChangedData,
    "session.removed": sessions.SessionRemovedData,
    "catalog.changed": catalog.CatalogChangedData,
    "auth.login_finished": auth.AuthLoginFinishedData,
    "auth.changed": auth.AuthChangedData,
    "notice": notices.Notice,
    "interaction.requested": interactions.InteractionRequestedData,
    "message.committed": MessageCommittedData,
    "run.started": RunStartedData,
    "run.done": RunDoneData,
    "config.changed": ConfigChangedData,
    "transcript.truncated": TranscriptTruncatedData,
    "message.started": MessageStartedData,
    "message.discarded": MessageDiscardedData,
    "message.part_added": MessagePartAddedData,
    "message.part_delta": PartDelta,
    "message.part_finalized": MessagePartFinalizedData,
    "tool.state_changed": ToolStateChangedData,
    "tool.output_delta": PartDelta,
    "input.queued": InputQueuedData,
    "input.canceled": InputCanceledData,
}
