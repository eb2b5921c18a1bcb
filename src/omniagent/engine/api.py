"""The engine's API: the one surface the faces (`rpc`, `acp`) and the runtime's engine adapter use.

What it is: `EngineApi`, the operations those callers need over one open engine, behind one error boundary (a
failure of the store or the file system below becomes an `EngineError` `internal`; refusals are the parts' own
`EngineError`s), the yuke method table for the rpc face, and `subscribe`, which gives a face one session's events
with its child sessions and its turn's end (`engine/subscription.py`). It also re-exports the types a caller of
these operations handles, so no caller imports an engine part.
What it is not: the composition root (`engine/engine.py` builds the parts) or a wire: each face translates what it
gets here into its own lines.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from omniagent.engine.broadcast import Subscriber
from omniagent.engine.engine import Engine, EngineConfig, engine_config
from omniagent.engine.errors import EngineError
from omniagent.engine.events import (
    SPAWN_TOOL,
    Chunk,
    Committed,
    FeedItem,
    InteractionOpened,
    Noticed,
    PlanChanged,
    QuestionOpened,
    RunEnded,
    RunStarted,
    ToolCall,
    ToolChanged,
    ToolKind,
    ToolOpened,
    ToolOutput,
    message_ref,
    read_tool_call,
    tool_call_ref,
)
from omniagent.engine.interactions.permissions import Decision, PendingInteraction, PermissionMode, describe
from omniagent.engine.interactions.questions import PendingQuestion, Reply
from omniagent.engine.mcp.config import ServerSpec
from omniagent.engine.providers.auth.credentials import CredentialError, CredentialStore
from omniagent.engine.providers.catalog.file import CatalogError
from omniagent.engine.providers.catalog.table import COST_DIGITS, Catalog
from omniagent.engine.sandboxes import SANDBOX_OPTION_IDS, SANDBOX_OPTIONS, SandboxSettings, option_values
from omniagent.engine.skills.catalog import SkillCatalog
from omniagent.engine.store.connection import STORE_ERRORS
from omniagent.engine.subscription import (
    Branch,
    ChildFollowed,
    ChildReported,
    Deliver,
    SessionChanged,
    SessionEvent,
    Subscription,
    TurnEnded,
    TurnStarted,
)
from omniagent.engine.tools.context import Answered, CannotAsk, Dismissed, PlanEntry, Question
from omniagent.engine.tools.plan import PLAN_TOOL, plan_of_part
from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import Message
from omniagent.protocols.yuke.sessions import (
    CreateSession,
    Session,
    SessionCancelInputParams,
    SessionCompactParams,
    SessionCompactResult,
    SessionForkParams,
    SessionGetParams,
    SessionListParams,
    SessionListResult,
    SessionPatch,
    SessionPatchParams,
    SessionRemoveParams,
    SessionRewindParams,
)

if TYPE_CHECKING:
    from omniagent.engine.live import ActiveRun

__all__ = [
    "COST_DIGITS",
    "PLAN_TOOL",
    "SANDBOX_OPTIONS",
    "SANDBOX_OPTION_IDS",
    "SPAWN_TOOL",
    "Answered",
    "Branch",
    "CannotAsk",
    "Catalog",
    "CatalogError",
    "ChildFollowed",
    "ChildReported",
    "Chunk",
    "Committed",
    "CredentialError",
    "CredentialStore",
    "Decision",
    "Deliver",
    "Dismissed",
    "EngineApi",
    "EngineConfig",
    "EngineError",
    "ErrorCode",
    "FeedItem",
    "InteractionOpened",
    "Noticed",
    "PendingInteraction",
    "PendingQuestion",
    "PermissionMode",
    "PlanChanged",
    "PlanEntry",
    "Question",
    "QuestionOpened",
    "Reply",
    "RunEnded",
    "RunStarted",
    "SandboxSettings",
    "ServerSpec",
    "SessionChanged",
    "SessionEvent",
    "SkillCatalog",
    "Subscription",
    "ToolCall",
    "ToolChanged",
    "ToolKind",
    "ToolOpened",
    "ToolOutput",
    "TurnEnded",
    "TurnStarted",
    "describe",
    "message_ref",
    "option_values",
    "plan_of_part",
    "read_tool_call",
    "tool_call_ref",
]

P = ParamSpec("P")
R = TypeVar("R")


_FAILURES: tuple[type[Exception], ...] = (*STORE_ERRORS, OSError)


def _guarded(operation: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """The one error boundary: what fails below the engine's parts (the store, the file system) becomes an
    `internal` EngineError with a fixed sentence (details go to the log through the caller's chain)."""

    @functools.wraps(operation)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await operation(*args, **kwargs)
        except _FAILURES as exc:
            raise EngineError(ErrorCode.INTERNAL, "the engine's store failed") from exc

    return run


class EngineApi:
    """One open engine, as its callers see it. Open with `async with EngineApi.open(config) as api`."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, config: EngineConfig, *, broadcasts: Subscriber | None = None) -> AsyncIterator[EngineApi]:
        """Open the engine and end the runs a previous process left open (`interrupted`); on exit, end this
        process's active runs as interrupted and close everything. `broadcasts` gets every broadcast from the
        start, those of that recovery included (the rpc face's notifications). Raises: what opening the store
        raises (`OSError`, `STORE_ERRORS`)."""
        async with Engine.open(config) as engine:
            if broadcasts is not None:
                engine.broadcaster.subscribe(broadcasts)
            await engine.recover()
            yield cls(engine)

    @staticmethod
    def config(data_dir: Path | None = None) -> EngineConfig:
        """The config of a face's engine (`--data-dir`, else OMNIAGENT_DATA_DIR, else the user dirs)."""
        return engine_config(data_dir)

    def interrupt_runs(self) -> list[ActiveRun]:
        """Ask every active run to end `interrupted` (the client went away); returns them without waiting."""
        return self._engine.interrupt_runs()

    # The yuke method table (the rpc face) ---------------------------------------------------------------------

    def serves(self, method: str) -> bool:
        """Whether `handle(method, …)` runs the method (others answer not_implemented)."""
        return self._engine.serves(method)

    @_guarded
    async def handle(self, method: str, params: YukeModel) -> YukeModel:
        """Run one yuke method. Raises: `EngineError` (the method's refusal, or not_implemented)."""
        return await self._engine.handle(method, params)

    def extension_params(self, method: str) -> type[YukeModel] | None:
        """The params model of an engine extension method (docs/engine.md), or None."""
        return self._engine.extensions.get(method)

    # The catalog ----------------------------------------------------------------------------------------------

    @property
    def catalog(self) -> Catalog:
        """Providers and models as this engine knows them."""
        return self._engine.model_access.catalog

    def context_window(self, selector: str) -> int | None:
        """The context window of the model a selector names, if the catalog knows it."""
        found = self.catalog.model(selector)
        return found[1].limits.context_window if found is not None and found[1].limits else None

    # Sessions -------------------------------------------------------------------------------------------------

    @_guarded
    async def session(self, session_id: str) -> Session:
        """The stored session. Raises: `EngineError` unknown_session."""
        return (await self._engine.sessions.get(SessionGetParams(session_id=session_id))).session

    @_guarded
    async def list_sessions(self, cursor: str | None = None) -> SessionListResult:
        """One page of the sessions, newest first."""
        return await self._engine.sessions.list_(SessionListParams(cursor=cursor))

    @_guarded
    async def create_session(
        self, workspace: str, *, model: str | None = None, reasoning: str | None = None
    ) -> Session:
        """A new session working in `workspace`. Raises: `EngineError` unsupported_model, unsupported_reasoning,
        bad_request (not a usable workspace)."""
        params = CreateSession(workspace_path=workspace, model=model, reasoning=reasoning)
        return (await self._engine.sessions.create(params)).session

    @_guarded
    async def fork_session(self, session_id: str, workspace: str, *, through_message_id: int | None = None) -> Session:
        """A copy of the session's conversation (through a message, or all of it) working in `workspace`.
        Raises: `EngineError` unknown_session, unknown_message, bad_request."""
        forked = await self._engine.sessions.fork(
            SessionForkParams(session_id=session_id), through_message_id=through_message_id, workspace_path=workspace
        )
        return forked.session

    @_guarded
    async def patch_session(
        self, session_id: str, *, model: str | None = None, reasoning: str | None = None
    ) -> Session:
        """Set the session's model or reasoning. Raises: `EngineError` unknown_session, unsupported_model,
        unsupported_reasoning, invalid_patch."""
        patch = SessionPatch(model=model) if model is not None else SessionPatch(reasoning=reasoning)
        return (await self._engine.sessions.patch(SessionPatchParams(session_id=session_id, patch=patch))).session

    @_guarded
    async def remove_session(self, session_id: str, *, with_children: bool = False) -> None:
        """Remove the session (and its child sessions with `with_children`). Raises: `EngineError`."""
        await self._engine.sessions.remove(SessionRemoveParams(session_id=session_id, cascade_children=with_children))

    @_guarded
    async def rewind(self, session_id: str, before_message_id: int, *, restore_files: bool) -> None:
        """Cut the conversation before a message (and put back the files changed since). Raises: `EngineError`."""
        params = SessionRewindParams(
            session_id=session_id, before_message_id=before_message_id, restore_files=restore_files
        )
        await self._engine.sessions.rewind(params)

    @_guarded
    async def conversation(self, session_id: str) -> list[Message]:
        """The session's whole committed conversation, oldest first. Raises: `EngineError` unknown_session."""
        return await self._engine.sessions.conversation(session_id)

    @_guarded
    async def skills(self, session: Session) -> SkillCatalog:
        """The session's skills (found the first time they are asked for in this process, then fixed)."""
        return await self._engine.skills.catalog(session.id, session.root)

    @_guarded
    async def attach_mcp(self, session_id: str, servers: Sequence[ServerSpec]) -> None:
        """The session's MCP servers, started with its next run and stopped by `detach_mcp`."""
        await self._engine.mcp.attach(session_id, servers)

    @_guarded
    async def detach_mcp(self, session_id: str) -> None:
        await self._engine.mcp.detach(session_id)

    # A session's options --------------------------------------------------------------------------------------

    def permission_mode(self, session_id: str) -> PermissionMode:
        return self._engine.permissions.mode(session_id)

    def set_permission_mode(self, session_id: str, mode: PermissionMode) -> None:
        self._engine.permissions.set_mode(session_id, mode)

    def sandbox_settings(self, session_id: str) -> SandboxSettings:
        return self._engine.sandboxes.settings(session_id)

    def choose_sandbox(self, session_id: str, option_id: str, value: object) -> str | None:
        """Apply one sandbox select option (`SANDBOX_OPTIONS`); the refusal as a sentence, None when applied."""
        return self._engine.sandboxes.choose(session_id, option_id, value)

    def show_workspace_at(self, session_id: str, workdir: str) -> None:
        """Show the session's workspace to its model, commands and file tools at `workdir` (an absolute path other
        than `/`, e.g. `/app`; a workspace view) instead of its own path, from its next tool call and run on; its
        child sessions inherit it. Raises: `EngineError` bad_request (not such a path)."""
        seen = Path(workdir)
        if not seen.is_absolute() or seen == Path("/") or os.path.normpath(workdir) != workdir:
            raise EngineError.bad_request(f"the workdir must be an absolute, normal path other than /: {workdir!r}")
        self._engine.sandboxes.show_workspace_at(session_id, seen)

    # Turns ------------------------------------------------------------------------------------------------------

    def subscribe(self, session: Session, deliver: Deliver) -> Subscription:
        """Deliver the session's events (and its child sessions') from now on, and its turns' ends; the
        subscription's `close()` stops it."""
        e = self._engine
        return Subscription(
            session,
            deliver,
            broadcaster=e.broadcaster,
            interactions=e.interactions,
            children=e.children,
            inputs=e.inputs,
            live=e.live,
            spawn=e.spawn,
        )

    def is_busy(self, session_id: str) -> bool:
        """Whether a run of the session runs in this process now."""
        return self._engine.live.is_busy(session_id)

    @_guarded
    async def cancel_input(self, session_id: str, input_id: int) -> None:
        """Withdraw a queued input. Raises: `EngineError` (unknown, or already started)."""
        await self._engine.inputs.cancel_input(SessionCancelInputParams(session_id=session_id, input_id=input_id))

    @_guarded
    async def compact(self, session_id: str) -> SessionCompactResult:
        """Start (or reserve) a compaction run. Raises: `EngineError`."""
        return await self._engine.inputs.compact(SessionCompactParams(session_id=session_id))

    @_guarded
    async def settled(self, session_id: str) -> bool:
        """Whether the session and everything below it are done."""
        return await self._engine.children.settled(session_id)

    @_guarded
    async def stop_tree(self, session_id: str) -> None:
        """Cancel the runs of the session and of everything below it, and wait for them to end."""
        await self._engine.children.stop_tree(session_id)

    # Interactions -----------------------------------------------------------------------------------------------

    def answer_permission(self, interaction_id: int, decision: Decision) -> None:
        """Raises: `EngineError` when the ask is no longer open (answered, or its run stopped)."""
        self._engine.permissions.answer(interaction_id, decision)

    def pending_question(self, interaction_id: int) -> PendingQuestion | None:
        return self._engine.questions.pending(interaction_id)

    def answer_question(self, interaction_id: int, reply: Reply) -> None:
        """Raises: `EngineError` when the question is no longer open."""
        self._engine.questions.answer(interaction_id, reply)
