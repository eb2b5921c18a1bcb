"""The sidecar wire over a hub's sessions (`HubHost`): the hub owns them, the wire only attaches.

What changes against `omniagent serve` (docs/sidecar.md, "Sessions of a hub"):
- `open` opens a session in the hub and attaches this wire to it as its controller; `attach` follows one that exists
  (replaying from a cursor); `detach` stops following; `list` shows the hub's sessions.
- EOF or a dropped connection detaches from every session: they go on in the hub.
- `closed` ends one session's lines on this wire: the session ended, or this wire stopped following it (`detach`,
  EOF, or a reader so far behind that the hub no longer keeps what it has not read: as anyagent's G6, no error line;
  attaching again with the last sequence read says how many were `missed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec

from omniagent.hub.hub import HubClient
from omniagent.hub.session import Attachment, History, HubSession, Role
from omniagent.protocols.sidecar.commands import (
    LIST_WAIT_SECONDS,
    Attach,
    Attached,
    AttachedClient,
    AttachRole,
    HubSessionRow,
    Open,
    SessionList,
    SessionUsage,
)
from omniagent.protocols.sidecar.events import Event, FromPrompt, TurnStarted
from omniagent.runtime.options import OpenOptions
from omniagent.runtime.runtime import Runtime
from omniagent.serving.sidecar.commands import SessionHandle, event_line


class HubHost:
    """One wire's client of a hub (`SessionHost`)."""

    def __init__(self, client: HubClient) -> None:
        self._client = client
        self._left = asyncio.Event()  # the wire ended: a `list` waiting for a change answers at once

    @property
    def runtime(self) -> Runtime:
        return self._client.hub.runtime

    async def open(self, command: Open) -> SessionHandle:
        return await self._client.open(command.agent, command.dir, OpenOptions.from_wire(command))

    async def attach(self, command: Attach) -> tuple[SessionHandle, Attached]:
        await self._client.resume(command.session)  # live: as it is; of an earlier run: opened again by its agent
        attachment = self._client.attach(
            command.session, Role(command.role.value), after=command.after, history=History(command.history.value)
        )
        attached = Attached(
            info=attachment.info(),
            role=command.role,
            from_=attachment.cursor + 1,
            missed=attachment.missed,
        )
        return attachment, attached

    def detach(self, session_id: str) -> None:
        self._client.detach(session_id)

    async def sessions(self, after: int | None) -> SessionList:
        hub = self._client.hub
        if after is not None and not self._left.is_set():
            waiting = asyncio.ensure_future(hub.changes(after, LIST_WAIT_SECONDS))
            leaving = asyncio.ensure_future(self._left.wait())
            await asyncio.wait((waiting, leaving), return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            leaving.cancel()
        rows = [_row(session) for session in hub.sessions()]
        rows += [
            HubSessionRow(
                id=entry.id,
                agent=entry.agent,
                directory=entry.directory,
                title=entry.title,
                created_at=entry.created_at,
                activity="ended",
                clients=[],
                last_sequence=None,
                resume_token=entry.resume_token,
                past=True,
            )
            for entry in hub.past()
        ]
        return SessionList(sessions=rows, version=hub.version)

    async def follow(self, session: SessionHandle) -> AsyncIterator[list[bytes]]:
        assert isinstance(session, Attachment)
        before = session.missed
        async for events in session.batches():
            if session.missed != before:
                # The hub dropped events this wire had not read: sending the rest would leave a gap in `sequence`
                # (G2), so the wire stops following; `closed` follows.
                self._client.detach(session.id)
                return
            lines = session.session.log.lines(events, event_line)  # encoded once for every client of the session
            for index, event in enumerate(events):
                kind = event.kind
                if isinstance(kind, TurnStarted) and isinstance(kind.origin, FromPrompt):
                    said = await session.session.said(kind.origin.prompt_id)
                    if said is not None:
                        lines[index] = event_line(_with_prompt(event, said.text))
            yield lines

    async def leave(self) -> None:
        self._left.set()
        await self._client.aclose()


def _with_prompt(event: Event, text: str) -> Event:
    """A prompted turn's `TurnStarted` with what the prompt said in `extensions.omniagent.prompt`: the runtime names
    the prompt by id only, and a client that attaches later (or another client's page) shows what was asked."""
    ours = event.extensions.get("omniagent")
    extension = {**ours, "prompt": text} if isinstance(ours, dict) else {"prompt": text}
    return msgspec.structs.replace(event, extensions={**event.extensions, "omniagent": extension})


def _row(session: HubSession) -> HubSessionRow:
    info = session.info()
    return HubSessionRow(
        id=session.id,
        agent=session.agent,
        directory=session.directory,
        title=info.title,
        created_at=session.created_at,
        activity=session.activity.value,
        clients=[
            AttachedClient(
                name=attachment.client.name,
                version=attachment.client.version,
                transport=attachment.client.transport,
                role=AttachRole(attachment.role.value),
            )
            for attachment in session.clients
        ],
        last_sequence=session.log.last,
        resume_token=info.resume_token,
        past=False,
        usage=None
        if session.usage is None
        else SessionUsage(
            used_tokens=session.usage.used_tokens,
            window_tokens=session.usage.window_tokens,
            cost_usd=session.usage.cost_usd,
        ),
    )
