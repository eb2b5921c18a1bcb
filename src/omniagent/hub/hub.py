"""The `Hub`: opens sessions of any agent through the runtime and keeps them, whoever is attached.

    async with Hub.start(state=HubState(folder)) as hub:
        client = hub.client(ClientInfo("my-app"))
        attachment = await client.open("claude", ".")
        await attachment.prompt("hello")
        async for events in attachment.batches():
            ...
        await client.aclose()            # detaches; the session goes on

A session ends only when a client closes it or its agent ends it. Clients are `HubClient`s: each remembers what it
attached to, so a client that goes away (a closed socket) detaches from everything at once; a client that owns its
sessions (a stdio face: the session lives as long as its one client) closes them instead.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from omniagent.hub.log import DEFAULT_RETENTION
from omniagent.hub.session import Attachment, ClientInfo, History, HubSession, Role
from omniagent.hub.state import HubState, IndexEntry
from omniagent.protocols.sidecar.commands import AgentRef
from omniagent.runtime.errors import UnknownSession
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import MockScript, Runtime

log = logging.getLogger(__name__)


class Hub:
    """Sessions of any agent, owned here. Build with `Hub.start(…)`, or `Hub(runtime)` over a running Runtime."""

    def __init__(self, runtime: Runtime, *, state: HubState | None = None, retention: int = DEFAULT_RETENTION) -> None:
        self.runtime = runtime
        self._state = state
        self._retention = retention
        self._sessions: dict[str, HubSession] = {}
        self._past = {entry.id: entry for entry in state.read_index()} if state is not None else {}

    @classmethod
    @asynccontextmanager
    async def start(
        cls,
        *,
        state: HubState | None = None,
        mock: MockScript | None = None,
        retention: int = DEFAULT_RETENTION,
        env: Any = None,
    ) -> AsyncIterator[Hub]:
        """A hub over a runtime of its own; leaving closes every session. Session ids continue the index's
        numbering, so a session of an earlier run keeps its id in listings."""
        first = 1 + max((_number(entry.id) for entry in state.read_index()), default=0) if state is not None else 1
        ids = (f"s{n}" for n in itertools.count(first))
        async with Runtime(mock=mock, env=env, session_ids=ids) as runtime:
            hub = cls(runtime, state=state, retention=retention)
            try:
                yield hub
            finally:
                await hub.aclose()

    async def open(
        self, agent: AgentRef, directory: str | os.PathLike[str], options: OpenOptions | None = None
    ) -> HubSession:
        """Launch `agent` in `directory` and keep the session. Raises what `Runtime.open` raises."""
        session = await self.runtime.open(agent, directory, options)
        kept = HubSession(
            session,
            agent=session.info().agent.id,
            directory=os.fspath(directory),
            retention=self._retention,
            on_change=self._changed,
        )
        self._sessions[kept.id] = kept
        self._save()
        return kept

    def session(self, session_id: str) -> HubSession:
        """A session of this hub's life (ended ones included). Raises: `UnknownSession`."""
        found = self._sessions.get(session_id)
        if found is None:
            raise UnknownSession(session_id)
        return found

    def sessions(self) -> list[HubSession]:
        """The sessions of this hub's life, oldest first."""
        return list(self._sessions.values())

    def past(self) -> list[IndexEntry]:
        """Sessions of earlier runs of this hub (from the index): ended, resumable when they kept a resume token."""
        return [entry for entry_id, entry in self._past.items() if entry_id not in self._sessions]

    def client(self, info: ClientInfo, *, owns_sessions: bool = False) -> HubClient:
        """A client's handle. `owns_sessions`: leaving closes the sessions it opened (a stdio face's one client)."""
        return HubClient(self, info, owns_sessions=owns_sessions)

    async def aclose(self) -> None:
        """Close every session."""
        for session in list(self._sessions.values()):
            await session.close()
        self._save()

    def _changed(self, session: HubSession) -> None:
        if session.closed:
            self._save()

    def _save(self) -> None:
        if self._state is None:
            return
        entries = dict(self._past)
        for session in self._sessions.values():
            info = session.info()
            entries[session.id] = IndexEntry(
                id=session.id,
                agent=session.agent,
                directory=session.directory,
                created_at=session.created_at,
                title=info.title,
                resume_token=info.resume_token,
                ended=session.closed,
            )
        try:
            self._state.write_index(list(entries.values()))
        except OSError as exc:
            log.warning("could not write the session index: %s", exc.strerror or type(exc).__name__)


class HubClient:
    """One client of the hub: the sessions it opened or attached to."""

    def __init__(self, hub: Hub, info: ClientInfo, *, owns_sessions: bool) -> None:
        self.hub = hub
        self.info = info
        self._owns = owns_sessions
        self._attachments: dict[str, Attachment] = {}
        self._opened: list[HubSession] = []

    async def open(
        self, agent: AgentRef, directory: str | os.PathLike[str], options: OpenOptions | None = None
    ) -> Attachment:
        """Open a session and attach to it as its controller, from its first event."""
        session = await self.hub.open(agent, directory, options)
        self._opened.append(session)
        return self._keep(session.attach(self.info, Role.CONTROLLER, after=0))

    def attach(
        self,
        session_id: str,
        role: Role = Role.CONTROLLER,
        *,
        after: int | None = None,
        history: History = History.FULL,
    ) -> Attachment:
        """Attach to a session of the hub (replacing this client's earlier attachment to it).
        Raises: `UnknownSession`."""
        session = self.hub.session(session_id)
        self.detach(session_id)
        return self._keep(session.attach(self.info, role, after=after, history=history))

    def attachment(self, session_id: str) -> Attachment | None:
        """This client's attachment to the session, if any."""
        return self._attachments.get(session_id)

    def detach(self, session_id: str) -> None:
        attachment = self._attachments.pop(session_id, None)
        if attachment is not None:
            attachment.detach()

    async def aclose(self) -> None:
        """The client is leaving: detach from everything (closing what it opened, when it owns its sessions)."""
        for session_id in list(self._attachments):
            self.detach(session_id)
        if self._owns:
            for session in self._opened:
                await session.close()

    def _keep(self, attachment: Attachment) -> Attachment:
        self._attachments[attachment.id] = attachment
        return attachment


def _number(session_id: str) -> int:
    digits = session_id[1:]
    return int(digits) if session_id.startswith("s") and digits.isdigit() else 0
