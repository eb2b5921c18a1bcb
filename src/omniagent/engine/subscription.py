"""One session's events as every face reads them: routed, with its tree of child sessions, and its turn's end.

What it is: the one place that decides which engine broadcasts belong to a face's session, follows the child
sessions below it (`Branch`), reads each broadcast once (`engine.events.SessionFeed`), acknowledges the start of a
turn (`TurnStarted`) and ends the turn only once the session's tree has settled (`TurnEnded`): the children's reports
start the session's next runs, which belong to the same turn. The runtime's engine adapter
(`runtime/adapters/engine/adapter.py`) renders what it delivers in the session language; it neither routes, adopts
nor settles on its own.
What it is not: a wire shape, or a queue. Events are delivered synchronously from the engine's broadcast (in the
order the engine emitted them) or, for `TurnEnded`, from a task of the engine's; `deliver` must never block.

Turn rules (docs/engine.md): a turn starts with `start_turn`; the next `run.started` of the session acknowledges it.
A turn ends after a `run.done` of the session once `Children.wait_settled` returns, unless a newer run of the
session started or ended meanwhile (then that run's end decides). `cancel` stops the whole tree, and the turn then
ends canceled whatever its last run said.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.children.tree import Children
from omniagent.engine.events import FeedItem, SessionFeed
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.live import LiveSessions
from omniagent.engine.run.inputs import Inputs
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, Input
from omniagent.protocols.yuke.inputs import ChildReport, InputQueuedData
from omniagent.protocols.yuke.runs import RunDoneData, RunOutcome, RunStartedData
from omniagent.protocols.yuke.sessions import (
    OriginChild,
    SendInputQueued,
    SendInputStarted,
    Session,
    SessionSummaryChangedData,
)

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]


@dataclass(frozen=True, slots=True)
class Branch:
    """A child session a subscription follows, below the subscribed session or below another branch."""

    session_id: str
    name: str
    root: str  # its workspace
    site: tuple[int, int]  # its `spawn_agent` call (message id, part id) in its parent's session
    parent: Branch | None  # None: its parent is the subscribed session

    @property
    def top(self) -> Branch:
        """The branch directly below the subscribed session that this one descends from (itself, at depth 1)."""
        return self if self.parent is None else self.parent.top

    @property
    def path(self) -> str:
        """The names from the subscribed session down to this branch, each followed by `/` (`alpha/beta/`): the
        prefix that keeps the ids of a branch's events apart from its parent's."""
        return (self.parent.path if self.parent is not None else "") + f"{self.name}/"


# Events a subscription adds to the feed's items ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """The subscribed session's summary changed (its title or model)."""

    session: Session


@dataclass(frozen=True, slots=True)
class ChildFollowed:
    """A new child session is followed from now on (its `spawn_agent` call is `branch.site` in its parent)."""

    branch: Branch


@dataclass(frozen=True, slots=True)
class ChildReported:
    """`child` reported to its parent (the session the event is delivered for): the call that spawned it is done."""

    child: Branch
    outcome: RunOutcome
    text: str


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """The run of the input `start_turn` sent has started: the turn is acknowledged."""

    run_id: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """The turn is over: the session's tree has settled after its last run, `last_run`. `canceled`: the face
    canceled the turn (it ends canceled whatever the last run said)."""

    last_run: RunDoneData
    canceled: bool


SessionEvent = FeedItem | SessionChanged | ChildFollowed | ChildReported | TurnStarted | TurnEnded
Deliver = Callable[[Branch | None, SessionEvent], None]
"""A subscriber: the branch an event belongs to (None: the subscribed session itself) and the event."""


class Subscription:
    """One face's view of one session and the child sessions below it. Made by `EngineApi.subscribe`; `close()`
    stops it."""

    def __init__(
        self,
        session: Session,
        deliver: Deliver,
        *,
        broadcaster: Broadcaster,
        interactions: Interactions,
        children: Children,
        inputs: Inputs,
        live: LiveSessions,
        spawn: Spawn,
    ) -> None:
        self.session_id = session.id
        self._deliver = deliver
        self._children = children
        self._inputs = inputs
        self._live = live
        self._spawn = spawn
        self._lookup = interactions.get
        self._feed = SessionFeed(session.id, self._lookup)
        self._branches: dict[str, tuple[Branch, SessionFeed]] = {}
        self._awaiting_start = False  # start_turn sent an input; its run has not started yet
        self._last_run: RunDoneData | None = None
        self._run_ends = 0  # run ends of the session so far: only the newest one's settling may end the turn
        self._canceled = False
        self._settling: asyncio.Task[None] | None = None
        self._turn_end: asyncio.Future[TurnEnded] | None = None
        self._closed = False
        self._unsubscribe = broadcaster.subscribe(self._on_broadcast)

    def close(self) -> None:
        """Stop delivering (idempotent); a turn end still waiting for the tree is dropped."""
        if not self._closed:
            self._closed = True
            self._unsubscribe()
            if self._settling is not None:
                self._settling.cancel()

    # Turns ----------------------------------------------------------------------------------------------------

    async def start_turn(self, input_: Input) -> SendInputStarted | SendInputQueued:
        """Send the turn's input (`session.send_input`); `TurnStarted` follows when its run starts, before the
        run's own events. Raises: `EngineError` when the engine refuses the input (no turn started)."""
        self._canceled, self._awaiting_start = False, True
        try:
            return await self._inputs.send(self.session_id, input_)
        except BaseException:
            self._awaiting_start = False
            raise

    def turn_end(self) -> asyncio.Future[TurnEnded]:
        """A future the next `TurnEnded` resolves."""
        if self._turn_end is None or self._turn_end.done():
            self._turn_end = asyncio.get_running_loop().create_future()
        return self._turn_end

    async def cancel(self) -> None:
        """Cancel the turn: stop the runs of the session's tree (their ends say how); the turn ends canceled.
        Nothing happens when the tree has already settled."""
        if await self._children.settled(self.session_id):
            return
        self._canceled = True
        await self._children.stop_tree(self.session_id)

    @property
    def awaiting_start(self) -> bool:
        """Whether the input `start_turn` sent has not started its run yet."""
        return self._awaiting_start

    def withdraw_start(self) -> None:
        """The input `start_turn` sent was withdrawn before its run started (`session.cancel_input`)."""
        self._awaiting_start = False

    # From the engine ------------------------------------------------------------------------------------------

    def _on_broadcast(self, name: str, data: YukeModel) -> None:
        try:
            self._route(name, data)
        except Exception:  # a face's rendering bug must not break the engine run that emitted the broadcast
            log.exception("could not deliver %s to a subscriber of session %s", name, self.session_id)

    def _route(self, name: str, data: YukeModel) -> None:
        if isinstance(data, SessionSummaryChangedData):
            if data.session.id == self.session_id:
                self._deliver(None, SessionChanged(data.session))
            else:
                self._follow(data.session)
            return
        session_id = getattr(data, "session_id", None)
        if session_id == self.session_id:
            self._own(name, data)
        elif isinstance(session_id, str) and session_id in self._branches:
            branch, feed = self._branches[session_id]
            if name == "session.removed":
                del self._branches[session_id]
                return
            self._report(branch, data)
            for item in feed.read(name, data):
                self._deliver(branch, item)

    def _own(self, name: str, data: YukeModel) -> None:
        if isinstance(data, RunStartedData) and self._awaiting_start:
            self._awaiting_start = False
            self._deliver(None, TurnStarted(data.run_id))
        self._report(None, data)
        for item in self._feed.read(name, data):
            self._deliver(None, item)
        if isinstance(data, RunDoneData):
            self._last_run = data
            self._run_ends += 1
            if self._settling is not None:
                self._settling.cancel()
            self._settling = self._spawn(self._end_when_settled(self._run_ends))

    def _follow(self, session: Session) -> None:
        """Follow a new child of the subscribed session or of a followed child."""
        origin = session.origin
        if session.id in self._branches or not isinstance(origin, OriginChild):
            return
        if origin.parent_id == self.session_id:
            parent = None
        elif origin.parent_id in self._branches:
            parent = self._branches[origin.parent_id][0]
        else:
            return
        site = (origin.parent_message_id, origin.parent_part_id)
        branch = Branch(session.id, session.name or "", session.root, site, parent)
        self._branches[session.id] = (branch, SessionFeed(session.id, self._lookup))
        self._deliver(parent, ChildFollowed(branch))

    def _report(self, owner: Branch | None, data: YukeModel) -> None:
        """A report queued into `owner`'s session from one of its followed children."""
        if not isinstance(data, InputQueuedData) or not isinstance(data.input.source, ChildReport):
            return
        found = self._branches.get(data.input.source.session_id)
        if found is None or found[0].parent is not owner:
            return
        text = "".join(p.text for p in data.input.content if isinstance(p, ContentText))
        self._deliver(owner, ChildReported(found[0], data.input.source.outcome, text))

    async def _end_when_settled(self, run_ends: int) -> None:
        try:
            await self._children.wait_settled(self.session_id)
        except Exception:  # the store failed: the face's session ends with the engine (it watches that)
            log.exception("waiting for the tree of session %s to settle", self.session_id)
            return
        if self._closed or run_ends != self._run_ends or self._live.is_busy(self.session_id):
            return  # a newer run of the session decides the turn's end
        assert self._last_run is not None
        ended, self._canceled = TurnEnded(self._last_run, self._canceled), False
        self._settling = None
        self._deliver(None, ended)
        if self._turn_end is not None and not self._turn_end.done():
            self._turn_end.set_result(ended)
