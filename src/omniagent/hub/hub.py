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

With a state folder (`HubState`), every session is in the folder's index, and a session of an earlier run (or of
another process sharing the folder, once it let go) is `resume`d by its agent's resume token under the same id:

        session = await hub.resume("s3")     # the agent opened again with OpenOptions(resume=token)
        attachment = client.attach("s3")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from omniagent.hub.log import DEFAULT_RETENTION
from omniagent.hub.session import Attachment, ClientInfo, History, HubSession, Role
from omniagent.hub.state import HubState, IndexEntry, SessionHeld
from omniagent.protocols.sidecar.commands import AgentRef
from omniagent.runtime.errors import ResumeFailed, UnknownSession
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import MockScript, Runtime
from omniagent.runtime.session import Session

log = logging.getLogger(__name__)


class Hub:
    """Sessions of any agent, owned here. Build with `Hub.start(…)`, or `Hub(runtime)` over a running Runtime."""

    def __init__(self, runtime: Runtime, *, state: HubState | None = None, retention: int = DEFAULT_RETENTION) -> None:
        self.runtime = runtime
        self._state = state
        self._retention = retention
        self._sessions: dict[str, HubSession] = {}
        self._indexed: set[str] = set()  # the sessions whose entries this hub writes (their ids are held here)
        self._earlier: dict[str, IndexEntry] = {}  # a resumed session's entry of the run that opened it
        self._resuming: dict[str, asyncio.Lock] = {}
        # What a list of the sessions shows changes (a session opened, attached to, working, asking, ended, …):
        # counted, so a watcher asks for what came after the version it has (`changes`).
        self.version = 0
        self._version_changed = asyncio.Event()

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
        """A hub over a runtime of its own; leaving closes every session. With `state`, session ids are claimed in
        its folder (`s<n>`, the next free), so they stay unique across the hub's restarts and the processes sharing
        the folder."""
        # With a folder, the hub names each session by the id it claims there; the runtime's own names then go only
        # to its throwaway sessions (a probe, a generate), kept apart so one still open never takes a claimed id.
        names = (f"x{n}" for n in itertools.count(1)) if state is not None else None
        async with Runtime(mock=mock, env=env, session_ids=names) as runtime:
            hub = cls(runtime, state=state, retention=retention)
            try:
                yield hub
            finally:
                await hub.aclose()

    async def open(
        self, agent: AgentRef, directory: str | os.PathLike[str], options: OpenOptions | None = None
    ) -> HubSession:
        """Launch `agent` in `directory` and keep the session. Raises what `Runtime.open` raises."""
        session_id = self._claim()
        try:
            session = await self.runtime.open(agent, directory, options, session_id=session_id)
        except BaseException:
            if session_id is not None:
                assert self._state is not None
                self._state.release(session_id, forget=True)
            raise
        return self._keep(session, os.fspath(directory), indexed=session_id is not None)

    async def resume(self, session_id: str, options: OpenOptions | None = None) -> HubSession:
        """The session `session_id`: one live in this hub as it is; else one of the index (an earlier run's,
        another process's that let it go, or one of this hub's life that ended) opened again by its agent with its
        resume token, in its directory, under the same id, and kept like a session `open` made. Its log starts anew
        (the hub's log of the earlier run is gone), with the conversation's history where the agent can tell it (the
        open option `history`: our engine's whole stored conversation, outside any turn), so a client replaying it
        from its start sees the earlier conversation; another agent's starts empty. `options` are the open options
        besides the token (MCP servers, permission mode). An ended session the index does not have is returned as it
        is.

        Raises: `UnknownSession` (neither live here nor in the index), `ResumeFailed` (the entry kept no resume
        token, another process holds the session, or the agent refused the token), and what `Runtime.open` raises.
        """
        found = self._sessions.get(session_id)
        indexed = self.indexed(session_id) is not None
        if found is not None and (not found.closed or not indexed):
            return found
        if not indexed or self._state is None:
            raise UnknownSession(session_id)
        # Two clients resuming one session at once get one session (a lock per index entry, never per any id asked).
        async with self._resuming.setdefault(session_id, asyncio.Lock()):
            found = self._sessions.get(session_id)
            if found is not None and not found.closed:
                return found
            entry = self._state.read_entry(session_id)
            if entry is None:
                raise UnknownSession(session_id)
            if entry.resume_token is None:
                raise ResumeFailed(f"{session_id} kept no resume token (its agent cannot resume it)")
            try:
                self._state.hold(session_id)
            except SessionHeld:
                raise ResumeFailed(f"{session_id} is open in another process sharing the hub's folder") from None
            except OSError as exc:
                raise ResumeFailed(f"the hub's folder is not writable ({exc.strerror or type(exc).__name__})") from None
            try:
                chosen = (options or OpenOptions()).changed(resume=entry.resume_token, history=True)
                session = await self.runtime.open(entry.agent, entry.directory, chosen, session_id=session_id)
            except BaseException:
                self._state.release(session_id)
                raise
            self._earlier[session_id] = entry
            return self._keep(session, entry.directory, indexed=True, created_at=entry.created_at)

    async def forget(self, session_id: str) -> None:
        """Close `session_id` for every client if it is live here, and remove it from this hub and its index (ACP's
        `session/delete`); a session neither has is nothing to forget. Raises: `ResumeFailed` (another process
        sharing the hub's folder holds it)."""
        live = self._sessions.pop(session_id, None)
        if live is not None and not live.closed:
            await live.close(forget=True)
        self._indexed.discard(session_id)
        self._earlier.pop(session_id, None)
        if self._state is not None and self.indexed(session_id) is not None:
            try:
                self._state.hold(session_id)
            except SessionHeld:
                raise ResumeFailed(f"{session_id} is open in another process sharing the hub's folder") from None
            self._state.release(session_id, forget=True)
        self._bump()

    def indexed(self, session_id: str) -> IndexEntry | None:
        """The index's entry of `session_id` (read now), or None: no folder, or no such session in it."""
        return self._state.read_entry(session_id) if self._state is not None else None

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
        """The index's sessions that are not of this hub's life (read now): earlier runs' (`ended`, or not when
        their process died), and those of other processes sharing the folder. `resume` reopens one that kept a
        resume token and no other process holds."""
        if self._state is None:
            return []
        return [entry for entry in self._state.read_index() if entry.id not in self._sessions]

    async def changes(self, after: int, within: float) -> int:
        """The list's version once it is past `after` (at once if it is already), or after `within` seconds
        whatever it is then."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while self.version <= after:
                    await self._version_changed.wait()
        return self.version

    def client(self, info: ClientInfo, *, owns_sessions: bool = False) -> HubClient:
        """A client's handle. `owns_sessions`: leaving closes the sessions it opened (a stdio face's one client)."""
        return HubClient(self, info, owns_sessions=owns_sessions)

    async def aclose(self) -> None:
        """Close every session."""
        for session in list(self._sessions.values()):
            await session.close()
        if self._state is not None:
            self._state.release_all()

    def _claim(self) -> str | None:
        """A session id claimed in the state folder; None (the runtime numbers it) without one, or when the folder
        cannot be written (the session is then not indexed)."""
        if self._state is None:
            return None
        try:
            return self._state.claim()
        except OSError as exc:
            log.warning("could not claim a session id in the index: %s", exc.strerror or type(exc).__name__)
            return None

    def _keep(self, session: Session, directory: str, *, indexed: bool, created_at: float | None = None) -> HubSession:
        kept = HubSession(
            session,
            agent=session.info().agent.id,
            directory=directory,
            retention=self._retention,
            on_change=self._changed,
            created_at=created_at,
        )
        self._sessions[kept.id] = kept
        if indexed:
            self._indexed.add(kept.id)
        self._save(kept)
        self._bump()
        return kept

    def _bump(self) -> None:
        self.version += 1
        changed, self._version_changed = self._version_changed, asyncio.Event()
        changed.set()

    def _changed(self, session: HubSession) -> None:
        self._bump()
        if session.closed and session.id in self._indexed:
            self._save(session)
            self._indexed.discard(session.id)
            assert self._state is not None
            self._state.release(session.id)

    def _save(self, session: HubSession) -> None:
        if self._state is None or session.id not in self._indexed:
            return
        info = session.info()
        earlier = self._earlier.get(session.id)
        entry = IndexEntry(
            id=session.id,
            agent=session.agent,
            directory=session.directory,
            created_at=session.created_at,
            title=info.title or (earlier.title if earlier is not None else None),
            resume_token=info.resume_token or (earlier.resume_token if earlier is not None else None),
            ended=session.closed,
        )
        try:
            self._state.write_entry(entry)
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

    async def resume(self, session_id: str, options: OpenOptions | None = None) -> HubSession:
        """`Hub.resume`: the session live (a session of the index opened again by its agent), to `attach` to; one
        this resumes is the client's as one it opened (closed when it leaves, when it owns its sessions).
        Raises what `Hub.resume` raises."""
        live = session_id in self.hub._sessions
        session = await self.hub.resume(session_id, options)
        if not live:
            self._opened.append(session)
        return session

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
