"""Child sessions: creating one at a live tool site of its parent, the agent tools' capability, and starting what
waits in a session tree when one of its runs ends. docs/engine.md "Child sessions".

What it is: the rules of the tree. A child is made by `session.create` with `child` (the parent's tool site must
be live: the parent runs that tool call now), works in its parent's workspace on its slot's model or its
parent's, and is at most `ChildLimits.max_depth` below its root. Its turns open only while the tree has room
(`run.rows`, `concurrency_limit`); each turn's end queues a report into the parent (`reports`, in the same
transaction). When a run of the tree ends, every session of the tree that waits with queued input (a parent with
a report, a child waiting for room) is started (`run_closed`), so an idle parent wakes up on its children's
reports.
What it is not: admission itself (`inputs.Inputs`, which this drives) or the report's text (`run/reports.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass

from omniagent.engine.errors import EngineError
from omniagent.engine.live import ActiveRun, LiveSessions
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.run.inputs import Inputs
from omniagent.engine.run.limits import ChildLimits
from omniagent.engine.skills.catalog import Skills
from omniagent.engine.slots.file import AgentsFile
from omniagent.engine.store import Store, trees
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import CONFLICTS, Connection
from omniagent.engine.tools import AgentControl, ToolResult
from omniagent.engine.tools.agents import CHILD_NAME, RESERVED_NAME
from omniagent.engine.tools.context import AgentSlot
from omniagent.engine.transcript import new_session, new_session_id, resolve_placeholders
from omniagent.protocols.yuke.activity import ActivityRunningTool
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.content import ContentText, InputContent
from omniagent.protocols.yuke.inputs import ParentInstruction
from omniagent.protocols.yuke.sessions import (
    ChildSession,
    CreateSession,
    OriginChild,
    Session,
    SessionCancelRunParams,
    SessionResult,
)

# The system prompt of a child created without one (placeholders filled at creation).
CHILD_SYSTEM_PROMPT = (
    "You are `${agent_name}`, a child agent working in the workspace ${workspace} on a task a parent agent gave "
    "you. Use the tools to do it. Your last message is your report to the parent: say what you found or did, "
    "briefly and precisely; the parent sees nothing else of your work."
)
# Broadcasts after which a subtree may have settled (besides the end of `run_closed`).
_SETTLING = frozenset({"run.done", "session.removed"})


@dataclass(slots=True)
class Hold:
    """A hold on a tree (`Children.halted`): `wake` False when its end must start nothing, like a stopped tree's."""

    wake: bool = True


class Children:
    """The child sessions of one engine: built with the store, the live sessions, the engine's model access, input
    admission (which it attaches itself to), the sessions' skills, agents.json and the limits.
    `inherit(child, parent)` gives a new child its parent's in-memory settings (permission mode, exec sandbox)
    before its first run."""

    def __init__(
        self,
        store: Store,
        live: LiveSessions,
        model_access: ModelAccess,
        inputs: Inputs,
        skills: Skills,
        agents: AgentsFile,
        limits: ChildLimits,
        inherit: Callable[[str, str], None] = lambda _child, _parent: None,
    ) -> None:
        self._store = store
        self._live = live
        self._model_access = model_access
        self._inputs = inputs
        self._skills = skills
        self._agents = agents
        self.limits = limits
        self._inherit = inherit
        self._halted: dict[str, int] = {}  # trees being stopped (how many times): their run ends start nothing
        self._missed: set[str] = set()  # halted trees in which a run ended (what it would have started waits)
        self._closing: dict[str, int] = {}  # sessions whose run end is not fully handled yet
        self._waiters: set[asyncio.Event] = set()
        live.broadcaster.subscribe(self._on_broadcast)
        inputs.attach(self)

    # session.create with `child` ------------------------------------------------------------------------------

    async def create(self, params: CreateSession, root: str) -> SessionResult:
        """Create the child `params.child` names at its parent's live tool site and send it `initial_input` (as
        the parent's instruction). `root` is the canonical workspace.

        Raises: `EngineError` unknown_session (no such parent), bad_request (no initial input, another workspace,
        a tool site that is not running, a bad or taken name, the depth limit), and the model's refusals.
        """
        child = params.child
        assert child is not None
        parent = await self._store.query(q.get_session, child.parent_id)
        if parent is None:
            raise EngineError.unknown_session()
        p = parent.session
        task = params.initial_input
        if task is None:
            raise EngineError.bad_request("a child session needs an initial input: its task")
        if p.root != root:
            raise EngineError.bad_request("a child session works in its parent's workspace")
        if not CHILD_NAME.match(child.name) or child.name == RESERVED_NAME:
            raise EngineError.bad_request("the child name must match ^[a-z][a-z0-9_-]{0,63}$ and not be root")
        if not self._site_is_live(child):
            raise EngineError.bad_request("the parent tool site is not live: the parent is not running that call")
        if params.model is not None:
            model, reasoning = self._model_access.choose(params.model, params.reasoning)
        else:
            model, reasoning = self._model_access.choose(p.model, params.reasoning or p.reasoning)
        origin = OriginChild(
            parent_id=child.parent_id, parent_message_id=child.parent_message_id, parent_part_id=child.parent_part_id
        )
        profile, name, session_id = params.profile or p.profile, child.name, new_session_id()
        session = new_session(session_id, root, profile, model, reasoning, params.max_rounds, origin, name, name)
        template = params.system_prompt if params.system_prompt is not None else CHILD_SYSTEM_PROMPT
        await self._skills.catalog(session_id, root)  # the child starts: its skills are the ones found now
        try:
            system_prompt = resolve_placeholders(template, root, session_id, name)
            await self._inputs.prepare(session_id, task, root)
            await self._store.write(self._insert, session, system_prompt)
        except CONFLICTS:  # another process named a child the same meanwhile (the unique index)
            self._skills.forget(session_id)
            raise EngineError.bad_request("the parent already has a child with this name") from None
        except EngineError:
            self._skills.forget(session_id)
            raise
        self._inherit(session.id, child.parent_id)
        self._live.summary_changed(session)
        source = ParentInstruction(
            session_id=child.parent_id, message_id=child.parent_message_id, part_id=child.parent_part_id
        )
        started, opened = await self._inputs.send_with_summary(session.id, task, source)
        return SessionResult(session=opened or session, input=started)

    def _site_is_live(self, child: ChildSession) -> bool:
        parent = self._live.find(child.parent_id)
        state = parent.state if parent is not None and parent.run is not None else None
        return (
            isinstance(state, ActivityRunningTool)
            and state.message_id == child.parent_message_id
            and state.part_id == child.parent_part_id
        )

    def _insert(self, conn: Connection, session: Session, system_prompt: str | None) -> None:
        origin = session.origin
        assert isinstance(origin, OriginChild) and session.name is not None
        if trees.depth(conn, origin.parent_id) + 1 > self.limits.max_depth:
            raise EngineError.bad_request(f"child sessions may be at most {self.limits.max_depth} below their root")
        if trees.child_named(conn, origin.parent_id, session.name) is not None:
            raise EngineError.bad_request("the parent already has a child with this name")
        q.insert_session(conn, session, system_prompt)
        q.insert_config(conn, session.id, 0, session.model, session.reasoning, session.max_rounds)

    # The tree ---------------------------------------------------------------------------------------------------

    def control(self, session_id: str, message_id: int, part_id: int) -> AgentControl:
        """What the agent tools may do from one tool site of `session_id`."""
        return _Control(self, session_id, message_id, part_id)

    def run_closing(self, session_id: str) -> None:
        """A run of the session is ending: its tree is not settled until `run_closed` has started what waits."""
        self._closing[session_id] = self._closing.get(session_id, 0) + 1

    async def run_closed(self, session_id: str, *, wake: bool) -> None:
        """A run of the session's tree ended here: with `wake`, start every session of the tree that waits with
        queued input (the longest waiting first; a child waits on while the tree is full)."""
        try:
            root = await self._store.read(trees.tree_root, session_id)
            if wake and root in self._halted:
                self._missed.add(root)
            elif wake:
                await self._wake(root)
        finally:
            left = self._closing.pop(session_id, 1) - 1
            if left:
                self._closing[session_id] = left
            self._notify()

    async def _wake(self, root: str) -> None:
        for waiting in await self._store.query(trees.waiting, root):
            await self._inputs.drain(waiting)

    @contextlib.asynccontextmanager
    async def halted(self, session_id: str) -> AsyncIterator[Hold]:
        """Hold the session's tree: run ends in it start nothing meanwhile (so none waits on a lock the caller
        holds); on the way out, what they would have started is started, unless the caller cleared `Hold.wake`.
        Enter it before taking any session lock."""
        root = await self._store.read(trees.tree_root, session_id)
        hold = Hold()
        self._halted[root] = self._halted.get(root, 0) + 1
        try:
            yield hold
        finally:
            if self._unhalt(root) and hold.wake:
                await self._wake(root)

    def _unhalt(self, root: str) -> bool:
        """Release one hold of the tree; whether a run ended while it was held (and it is held no more)."""
        left = self._halted.pop(root) - 1
        if left:
            self._halted[root] = left
            return False
        missed = root in self._missed
        self._missed.discard(root)
        return missed

    @contextlib.asynccontextmanager
    async def retiring(self, members: list[str]) -> AsyncIterator[None]:
        """Stop the sessions `members`, about to be removed, and keep them stopped while the caller removes them:
        each run is canceled (outcome `canceled`, its report queued as any run end's) and starts nothing after
        it, and their locks are held, so no input starts one meanwhile. The caller holds their tree (`halted`)."""
        while True:
            runs = self._runs(members)
            for run in runs:
                self._inputs.interrupt(run, "removed")
            tasks = [r.task for r in runs if r.task is not None]
            if tasks:
                await asyncio.wait(tasks)
            async with contextlib.AsyncExitStack() as locks:
                for member in members:
                    await locks.enter_async_context(self._live.lock(member))
                if not self._runs(members):  # else one started before its lock was taken: stop it too
                    yield
                    return

    async def settled(self, session_id: str) -> bool:
        """Whether the session and everything below it are done: no open run, and no run end still starting
        what waits. Queued input that nothing will start (reports kept by `stop_tree`, or left by a crash)
        waits for the next input there."""
        members = await self._store.query(trees.subtree, session_id)
        if any(m in self._closing for m in members):
            return False
        return not await self._store.query(trees.any_open_run, session_id)

    async def wait_settled(self, session_id: str) -> None:
        """Return once `settled(session_id)` (the faces end a prompt's turn only then: the children's reports
        continue it)."""
        changed = asyncio.Event()
        self._waiters.add(changed)
        try:
            while True:
                changed.clear()
                if await self.settled(session_id):
                    return
                await changed.wait()
        finally:
            self._waiters.discard(changed)

    async def stop_tree(self, session_id: str) -> None:
        """Cancel the runs of the session and of everything below it, and the inputs that may be canceled; wait
        for those runs to end. Their ends start nothing: the children's reports stay queued in their parents
        until the next input there."""
        async with self.halted(session_id) as hold:
            hold.wake = False  # what waits stays waiting: a stopped tree starts nothing
            members = await self._store.query(trees.subtree, session_id)
            tasks = [r.task for r in self._runs(members) if r.task is not None]
            for member in members:  # the session's own queue stays: its client decides about it
                clear = member != session_id
                await self._inputs.cancel_run(SessionCancelRunParams(session_id=member, clear_queue=clear))
            if tasks:
                await asyncio.wait(tasks)

    def _runs(self, members: Iterable[str]) -> list[ActiveRun]:
        runs = []
        for member in members:
            live = self._live.find(member)
            if live is not None and live.run is not None:
                runs.append(live.run)
        return runs

    # The agent tools -------------------------------------------------------------------------------------------

    async def spawn(self, site: ChildSession, task: str, slot: AgentSlot | None) -> ToolResult:
        """`spawn_agent` at `site`: create the child and give it `task`; the receipt the model reads."""
        parent = await self._store.query(q.get_session, site.parent_id)
        if parent is None:
            return ToolResult.error("this session no longer exists")
        root = parent.session.root
        try:
            model, reasoning = (None, None) if slot is None else self._agents.resolve(slot)[:2]
            task_input = InputContent(content=[ContentText(text=task)])
            params = CreateSession(
                workspace_path=root,
                model=model,
                reasoning=reasoning,
                max_rounds=self.limits.max_rounds,
                initial_input=task_input,
                child=site,
            )
            created = await self.create(params, root)
        except EngineError as exc:
            return ToolResult.error(f"the child was not started: {exc.message}")
        receipt = {
            "session_id": created.session.id,
            "name": site.name,
            "model": created.session.model,
            "input": created.input.dump() if created.input is not None else None,
            "note": "The child works on its own; its report will come back to you as a new message. "
            "This turn ends after this round's tool calls.",
        }
        return ToolResult(output=json.dumps(receipt), ends_turn=True)

    async def instruct(self, source: ParentInstruction, name: str, message: str) -> ToolResult:
        """`send_agent_input`: send the child `name` of `source.session_id` a follow-up instruction."""
        child = await self._store.query(trees.child_named, source.session_id, name)
        if child is None:
            return ToolResult.error(f"you have no child agent named {name!r}")
        try:
            result = await self._inputs.send(child, InputContent(content=[ContentText(text=message)]), source)
        except EngineError as exc:
            return ToolResult.error(f"the instruction was not sent: {exc.message}")
        return ToolResult(output=json.dumps({"name": name, "input": result.dump()}))

    async def stop(self, parent_id: str, name: str) -> ToolResult:
        """`stop_agent`: cancel the run of the child `name` of `parent_id` and the instructions waiting for it."""
        child = await self._store.query(trees.child_named, parent_id, name)
        if child is None:
            return ToolResult.error(f"you have no child agent named {name!r}")
        result = await self._inputs.cancel_run(SessionCancelRunParams(session_id=child, clear_queue=True))
        if result.canceled_run is not None:
            return ToolResult(output=f"Stopped `{name}`; its report will come back to you as a new message.")
        if result.cleared_inputs:
            return ToolResult(output=f"`{name}` was not running; its waiting instructions are canceled.")
        return ToolResult(output=f"`{name}` had nothing running or waiting.")

    def _on_broadcast(self, name: str, _data: YukeModel) -> None:
        if name in _SETTLING:
            self._notify()

    def _notify(self) -> None:
        for waiter in self._waiters:
            waiter.set()


class _Control:
    """The agent tools' capability at one tool site of one session."""

    def __init__(self, children: Children, session_id: str, message_id: int, part_id: int) -> None:
        self._children = children
        self._site = (session_id, message_id, part_id)

    async def spawn(self, name: str, task: str, slot: AgentSlot | None) -> ToolResult:
        sid, mid, pid = self._site
        site = ChildSession(parent_id=sid, parent_message_id=mid, parent_part_id=pid, name=name)
        return await self._children.spawn(site, task, slot)

    async def send(self, name: str, message: str) -> ToolResult:
        sid, mid, pid = self._site
        source = ParentInstruction(session_id=sid, message_id=mid, part_id=pid)
        return await self._children.instruct(source, name, message)

    async def stop(self, name: str) -> ToolResult:
        return await self._children.stop(self._site[0], name)
