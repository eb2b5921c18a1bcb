"""The hub's core over a real Runtime and the mock agent: sessions outlive their clients, every client reads the same
ordered events, the first answer wins, a reattaching client gets exactly what it missed."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from omniagent.hub.hub import Hub
from omniagent.hub.log import EventLog
from omniagent.hub.session import Activity, Attachment, ClientInfo, History, Role
from omniagent.hub.state import HubState
from omniagent.protocols.sidecar.commands import PermissionAnswer
from omniagent.protocols.sidecar.events import (
    Event,
    PermissionChoice,
    RequestClosed,
    RequestOpened,
    TurnEnded,
)
from omniagent.runtime.errors import InvalidRequest
from omniagent.runtime.runtime import Runtime

TURN = Runtime.load_mock("turn")


async def _until(attachment: Attachment, kind: type, seen: list[Event]) -> Event:
    async for batch in attachment.batches():
        seen.extend(batch)
        for event in batch:
            if isinstance(event.kind, kind):
                return event
    raise AssertionError(f"the session ended before {kind.__name__}")


async def _drain(attachment: Attachment, seen: list[Event]) -> None:
    async for batch in attachment.batches():
        seen.extend(batch)


def _kinds(events: list[Event]) -> list[tuple[int, str]]:
    return [(event.sequence, type(event.kind).__name__) for event in events]


async def test_three_clients_see_one_order_and_the_first_answer_wins(tmp_path: Path) -> None:
    async with Hub.start(mock=TURN) as hub:
        owner = hub.client(ClientInfo("owner"))
        first = await owner.open("mock", tmp_path)
        other = hub.client(ClientInfo("other")).attach(first.id)
        watcher = hub.client(ClientInfo("watcher")).attach(first.id, Role.OBSERVER)
        await first.prompt("go")
        logs: dict[str, list[Event]] = {"first": [], "other": [], "watcher": []}
        opened = await _until(first, RequestOpened, logs["first"])
        await _until(other, RequestOpened, logs["other"])
        assert hub.session(first.id).activity is Activity.NEEDS_INPUT
        request_id = opened.kind.request.request.id  # type: ignore[union-attr]
        with pytest.raises(InvalidRequest, match="observer"):
            await watcher.answer(request_id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))
        answers = await asyncio.gather(
            other.answer(request_id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE)),
            first.answer(request_id, PermissionAnswer(choice=PermissionChoice.DENY_ONCE)),
            return_exceptions=True,
        )
        assert [a is None for a in answers].count(True) == 1, answers
        assert isinstance(next(a for a in answers if a is not None), InvalidRequest)
        for name, attachment in (("first", first), ("other", other), ("watcher", watcher)):
            await _until(attachment, TurnEnded, logs[name])
        assert _kinds(logs["first"]) == _kinds(logs["other"]) == _kinds(logs["watcher"])
        closed = [e for e in logs["watcher"] if isinstance(e.kind, RequestClosed)]
        assert len(closed) == 1


async def test_a_detached_session_goes_on_and_a_cursor_replays_exactly_what_was_missed(tmp_path: Path) -> None:
    async with Hub.start(mock=TURN) as hub:
        first = await hub.client(ClientInfo("a")).open("mock", tmp_path)
        stays = hub.client(ClientInfo("observer")).attach(first.id, Role.OBSERVER)
        await first.prompt("go")
        before: list[Event] = []
        opened = await _until(first, RequestOpened, before)
        first.detach()  # the client goes away mid-turn; the session does not
        assert not hub.session(first.id).closed
        back = hub.client(ClientInfo("b")).attach(first.id, after=before[-1].sequence)
        await back.answer(opened.kind.request.request.id, PermissionAnswer(choice=PermissionChoice.ALLOW_ONCE))  # type: ignore[union-attr]
        after: list[Event] = []
        await _until(back, TurnEnded, after)
        throughout: list[Event] = []
        await _until(stays, TurnEnded, throughout)
        assert _kinds(before + after) == _kinds(throughout)
        assert back.missed == 0


async def test_pending_only_history_replays_the_open_request(tmp_path: Path) -> None:
    async with Hub.start(mock=TURN) as hub:
        first = await hub.client(ClientInfo("a")).open("mock", tmp_path)
        await first.prompt("go")
        await _until(first, RequestOpened, [])
        late = hub.client(ClientInfo("phone")).attach(first.id, history=History.PENDING_ONLY)
        batches = late.batches()
        replayed = await anext(batches)
        assert [type(e.kind) for e in replayed] == [RequestOpened]
        await batches.aclose()


async def test_closing_ends_every_attachment_and_the_index_keeps_it(tmp_path: Path) -> None:
    state = HubState(tmp_path / "hub")
    async with Hub.start(mock=TURN, state=state) as hub:
        client = hub.client(ClientInfo("a"))
        attachment = await client.open("mock", tmp_path)
        watcher = hub.client(ClientInfo("w")).attach(attachment.id, Role.OBSERVER)
        seen: list[Event] = []
        reading = asyncio.ensure_future(_drain(watcher, seen))
        await attachment.close()
        await reading
        assert hub.session(attachment.id).activity is Activity.ENDED
    assert stat.S_IMODE((tmp_path / "hub").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "hub" / "sessions").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "hub" / "sessions" / f"{attachment.id}.json").stat().st_mode) == 0o600
    [entry] = state.read_index()
    assert entry.ended and entry.agent == "mock"
    async with Hub.start(mock=TURN, state=state) as again:
        assert [past.id for past in again.past()] == [entry.id]
        fresh = await again.client(ClientInfo("a")).open("mock", tmp_path)
        assert fresh.id != entry.id


def test_the_token_is_private_and_rotates(tmp_path: Path) -> None:
    state = HubState(tmp_path / "hub")
    token = state.token()
    assert state.token() == token and len(token) >= 40
    assert stat.S_IMODE((tmp_path / "hub" / "token").stat().st_mode) == 0o600
    assert state.rotate() != token


async def test_a_reader_behind_the_retention_is_told_how_many_it_missed() -> None:
    from omniagent.protocols.sidecar.agents import SessionStatus
    from omniagent.protocols.sidecar.base import SystemTime
    from omniagent.protocols.sidecar.events import StatusChanged

    log = EventLog(retention=3)
    log.extend([Event(n, SystemTime(0, 0), "s1", None, StatusChanged(status=SessionStatus.IDLE)) for n in range(1, 8)])
    got = log.since(2)
    assert got.missed == 2 and [e.sequence for e in got.events] == [5, 6, 7]
    assert log.since(6).missed == 0 and [e.sequence for e in log.since(6).events] == [7]
    assert log.since(7).events == []


async def test_a_throwaway_session_still_open_never_takes_the_id_the_hub_claims(tmp_path: Path) -> None:
    """A probe (the web page asks one when an agent is picked) opens a session of the runtime's own; one still open
    while a client opens a session must not hold the id the hub claimed in its folder (`s1`)."""
    async with Hub.start(mock=TURN, state=HubState(tmp_path / "hub")) as hub:
        throwaway = await hub.runtime.open("mock", tmp_path)  # as `Runtime.probe` does, before it closes it
        opened = await hub.client(ClientInfo("a")).open("mock", tmp_path)
        assert opened.id == "s1" and throwaway.id != "s1" and not throwaway.closed
        await throwaway.close()


async def test_a_cursor_ahead_of_the_log_reads_it_from_its_start(tmp_path: Path) -> None:
    """A cursor no event of this session has reached (a client's from the session's life in an earlier hub, before
    a later hub resumed it and numbered its events from 1 again) replays the log whole instead of hiding every
    event until the log catches up with it."""
    async with Hub.start(mock=TURN) as hub:
        first = await hub.client(ClientInfo("a")).open("mock", tmp_path)
        await first.prompt("go")
        seen: list[Event] = []
        await _until(first, RequestOpened, seen)
        back = hub.client(ClientInfo("from an earlier hub")).attach(first.id, after=seen[-1].sequence + 1_000)
        replayed = await anext(back.batches())
        assert _kinds(replayed) == _kinds(seen) and replayed[0].sequence == 1
