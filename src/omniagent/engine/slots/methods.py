"""The agents.* methods: read and write agents.json (`file.py`), resolve a model slot, and set the model of
an idle child session. docs/engine.md "agents.json".
"""

from __future__ import annotations

from typing import Protocol

from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.slots.file import AgentsFile
from omniagent.engine.store import Store
from omniagent.engine.store import queries as q
from omniagent.protocols.yuke.agents import (
    AgentsGetResult,
    AgentsResolveParams,
    AgentsResolveResult,
    AgentsSetModelParams,
    AgentsUpdateParams,
)
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.runs import RunConfig
from omniagent.protocols.yuke.sessions import OriginChild, Session, SessionConfigResult


class SessionConfigs(Protocol):
    """What agents.set_model needs of the session methods (`session.lifecycle.Sessions`, which sit above the slots:
    child sessions resolve their slots here)."""

    async def set_config(self, s: Session, model: str, reasoning: str, max_rounds: int | None) -> Session:
        """Append the session's next RunConfig revision; emits `config.changed` and the new summary."""
        ...


class Agents:
    """The agents.* methods, built with agents.json, the store, the live sessions and the session methods."""

    def __init__(self, file: AgentsFile, store: Store, live: LiveSessions, sessions: SessionConfigs) -> None:
        self._file = file
        self._store = store
        self._live = live
        self._sessions = sessions

    async def get(self, _params: Empty) -> AgentsGetResult:
        """agents.get: the document and its revision (an absent file is `{}`)."""
        revision, config = self._file.read()
        return AgentsGetResult(path=str(self._file.path), revision=revision, config=config)

    async def update(self, params: AgentsUpdateParams) -> AgentsGetResult:
        """agents.update: replace the document if `revision` is still current (config_conflict otherwise)."""
        revision = self._file.update(params.revision, params.config)
        return AgentsGetResult(path=str(self._file.path), revision=revision, config=params.config)

    async def resolve(self, params: AgentsResolveParams) -> AgentsResolveResult:
        """agents.resolve: the slot's model and reasoning as a child would run on them now."""
        model, reasoning, revision = self._file.resolve(params.model)
        return AgentsResolveResult(slot=params.model, model=model, reasoning=reasoning, revision=revision)

    async def set_model(self, params: AgentsSetModelParams) -> SessionConfigResult:
        """agents.set_model: a new RunConfig for an idle child session (`config.changed` and its summary)."""
        record = await self._store.query(q.get_session, params.session_id)
        if record is None:
            raise EngineError.unknown_session()
        s = record.session
        if not isinstance(s.origin, OriginChild):
            raise EngineError.bad_request("only a child session's model is set here; use session.patch")
        if self._live.is_busy(s.id) or record.open_run_id is not None:
            raise EngineError(ErrorCode.SESSION_BUSY, "the child session has an active run")
        model, reasoning = self._file.check_slot(params.model)
        session = await self._sessions.set_config(s, model, reasoning, s.max_rounds)
        config = RunConfig(config_rev=session.config_rev, model=session.model, reasoning=session.reasoning)
        return SessionConfigResult(config=config, system_prompt=record.system_prompt)
