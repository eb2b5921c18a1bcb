"""What a child tells its parent, as inputs queued into the parent in the child's own transaction: the report at
the end of each of its turn runs (`child_report`), and the notice that instructions the parent sent it were
canceled before they ran (`child_input_canceled`). Both are protected: nobody can cancel them.

The report's text is the child's last words in that run (its newest committed assistant text), cut to
`REPORT_MAX_BYTES`; `partial` says the run did not finish normally (failed, canceled, cut by `max_rounds`), so
the text is what it had when it stopped. The child's whole transcript stays in the child session. A turn that
ended because the child spawned children of its own (finish `tool_calls`) sends no report: the child is not
done, and reports when a later turn, woken by its children's reports, ends.

They live with the runs, not with the child tree (`children/tree.py`): they are written inside a run's own
transactions (its end, `orphans.py`; canceled instructions, `rows.py`) into the parent's input queue (`queue.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from omniagent.engine.run import queue
from omniagent.engine.store import queries as q
from omniagent.engine.store import trees
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import Broadcast, record
from omniagent.engine.transcript import parse_message
from omniagent.protocols.yuke.content import ContentText
from omniagent.protocols.yuke.inputs import ChildInputCanceled, ChildReport, InputCanceledData, QueuedInput
from omniagent.protocols.yuke.messages import AssistantMessage, TextPart
from omniagent.protocols.yuke.runs import (
    RunKind,
    RunOutcome,
    RunOutcomeCanceled,
    RunOutcomeFailed,
    RunOutcomeTurn,
)
from omniagent.protocols.yuke.sessions import OriginChild

# Bytes of a child's last text a report carries; the rest stays in the child's transcript.
REPORT_MAX_BYTES = 16 * 1024
NO_TEXT = "(the child wrote no text)"


def report_run_end(
    conn: Connection, session_id: str, run_id: int, kind: RunKind, outcome: RunOutcome
) -> Broadcast | None:
    """When `session_id` is a child and the run a turn: queue its report into the parent (the parent's
    `input.queued`); None otherwise."""
    parent_id = _parent(conn, session_id)
    waits = isinstance(outcome, RunOutcomeTurn) and outcome.finish == "tool_calls"
    if parent_id is None or kind != "turn" or waits:
        return None
    body, truncated = _clip(_last_text(conn, session_id, run_id))
    partial = not (isinstance(outcome, RunOutcomeTurn) and outcome.finish == "stop")
    path = trees.name_path(conn, session_id)
    source = ChildReport(
        session_id=session_id, run_id=run_id, path=path, outcome=outcome, partial=partial, truncated=truncated
    )
    text = f"{_headline(path, run_id, outcome)}\n\n{body}"
    if truncated:
        text += f"\n\n[cut to {REPORT_MAX_BYTES // 1024} KiB; the whole transcript is in the child session]"
    data = queue.enqueue(conn, parent_id, [ContentText(text=text)], source, limit=None)
    assert data is not None  # no limit
    return ("input.queued", data)


def instructions_canceled(conn: Connection, session_id: str, canceled: list[QueuedInput]) -> Broadcast | None:
    """When instructions a parent sent the child `session_id` were canceled before they ran: tell the parent
    which ones (its `input.queued`); None when none of `canceled` came from the parent."""
    parent_id = _parent(conn, session_id)
    mine = [i for i in canceled if i.source is not None and i.source.type == "parent_instruction"]
    if parent_id is None or not mine:
        return None
    path = trees.name_path(conn, session_id)
    quoted = "\n\n".join(
        "> " + "\n> ".join("".join(p.text for p in i.content if isinstance(p, ContentText)).splitlines()) for i in mine
    )
    text = f"Your instruction to the child agent `{path}` was canceled before it ran:\n\n{quoted}"
    source = ChildInputCanceled(session_id=session_id, path=path, input_ids=[i.input_id for i in mine])
    data = queue.enqueue(conn, parent_id, [ContentText(text=_clip(text)[0])], source, limit=None)
    assert data is not None
    return ("input.queued", data)


def withdraw(conn: Connection, parent_id: str, children: set[str]) -> list[InputCanceledData]:
    """Drop what the sessions `children` queued into their parent and no turn has read yet (they are being
    removed, so nothing of theirs may reach the parent): the parent's `input.canceled` for each."""
    out = []
    for item, _skill in queue.queued(conn, parent_id):
        source = item.source
        if isinstance(source, ChildReport | ChildInputCanceled) and source.session_id in children:
            q.delete_pending(conn, parent_id, item.input_id)
            out.append(record(conn, parent_id, "input.canceled", _canceled(parent_id, item.input_id)))
    return out


def _canceled(parent_id: str, input_id: int) -> Callable[[int], InputCanceledData]:
    return lambda seq: InputCanceledData(session_id=parent_id, seq=seq, input_id=input_id)


def _parent(conn: Connection, session_id: str) -> str | None:
    rec = q.get_session(conn, session_id)
    if rec is None or not isinstance(rec.session.origin, OriginChild):
        return None
    parent_id = rec.session.origin.parent_id
    return parent_id if q.get_session(conn, parent_id) is not None else None


def _headline(path: str, run_id: int, outcome: RunOutcome) -> str:
    who = f"Report from the child agent `{path}` (run {run_id})"
    if isinstance(outcome, RunOutcomeFailed):
        return f"{who}: it stopped early ({outcome.code}: {outcome.message}). What it had written by then:"
    if isinstance(outcome, RunOutcomeCanceled):
        return f"{who}: its run was canceled. What it had written by then:"
    if isinstance(outcome, RunOutcomeTurn) and outcome.finish != "stop":
        return f"{who}: its last answer ended early ({outcome.finish}):"
    return f"{who}:"


def _last_text(conn: Connection, session_id: str, run_id: int) -> str:
    for payload in q.assistant_payloads_of_run(conn, session_id, run_id):
        message = parse_message(payload)
        if isinstance(message, AssistantMessage):
            text = "".join(p.text for p in message.content if isinstance(p, TextPart)).strip()
            if text:
                return text
    return NO_TEXT


def _clip(text: str) -> tuple[str, bool]:
    raw = text.encode()
    if len(raw) <= REPORT_MAX_BYTES:
        return text, False
    return raw[:REPORT_MAX_BYTES].decode(errors="ignore"), True
