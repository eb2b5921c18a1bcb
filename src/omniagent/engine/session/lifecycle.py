"""Session lifecycle: create, list, get, patch, remove, history, config, fork, rewind.

Each command is one store transaction; its durable broadcasts are emitted after the commit.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

from omniagent.engine.children.tree import Children
from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.model_access import ModelAccess
from omniagent.engine.run.inputs import Inputs
from omniagent.engine.session import fork, rewind
from omniagent.engine.skills.catalog import Skills
from omniagent.engine.store import Store, trees
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms, record
from omniagent.engine.transcript import (
    ROOT_AGENT,
    new_session,
    new_session_id,
    parse_message,
    resolve_placeholders,
)
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import Message
from omniagent.protocols.yuke.runs import ConfigChangedData, RunConfig
from omniagent.protocols.yuke.sessions import (
    CreateSession,
    OriginRoot,
    PopulationChildren,
    Session,
    SessionConfigParams,
    SessionConfigResult,
    SessionForkParams,
    SessionGetParams,
    SessionHistoryParams,
    SessionHistoryResult,
    SessionListItem,
    SessionListParams,
    SessionListResult,
    SessionPatchParams,
    SessionRemoveParams,
    SessionResult,
    SessionRewindParams,
)

DEFAULT_PROFILE = "default"  # docs/engine.md "Decisions on the protocol's open points" #3
LIST_DEFAULT, LIST_MAX = 25, 100  # session.list page size (the yuke wire's limits)
HISTORY_DEFAULT, HISTORY_MAX = 50, 500  # session.history page size (the yuke wire's limits)


class Sessions:
    """The session methods of one engine, built with what they use: the store, the live sessions, the
    engine's model access, input admission (for `initial_input`), the sessions' skills (discovered when a session
    starts) and the child machinery (for `child`). `max_rounds`: a root session's when `session.create` gives none
    (the engine setting OMNIAGENT_MAX_ROUNDS)."""

    def __init__(
        self,
        store: Store,
        live: LiveSessions,
        model_access: ModelAccess,
        inputs: Inputs,
        skills: Skills,
        children: Children,
        *,
        max_rounds: int | None = None,
    ) -> None:
        self._store = store
        self._live = live
        self._model_access = model_access
        self._inputs = inputs
        self._skills = skills
        self._children = children
        self._max_rounds = max_rounds

    async def create(self, params: CreateSession) -> SessionResult:
        """session.create: validate the workspace and model, store the session and its first config (a child
        session: `children.tree.Children.create`)."""
        root = canonical_workspace(params.workspace_path)
        if params.child is not None:
            return await self._children.create(params, root)
        model, reasoning = self._model_access.choose(params.model, params.reasoning)
        session_id = new_session_id()
        await self._skills.catalog(session_id, root)  # the session starts: its skills are the ones found now
        if params.initial_input is not None:
            try:
                await self._inputs.prepare(session_id, params.initial_input, root)
            except EngineError:
                self._skills.forget(session_id)
                raise
        profile = params.profile or DEFAULT_PROFILE
        origin, agent = OriginRoot(), ROOT_AGENT
        max_rounds = params.max_rounds if params.max_rounds is not None else self._max_rounds
        session = new_session(session_id, root, profile, model, reasoning, max_rounds, origin, agent)
        system_prompt = resolve_placeholders(params.system_prompt, root, session.id, ROOT_AGENT)

        def txn(conn: Connection) -> None:
            q.insert_session(conn, session, system_prompt)
            q.insert_config(conn, session.id, 0, model, reasoning, max_rounds)

        await self._store.write(txn)
        self._live.summary_changed(session)
        started = None
        if params.initial_input is not None:
            started, opened = await self._inputs.send_with_summary(session.id, params.initial_input)
            session = opened or session
        return SessionResult(session=session, input=started)

    async def get(self, params: SessionGetParams) -> SessionListItem:
        """session.get: the summary with live activity (or the durable idle activity)."""
        record_ = await self._store.query(q.get_session, params.session_id)
        if record_ is None:
            raise EngineError.unknown_session()
        queued = await self._store.query(q.count_pending, params.session_id)
        return SessionListItem(session=record_.session, activity=self._live.activity_of(record_, queued))

    async def list_(self, params: SessionListParams) -> SessionListResult:
        """session.list: keyset pages by `updated_at_ms DESC, id DESC` with an opaque cursor bound to the population."""
        population = params.population
        parent = population.parent_id if isinstance(population, PopulationChildren) else None
        selector = f"{population.type}:{parent or ''}"
        limit = min(max(params.limit or LIST_DEFAULT, 1), LIST_MAX)
        after = _decode_cursor(params.cursor, selector) if params.cursor is not None else None
        active = self._live.busy_ids() if params.view == "active" else None

        rows, total = await self._store.query(q.list_records, population.type, parent, after, limit + 1, active)
        if total is None:  # past the last page: the population's size alone
            total = await self._store.query(q.count_sessions, population.type, parent, active)
        items = [
            SessionListItem(session=r.session, activity=self._live.activity_of(r, queued)) for r, queued in rows[:limit]
        ]
        next_cursor = None
        if len(rows) > limit:
            last = rows[limit - 1][0].session
            next_cursor = _encode_cursor(selector, last.updated_at_ms, last.id)
        return SessionListResult(revision=self._live.revision, items=items, next_cursor=next_cursor, total=total)

    async def patch(self, params: SessionPatchParams) -> SessionResult:
        """session.patch: a new RunConfig revision (applies to the next run when one is active)."""
        record_ = await self._store.query(q.get_session, params.session_id)
        if record_ is None:
            raise EngineError.unknown_session()
        p, s = params.patch, record_.session
        if p.model is None and p.reasoning is None and p.max_rounds is None:
            raise EngineError(ErrorCode.INVALID_PATCH, "the patch changes nothing")
        model, reasoning = self._model_access.choose(
            p.model or s.model,
            p.reasoning if p.reasoning is not None else (None if p.model is not None else s.reasoning),
        )
        max_rounds = p.max_rounds if p.max_rounds is not None else s.max_rounds
        return SessionResult(session=await self.set_config(s, model, reasoning, max_rounds))

    async def set_config(self, s: Session, model: str, reasoning: str, max_rounds: int | None) -> Session:
        """Append the session's next RunConfig revision (checked by the caller); emits `config.changed` and the
        new summary. Returns the summary."""

        def txn(conn: Connection) -> tuple[Session, ConfigChangedData]:
            rev = s.config_rev + 1
            q.insert_config(conn, s.id, rev, model, reasoning, max_rounds)
            q.set_session_config(conn, s.id, rev, model, reasoning, max_rounds, now_ms())
            data = record(
                conn,
                s.id,
                "config.changed",
                lambda seq: ConfigChangedData(
                    session_id=s.id, seq=seq, config=RunConfig(config_rev=rev, model=model, reasoning=reasoning)
                ),
            )
            fresh = q.get_session(conn, s.id)
            assert fresh is not None
            return fresh.session, data

        session, changed = await self._store.write(txn)
        self._live.emit("config.changed", changed)
        self._live.summary_changed(session)
        return session

    async def remove(self, params: SessionRemoveParams) -> Empty:
        """session.remove: refuse a busy session or one with children (unless cascading)."""
        sid = params.session_id

        def collect(conn: Connection) -> list[str] | None:
            return None if q.get_session(conn, sid) is None else trees.with_descendants(conn, [sid])

        doomed = await self._store.read(collect)
        if doomed is None:
            raise EngineError.unknown_session()
        if len(doomed) > 1 and not params.cascade_children:
            raise EngineError(ErrorCode.SESSION_HAS_CHILDREN, "the session has children")
        if any(self._live.is_busy(d) for d in doomed):
            raise EngineError(ErrorCode.SESSION_BUSY, "the session has an active run")

        if not await self._store.write(trees.delete_unless_running, doomed):
            raise EngineError(ErrorCode.SESSION_BUSY, "the session has an active run")
        for d in reversed(doomed):
            self._live.removed(d)
        return Empty()

    async def history(self, params: SessionHistoryParams) -> SessionHistoryResult:
        """session.history: messages with id < before_message_id, oldest first, newest page first."""
        limit = min(max(params.limit or HISTORY_DEFAULT, 1), HISTORY_MAX)
        sid = params.session_id

        # The page and its configs in one statement; the extra row only tells whether more messages are older.
        rows = await self._store.query(q.history_page, sid, params.before_message_id, limit + 1)
        if not rows and await self._store.query(q.get_session, sid) is None:  # a message implies its session
            raise EngineError.unknown_session()
        page = rows[:limit]
        configs = sorted({config for _, _, config in page if config is not None})
        payloads, has_more = [p for _, p, _ in reversed(page)], len(rows) > limit
        return SessionHistoryResult(
            session_id=sid,
            messages=[parse_message(p) for p in payloads],
            configs=[RunConfig(config_rev=r, model=m, reasoning=e) for r, m, e in configs],
            has_more=has_more,
        )

    async def conversation(self, session_id: str) -> list[Message]:
        """Every committed message of a session, oldest first, in one read (for the faces: replay, rollback).

        Raises: `EngineError` unknown_session.
        """

        def txn(conn: Connection) -> list[str] | None:
            return None if q.get_session(conn, session_id) is None else q.all_messages(conn, session_id)

        payloads = await self._store.read(txn)
        if payloads is None:
            raise EngineError.unknown_session()
        return [parse_message(p) for p in payloads]

    async def config(self, params: SessionConfigParams) -> SessionConfigResult:
        """session.config: the current RunConfig (or a given revision) and the fixed system prompt."""
        record_ = await self._store.query(q.get_session, params.session_id)
        if record_ is None:
            raise EngineError.unknown_session()
        rev = record_.session.config_rev if params.config_rev is None else params.config_rev
        rows = await self._store.query(q.get_configs, params.session_id, [rev])
        if not rows:
            raise EngineError(ErrorCode.UNKNOWN_CONFIG_REV, "unknown config revision")
        r, m, e = rows[0]
        return SessionConfigResult(
            config=RunConfig(config_rev=r, model=m, reasoning=e), system_prompt=record_.system_prompt
        )

    async def fork(
        self, params: SessionForkParams, *, through_message_id: int | None = None, workspace_path: str | None = None
    ) -> SessionResult:
        """session.fork. In process, callers may instead cut *after* a message (`through_message_id`, the
        runtime's fork point) and give the fork another workspace (`workspace_path`, ACP's `cwd`); neither is on
        the yuke wire.

        Raises: `EngineError` unknown_session, unknown_message (the cut names no message of the source),
        bad_request (the workspace is not an absolute directory).
        """
        root = canonical_workspace(workspace_path) if workspace_path is not None else None
        return await fork.fork(self._store, self._live, params, through_message_id=through_message_id, root=root)

    async def rewind(self, params: SessionRewindParams) -> Empty:
        """session.rewind: remove the messages from `before_message_id` on; with the engine extension
        `restore_files`, put back the files the engine's tools changed since (see `rewind.py`).

        Raises: `EngineError` unknown_session, unknown_message, session_busy, runtime_failed.
        """
        return await rewind.rewind(self._store, self._live, self._children, params)


def canonical_workspace(path: str) -> str:
    """`path` resolved (symlinks followed); bad_request unless it is an absolute path to a directory."""
    if not os.path.isabs(path):
        raise EngineError.bad_request("the workspace path must be absolute")
    resolved = Path(path).resolve()
    if not resolved.is_dir():
        raise EngineError.bad_request("the workspace does not exist or is not a directory")
    return str(resolved)


def _encode_cursor(selector: str, updated_at_ms: int, session_id: str) -> str:
    raw = json.dumps([selector, updated_at_ms, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, selector: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        bound, updated, sid = json.loads(raw)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise EngineError(ErrorCode.STALE_CURSOR, "the cursor is not valid") from exc
    if bound != selector or not isinstance(updated, int) or not isinstance(sid, str):
        raise EngineError(ErrorCode.STALE_CURSOR, "the cursor belongs to another listing")
    return updated, sid
