"""session.rewind: cut a session's transcript before a message, and (an engine extension) put the workspace's files
back as they were at that message.

Decisions (docs/engine.md "Rewind"):
- The messages with id >= `before_message_id` are removed in one write transaction, which also journals
  `transcript.truncated{first_removed_id}` and sets the summary from what is left (message count, title, context
  gauge; `usage_total` keeps the tokens already spent). Ids are never reused: the high-water marks stay.
- A session with an open run (here or in another process sharing the store) is refused `session_busy`; the
  session's lock is held throughout, so no run can start meanwhile. The queue is kept, but for what the removed
  children queued (below).
- The child sessions spawned in a removed message (their origin's `parent_message_id` >= `before_message_id`),
  and every session below them, are removed with it: what came after the cut is gone, their names are free
  again. Their runs are canceled first (`Children.retiring`, the tree held so that no run end starts anything),
  then in the same transaction as the cut their reports and notices still queued in the session are dropped
  (`input.canceled`) and they are deleted, the deepest first (`session.removed` each). Children spawned before
  the cut stay. A child to be removed that another process runs makes the rewind `session_busy`. If the rewind
  fails after the runs were canceled, they stay canceled (a run cannot be resumed) and nothing starts; all else is
  as it was.
- `restore_files` (default false, so a yuke client gets exactly the spec's rewind): every file the engine's `write`
  and `edit` changed from that message on gets the content it had then (per path, its earliest checkpoint from
  that message on; see store/checkpoints.py), or is removed when it did not exist. Files are put back *before*
  the transcript is cut, each atomically; if one fails, those already put back are undone and nothing is rewound
  (`runtime_failed`). Changes made by `exec` commands are not checkpointed, so they are not undone; a checkpoint
  withheld because it held a secret answer leaves its file as it is.
- Checkpoints outlive the rewind: they stay true facts about the files' past, so a later rewind before an
  earlier message still finds them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from omniagent.engine import transcript
from omniagent.engine.children.tree import Children
from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.run import reports
from omniagent.engine.store import Store, checkpoints, trees
from omniagent.engine.store import forks as f
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms, record
from omniagent.engine.tools import ToolError
from omniagent.engine.tools.context import FileImage
from omniagent.engine.tools.files.checkpoint import Image, current_image, put_image
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.inputs import InputCanceledData
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.runs import TranscriptTruncatedData
from omniagent.protocols.yuke.sessions import Session, SessionRewindParams

# What was at each restored path just before the rewind put its checkpoint back (a link as the link itself): the
# undo of a failed rewind.
Undo = list[tuple[str, Image]]


async def rewind(store: Store, live: LiveSessions, children: Children, params: SessionRewindParams) -> Empty:
    """session.rewind (through `Sessions.rewind`).

    Raises: `EngineError` unknown_session, unknown_message (no such message in the transcript), session_busy (a
    run is open, or another process runs a child to be removed), runtime_failed (a file could not be put back;
    nothing changed).
    """
    sid, before = params.session_id, params.before_message_id
    async with children.halted(sid) as hold, live.lock(sid):
        if live.is_busy(sid):
            raise _busy()
        plan = await store.read(_plan, sid, before, params.restore_files)
        # The children go first: they work in the same workspace, so none may change a file being put back.
        async with children.retiring(plan.doomed):
            try:
                cut = await _cut(store, sid, before, plan)
            except BaseException:
                # Their canceled runs cannot be taken back: as in a stopped tree, nothing starts, and their reports
                # wait in the session's queue (a rewind that succeeds drops them).
                hold.wake = not plan.doomed
                raise
            _announce(live, cut)
    return Empty()


async def _cut(store: Store, sid: str, before: int, plan: _Plan) -> _Cut:
    """Put the files back, then cut the transcript and remove the children; the files undone if the cut fails."""
    undo = await asyncio.to_thread(_restore, Path(plan.root), plan.images)
    try:
        return await store.write(_truncate, sid, before)
    except BaseException:
        await asyncio.to_thread(_undo, Path(plan.root), undo)
        raise


@dataclass(frozen=True, slots=True)
class _Plan:
    root: str
    images: list[checkpoints.Checkpoint]
    doomed: list[str]  # the children spawned from the cut on and their descendants, each before its children


@dataclass(frozen=True, slots=True)
class _Cut:
    truncated: TranscriptTruncatedData
    session: Session
    gauge: TokenUsage
    withdrawn: list[InputCanceledData]  # the removed children's reports and notices the session had queued
    removed: list[str]  # deepest first


def _plan(conn: Connection, sid: str, before: int, with_files: bool) -> _Plan:
    _check(conn, sid, before)
    record_ = q.get_session(conn, sid)
    assert record_ is not None
    images = checkpoints.images_at(conn, sid, before) if with_files else []
    return _Plan(record_.session.root, images, trees.spawned_since(conn, sid, before))


def _truncate(conn: Connection, sid: str, before: int) -> _Cut:
    _check(conn, sid, before)  # again, under the write lock: another process may have opened a run meanwhile
    doomed = trees.spawned_since(conn, sid, before)
    # Stopped here (`retiring`): a run still open is another process's; then nothing is deleted or cut.
    if not trees.delete_unless_running(conn, doomed):
        raise EngineError(ErrorCode.SESSION_BUSY, "a child session spawned after that message has an active run")
    withdrawn = reports.withdraw(conn, sid, set(doomed))
    q.delete_messages_from(conn, sid, before)
    left = [transcript.parse_message(p) for p in q.all_messages(conn, sid)]
    gauge = transcript.context_of(left)
    q.set_transcript_summary(conn, sid, len(left), transcript.title_of_messages(left), gauge, now_ms())
    data = record(
        conn,
        sid,
        "transcript.truncated",
        lambda seq: TranscriptTruncatedData(session_id=sid, seq=seq, first_removed_id=before),
    )
    fresh = q.get_session(conn, sid)
    assert fresh is not None
    return _Cut(data, fresh.session, gauge, withdrawn, list(reversed(doomed)))


def _announce(live: LiveSessions, cut: _Cut) -> None:
    sid = cut.session.id
    live.emit("transcript.truncated", cut.truncated)
    for canceled in cut.withdrawn:
        live.emit("input.canceled", canceled)
    live.summary_changed(cut.session)
    resident = live.get(sid)
    resident.context_usage = cut.gauge
    resident.queued = max(0, resident.queued - len(cut.withdrawn))
    live.activity_changed(resident)
    for child in cut.removed:
        live.removed(child)


def _check(conn: Connection, sid: str, before: int) -> None:
    record_ = q.get_session(conn, sid)
    if record_ is None:
        raise EngineError.unknown_session()
    if record_.open_run_id is not None:
        raise _busy()
    if not f.message_exists(conn, sid, before):
        raise EngineError(ErrorCode.UNKNOWN_MESSAGE, "the session has no such message")


def _busy() -> EngineError:
    return EngineError(ErrorCode.SESSION_BUSY, "the session has an active run")


def _restore(root: Path, images: list[checkpoints.Checkpoint]) -> Undo:
    """Put every kept image back, each file atomically; all or none (a failure undoes the ones done)."""
    undo: Undo = []
    try:
        for image in images:
            if not image.kept:
                continue  # withheld (it held a secret answer): the file stays as it is
            undo.append((image.path, current_image(root, image.path)))
            put_image(root, image.path, FileImage(image.content, image.mode))
    except (ToolError, OSError):
        _undo(root, undo)
        raise EngineError(ErrorCode.RUNTIME_FAILED, "a file could not be restored; nothing was rewound") from None
    return undo


def _undo(root: Path, undo: Undo) -> None:
    for path, image in reversed(undo):
        try:
            put_image(root, path, image)
        except (ToolError, OSError):
            continue  # best effort: the others still go back
