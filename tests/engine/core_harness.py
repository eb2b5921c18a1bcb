"""The engine's parts wired by hand around an in-memory store, for unit tests of the engine core.

No `Engine` and no subprocess: each part is built with what it uses (as `Engine.__init__` does), so a failure
names the broken part. The fake LLM server stands in for the provider, over its real HTTP/SSE wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from omniagent.engine.broadcast import Broadcaster
from omniagent.engine.children.tree import Children
from omniagent.engine.interactions.permissions import Permissions
from omniagent.engine.interactions.questions import Questions
from omniagent.engine.interactions.registry import Interactions
from omniagent.engine.interactions.secrets import Secrets
from omniagent.engine.live import LiveSessions
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.run.context import RunDeps
from omniagent.engine.run.inputs import Inputs
from omniagent.engine.run.limits import ChildLimits
from omniagent.engine.sandboxes import Sandboxes
from omniagent.engine.session.lifecycle import Sessions
from omniagent.engine.skills.catalog import Skills
from omniagent.engine.slots.file import AgentsFile
from omniagent.engine.store import Store
from omniagent.engine.tools import ToolLimits, default_tools
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.sessions import CreateSession
from omniagent.testing import FakeLLMServer
from tests.engine.rpc_harness import write_providers
from tests.stores import open_test_store

MODEL = "fake-anthropic/fake-model"
WAIT = 5.0  # seconds: bound on every wait for a broadcast


@dataclass
class Parts:
    """The wired parts and every broadcast they emitted, in order."""

    store: Store
    live: LiveSessions
    permissions: Permissions
    inputs: Inputs
    sessions: Sessions
    workspace: Path
    seen: list[tuple[str, YukeModel]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def record(self, name: str, data: YukeModel) -> None:
        self.seen.append((name, data))
        self._changed.set()

    def names(self, start: int = 0) -> list[str]:
        return [name for name, _ in self.seen[start:]]

    async def wait(self, name: str, where: Callable[[YukeModel], bool] = lambda _: True, start: int = 0) -> int:
        """The index of the first broadcast `name` (from `start`) that fits `where`, waiting for it (bounded)."""
        async with asyncio.timeout(WAIT):
            while True:
                for index in range(start, len(self.seen)):
                    found, data = self.seen[index]
                    if found == name and where(data):
                        return index
                self._changed.clear()
                await self._changed.wait()

    def data(self, index: int) -> YukeModel:
        return self.seen[index][1]

    async def new_session(self) -> str:
        created = await self.sessions.create(CreateSession(workspace_path=str(self.workspace), model=MODEL))
        return created.session.id


@asynccontextmanager
async def open_parts(tmp_path: Path, llm: FakeLLMServer) -> AsyncIterator[Parts]:
    """The engine's parts on an in-memory store, with providers pointing at `llm`; runs still open at exit are
    interrupted and awaited."""
    config, data, workspace = tmp_path / "config", tmp_path / "data", tmp_path / "ws"
    write_providers(config, llm)
    workspace.mkdir()
    store = await open_test_store()
    model_access = ModelAccess.load(data, config)
    try:
        async with asyncio.TaskGroup() as tasks:
            broadcaster = Broadcaster()
            live = LiveSessions(broadcaster)
            interactions = Interactions(broadcaster)
            permissions = Permissions(interactions)
            questions = Questions(interactions, Secrets())
            sandboxes = Sandboxes(data, config)
            deps = RunDeps(
                store, live, model_access, default_tools(), permissions, questions, sandboxes, 1.0, ToolLimits()
            )
            inputs = Inputs(store, live, tasks, deps)
            skills = Skills.none()
            children = Children(
                store, live, model_access, inputs, skills, AgentsFile(config, model_access), ChildLimits()
            )
            sessions = Sessions(store, live, model_access, inputs, skills, children)
            parts = Parts(store, live, permissions, inputs, sessions, workspace)
            broadcaster.subscribe(parts.record)
            try:
                yield parts
            finally:
                for run in live.active_runs():
                    inputs.interrupt(run, "interrupted")
    finally:
        await model_access.aclose()
        await store.aclose()
