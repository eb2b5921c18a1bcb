"""session.rewind: cut a session's transcript before a message, and (an engine extension) put the workspace's files
back as they were at that message.

Decisions (docs/engine.md "Rewind"):
- The messages with id >= `before_message_id` are removed in one write transaction, which also journals
  `transcript.truncated{first_removed_id}` and sets the summary from what is left (message count, title, context
  gauge; `usage_total` keeps the tokens already spent). Ids are never reused: the high-water marks stay.
- A session with an open run (here or in another process sharing the store) is refused `session_busy`; the
  session's lock is held throughout, so no run can start meanwhile. The queue is kept.
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
import sqlite3
from pathlib import Path

from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.session import transcript
from omniagent.engine.store import Store, checkpoints
from omniagent.engine.store import forks as f
from omniagent.engine.store import queries as q
from omniagent.engine.store.journal import now_ms, record
from omniagent.engine.tools import ToolError
from omniagent.engine.tools.context import FileImage
from omniagent.engine.tools.files.checkpoint import current_image, put_image
from omniagent.protocols.yuke.base import Empty
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import TokenUsage
from omniagent.protocols.yuke.runs import TranscriptTruncatedData
from omniagent.protocols.yuke.sessions import Session, SessionRewindParams

# What was at each restored path just before the rewind put its checkpoint back: the undo of a failed rewind.
Undo = list[tuple[str, FileImage]]


async def rewind(store: Store, live: LiveSessions, params: SessionRewindParams) -> Empty:
    """session.rewind (through `Sessions.rewind`).

    Raises: `EngineError` unknown_session, unknown_message (no such message in the transcript), session_busy (a
    run is open), runtime_failed (a file could not be put back; nothing changed).
    """
    sid, before = params.session_id, params.before_message_id
    async with live.lock(sid):
        if live.is_busy(sid):
            raise _busy()
        root, images = await store.read(_plan, sid, before, params.restore_files)
        undo = await asyncio.to_thread(_restore, Path(root), images)
        try:
            truncated, session, gauge = await store.write(_truncate, sid, before)
        except BaseException:
            await asyncio.to_thread(_undo, Path(root), undo)
            raise
        live.emit("transcript.truncated", truncated)
        live.summary_changed(session)
        resident = live.get(sid)
        resident.context_usage = gauge
        live.activity_changed(resident)
    return Empty()


def _plan(
    conn: sqlite3.Connection, sid: str, before: int, with_files: bool
) -> tuple[str, list[checkpoints.Checkpoint]]:
    _check(conn, sid, before)
    record_ = q.get_session(conn, sid)
    assert record_ is not None
    return record_.session.root, checkpoints.images_at(conn, sid, before) if with_files else []


def _truncate(conn: sqlite3.Connection, sid: str, before: int) -> tuple[TranscriptTruncatedData, Session, TokenUsage]:
    _check(conn, sid, before)  # again, under the write lock: another process may have opened a run meanwhile
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
    return data, fresh.session, gauge


def _check(conn: sqlite3.Connection, sid: str, before: int) -> None:
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
