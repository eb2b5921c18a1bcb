"""session.fork: a new session whose transcript is a copy of another's committed messages, up to a cut point.

Decisions (docs/engine.md "Forks"):
- What is copied, in one write transaction: the committed messages with id < the cut (ids, parts and payloads
  unchanged), every RunConfig revision, the current model / reasoning / max_rounds / system prompt / profile, and
  the message, run and input high-water marks (so the fork's new ids follow every id the source gave). Not copied:
  the queue, the open run, the event log (the fork's `seq` starts at 1), the permission mode.
- Forking is allowed while the source runs: only committed messages are copied (the draft being streamed is not).
  The yuke wire says nothing on this; answering session_busy, as rewind does, would refuse a harmless read.
- The fork's summary is derived from what was copied: message count, usage totals, last-turn usage, title.
- Broadcast: `session.summary_changed` for the new session (as after create). The copied messages are not
  broadcast again; a frontend reads them with session.history.
"""

from __future__ import annotations

from omniagent.engine import transcript
from omniagent.engine.errors import EngineError
from omniagent.engine.live import LiveSessions
from omniagent.engine.store import Store
from omniagent.engine.store import forks as f
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.messages import AssistantMessage, TokenUsage
from omniagent.protocols.yuke.sessions import OriginFork, Session, SessionForkParams, SessionResult

# Above every message id (ids are at most 2^53 - 1 on the wire): "copy everything".
_ALL = 2**63 - 1


async def fork(
    store: Store,
    live: LiveSessions,
    params: SessionForkParams,
    *,
    through_message_id: int | None = None,
    root: str | None = None,
) -> SessionResult:
    """session.fork (through `Sessions.fork`). In process, callers may instead cut *after* a message
    (`through_message_id`, the runtime's fork point) and give the fork another workspace (`root`, canonical).

    Raises: `EngineError` unknown_session, unknown_message (the cut names no message of the source).
    """
    before = params.before_message_id
    session = await store.write(_fork, params.session_id, before, through_message_id, root)
    live.summary_changed(session)
    return SessionResult(session=session)


def _fork(conn: Connection, source_id: str, before: int | None, through: int | None, root: str | None) -> Session:
    record = q.get_session(conn, source_id)
    if record is None:
        raise EngineError.unknown_session()
    cut = _ALL
    for mark, bound in ((before, 0), (through, 1)):
        if mark is not None:
            if not f.message_exists(conn, source_id, mark):
                raise EngineError(ErrorCode.UNKNOWN_MESSAGE, "the session has no such message")
            cut = min(cut, mark + bound)
    source = record.session
    copied = [transcript.parse_message(p) for p in f.message_payloads_before(conn, source_id, cut)]
    now = now_ms()
    fork_session = Session(
        id=transcript.new_session_id(),
        root=root or source.root,
        profile=source.profile,
        model=source.model,
        reasoning=source.reasoning,
        config_rev=source.config_rev,
        max_rounds=source.max_rounds,
        title=transcript.title_of_messages(copied),
        message_count=0,
        usage_total=TokenUsage(),
        created_at_ms=now,
        updated_at_ms=now,
        origin=OriginFork(source_id=source_id),
        agent=transcript.ROOT_AGENT,
    )
    q.insert_session(conn, fork_session, record.system_prompt)
    f.copy_counters(conn, source_id, fork_session.id)
    f.copy_configs(conn, source_id, fork_session.id)
    f.copy_messages(conn, source_id, fork_session.id, cut)
    usages = [m.tokens for m in copied if isinstance(m, AssistantMessage) and m.tokens is not None]
    f.set_totals(conn, fork_session.id, len(copied), _sum(usages), _sum(usages[-1:]))
    fresh = q.get_session(conn, fork_session.id)
    assert fresh is not None
    return fresh.session


def _sum(usages: list[TokenUsage]) -> tuple[int, int, int, int, int]:
    return (
        sum(u.input for u in usages),
        sum(u.output for u in usages),
        sum(u.reasoning for u in usages),
        sum(u.cache_read for u in usages),
        sum(u.cache_write for u in usages),
    )
