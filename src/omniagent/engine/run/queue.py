"""The input queue: a session's durable queue of inputs waiting for a run, at the row level. Enqueue one input
(the client's, or one the engine sends with a source: a parent's instruction, a child's report) and journal its
`input.queued`, in the caller's transaction. Admission (`rows.py`) and child reports (`reports.py`)
both queue through here. (Not the runtime session loop's command inbox, `runtime/turns.py`.)

The skill a skill input ran is kept beside the queued item in its row (yuke's QueuedInput has no field for it),
for the user message it becomes.
"""

from __future__ import annotations

import json

from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import now_ms, record
from omniagent.protocols.yuke.base import decode, decode_json
from omniagent.protocols.yuke.content import ContentPart, SkillRef
from omniagent.protocols.yuke.inputs import InputQueuedData, InputSource, QueuedInput

MAX_QUEUED = 128  # queued inputs per session (yuke limit)

_SKILL_KEY = "skill"  # a queued skill input's SkillRef, in its pending row beside the QueuedInput fields

# Sources only the engine sends, which nobody may cancel: a report, a notice (the parent's instructions can be).
PROTECTED_SOURCES = frozenset({"child_report", "child_input_canceled", "engine_interruption"})


def enqueue(
    conn: Connection,
    session_id: str,
    content: list[ContentPart],
    source: InputSource | None = None,
    skill: SkillRef | None = None,
    *,
    limit: int | None = MAX_QUEUED,
) -> InputQueuedData | None:
    """Queue one input behind the session's run: its journaled `input.queued`, or None when `limit` inputs
    already wait (None: no limit, for the engine's own reports, which must never be lost). The caller checked
    that the session exists."""
    if limit is not None and q.count_pending(conn, session_id) >= limit:
        return None
    input_id = q.bump_counter(conn, session_id, "input_id_high")
    item = QueuedInput(source=source, input_id=input_id, content=content, queued_at_ms=now_ms())
    data = record(
        conn, session_id, "input.queued", lambda seq: InputQueuedData(session_id=session_id, seq=seq, input=item)
    )
    stored = item.dump() | ({_SKILL_KEY: skill.dump()} if skill is not None else {})
    q.insert_pending(conn, session_id, input_id, data.seq, item.queued_at_ms, json.dumps(stored))
    return data


def queued_input(payload: str) -> QueuedInput:
    """A stored pending input as its wire model (the skill kept beside it is ignored)."""
    return decode_json(QueuedInput, payload)


def queued(conn: Connection, session_id: str) -> list[tuple[QueuedInput, SkillRef | None]]:
    """The session's queued inputs, oldest first, each with the skill it runs (None for content)."""
    out = []
    for payload in q.list_pending(conn, session_id):
        skill = json.loads(payload).get(_SKILL_KEY)
        out.append((queued_input(payload), decode(SkillRef, skill) if skill is not None else None))
    return out
