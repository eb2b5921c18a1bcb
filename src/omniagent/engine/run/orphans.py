"""Ending runs: the one transaction that closes an open run, and the ends of runs whose owner is gone.

Ending a child's turn run also queues its report into the parent, in the same transaction (`reports.py`), so a crash
can never lose a report nor send one twice.

Several processes may serve one store (a `serve` and an `rpc`, Zed's `acp` and a terminal `run`). Each run belongs to
the process that opened it (`store/ownership.py`); these transactions end only *orphans*, runs whose owner is gone,
never another live process's run. They run at start (crash recovery), on every lease renewal, and just before a
run opens on a session an orphan still marks as busy.
"""

from __future__ import annotations

import json

from omniagent.engine.errors import EngineError
from omniagent.engine.live import ActiveRun
from omniagent.engine.run import reports
from omniagent.engine.store import queries as q
from omniagent.engine.store.connection import Connection
from omniagent.engine.store.journal import Broadcast, now_ms, record
from omniagent.engine.store.ownership import Ownership
from omniagent.errors import OmniagentError
from omniagent.protocols.yuke.envelope import ErrorCode
from omniagent.protocols.yuke.runs import RunCanceledTiming, RunConfig, RunDoneData, RunOutcome, RunOutcomeFailed

ORPHAN_MESSAGE = "the engine stopped during the run"


class RunOwnedElsewhere(EngineError):
    """The session's open run belongs to another live process."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.SESSION_BUSY, "the session has an active run in another process")


class RunLost(OmniagentError):
    """This process's run was ended by another process meanwhile (this one had stopped renewing its lease: paused,
    or cut from a shared store): the run stops without writing, so no run is ever continued by two."""


def hold_run(conn: Connection, session_id: str, run_id: int) -> None:
    """Inside a run's write: raise RunLost (rolling the write back) unless `run_id` is still the session's open
    run. Its owner is this process then: a run's marker names only the process that opened it."""
    rec = q.get_session(conn, session_id)
    if rec is None or rec.open_run_id != run_id:
        raise RunLost


def end_run(conn: Connection, session_id: str, run: ActiveRun, outcome: RunOutcome) -> list[Broadcast]:
    """Record `outcome` for `run`, clear the open-run marker, and journal `run.done` (then, for a child's turn,
    the report queued into its parent)."""
    now = now_ms()
    q.end_run(conn, session_id, run.run_id, now, json.dumps(outcome.dump()))
    q.set_open_run(conn, session_id, None, None, None)
    done = record(
        conn,
        session_id,
        "run.done",
        lambda seq: RunDoneData(
            session_id=session_id,
            seq=seq,
            run_id=run.run_id,
            kind=run.kind,
            timing=RunCanceledTiming(started_at_ms=run.started_at_ms, ended_at_ms=now),
            outcome=outcome,
        ),
    )
    report = reports.report_run_end(conn, session_id, run.run_id, run.kind, outcome)
    return [("run.done", done)] if report is None else [("run.done", done), report]


def end_own_run(conn: Connection, session_id: str, run: ActiveRun, outcome: RunOutcome) -> list[Broadcast]:
    """`end_run` for the run this process opened; nothing when it is no longer the session's open run: this
    process stopped renewing its lease long enough (suspended, say) that another one ended the run as an orphan."""
    rec = q.get_session(conn, session_id)
    if rec is None or rec.open_run_id != run.run_id:
        return []
    return end_run(conn, session_id, run, outcome)


def end_orphans(conn: Connection, ownership: Ownership) -> list[Broadcast]:
    """End every open run whose owner is gone as failed `interrupted`, each with its run.done (and report)."""
    out = []
    for session_id in ownership.orphaned_open_runs(conn):
        rec = q.get_session(conn, session_id)
        if rec is not None and rec.open_run_id is not None:
            out += _end_marked_run(conn, rec)
    return out


def settle_open_run(conn: Connection, ownership: Ownership, session_id: str) -> list[Broadcast]:
    """Before a run opens on `session_id`: end the open run an orphan left (returning what that journaled).

    Raises:
        RunOwnedElsewhere: another live process runs the session; nothing here may touch it.
    """
    rec = q.get_session(conn, session_id)
    if rec is None or rec.open_run_id is None:
        return []
    if ownership.owned_elsewhere(conn, session_id):
        raise RunOwnedElsewhere
    return _end_marked_run(conn, rec)


def _end_marked_run(conn: Connection, rec: q.SessionRecord) -> list[Broadcast]:
    assert rec.open_run_id is not None and rec.open_run_kind in ("turn", "compaction")
    s = rec.session
    run = ActiveRun(
        run_id=rec.open_run_id,
        kind=rec.open_run_kind,  # type: ignore[arg-type]
        config=RunConfig(config_rev=s.config_rev, model=s.model, reasoning=s.reasoning),
        started_at_ms=rec.open_run_started_at_ms or now_ms(),
    )
    return end_run(conn, s.id, run, RunOutcomeFailed(code="interrupted", message=ORPHAN_MESSAGE))
