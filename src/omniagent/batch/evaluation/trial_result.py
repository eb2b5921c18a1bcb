"""A trial's `result.json`: its `results.jsonl` line, plus the fields of Harbor's `TrialResult` (harbor 0.20.0,
`harbor.models.trial.result`) where they mean the same thing, named and shaped as Harbor names and shapes them, so
what reads Harbor's trial results reads ours (docs/batch.md, "`result.json`").

Two of the line's fields share a name with Harbor's and are merged: `agent_info` is Harbor's (`name`, `version`,
`model_info`) with the line's `model` and `session_id` kept and the agent's own name as `reported_name`; `verifier`
is Harbor's phase timing (`started_at`, `finished_at`) with the line's `exit_code`, `seconds` and `error`.
`exception_info` is built from the trial's error, never from a traceback (none is kept: an agent's stderr is in
`error` already, and nothing more may leak).

What this is not: the line itself (results.py, the commit point and what resume reads), the job's result
(job_result.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omniagent.batch.results import ErrorKind, Span, Status, TaskResult, Timings, run_dir, trial_name

# `exception_type` of a trial whose verifier gave no reward (the agent's own failure, when it had one, comes first).
VERIFIER_ERROR = "verifier"
# The phase each kind of failure happens in (`refused` is the environment's before the session opens, else the
# agent's sandbox policy just after); a Ray failure is the worker's, in no phase of ours.
_PHASE = {
    ErrorKind.WORKSPACE: "environment_setup",
    ErrorKind.AGENT_START: "agent_setup",
    ErrorKind.RAY: None,
}
# What a cancelled turn without an error of its own says (an agent that stopped at its own turn limit has one).
_STOPPED = {
    Status.TIMED_OUT: "the time limit passed; the turn was cancelled",
    Status.TURN_LIMIT: "the agent made more tool calls than max_turns allows; the turn was cancelled",
}


def name(task: str, agent: str, trial: int) -> str:
    """The trial's name in the job (Harbor's `trial_name`): `TASK/AGENT`, `TASK/AGENT@i` for trial i > 1, its
    directory under `OUT/tasks/` (`/` is in no id, so no two trials share one)."""
    return f"{task}/{trial_name(agent, trial)}"


def iso(moment: float) -> str:
    """A Unix time as ISO 8601 in UTC (Harbor's datetimes)."""
    return datetime.fromtimestamp(moment, UTC).isoformat()


def finished_at(timings: Timings) -> float:
    """When the trial ended (an older line has no `finished_at`: its start and its seconds)."""
    return timings.finished_at if timings.finished_at is not None else timings.started_at + timings.total_seconds


def record(out: Path, result: TaskResult) -> dict[str, Any]:
    """`result.json` of `result`, a trial of the job under `out` (absolute)."""
    line: dict[str, Any] = json.loads(result.to_json())
    timings = result.timings
    harbor: dict[str, Any] = {
        "task_name": result.task,
        "trial_name": name(result.task, result.agent, result.trial),
        "trial_uri": run_dir(out, result.task, result.agent, result.trial).as_uri(),
        "agent_info": agent_info(result),
        "agent_result": agent_result(result),
        "verifier_result": {"rewards": result.rewards} if result.rewards is not None else None,
        "exception_info": exception_info(result),
        "started_at": iso(timings.started_at),
        "finished_at": iso(finished_at(timings)),
        "environment_setup": _timing(timings.environment_setup),
        "agent_setup": _timing(timings.agent_setup),
        "agent_execution": _timing(timings.agent_execution),
        "verifier": _verifier(result),
    }
    return harbor | {key: value for key, value in line.items() if key not in harbor}


def agent_info(result: TaskResult) -> dict[str, Any]:
    """Harbor's `AgentInfo`: `name` the agent id the job ran (what Harbor's is: the agent it was asked for),
    `version` as the agent said it ("unknown" where it did not, as Harbor writes), `model_info` from the session's
    model option (`provider/name`, split as Harbor splits `-m`); with the line's `model`, `session_id` and the name
    the agent gave itself (`reported_name`), null where the session never opened."""
    about = result.agent_info
    model = about.model if about is not None else None
    model_info = None
    if model:
        provider, _, model_name = model.partition("/") if "/" in model else ("", "", model)
        model_info = {"name": model_name, "provider": provider or None}
    return {
        "name": result.agent,
        "version": (about.version if about is not None else None) or "unknown",
        "model_info": model_info,
        "reported_name": about.name if about is not None else None,
        "model": model,
        "session_id": about.session_id if about is not None else None,
    }


def agent_result(result: TaskResult) -> dict[str, Any] | None:
    """Harbor's `AgentContext`, null when the agent's phase never ran. The agents report their context size and
    cost, not input, cache and output tokens: those are null, the context size is in `metadata`."""
    if result.timings.agent_execution is None:
        return None
    return {
        "n_input_tokens": None,
        "n_cache_tokens": None,
        "n_output_tokens": None,
        "cost_usd": result.usage.cost_usd,
        "metadata": {"context_tokens": result.usage.context_tokens},
    }


def failure(result: TaskResult) -> tuple[str, str, str | None] | None:
    """What went wrong in the trial, None when nothing did: its type (the `error_kind`, else the status, else
    `verifier` for a verifier that gave no reward), its message, and the phase it happened in (None: unknown)."""
    timings = result.timings
    if result.status is not Status.COMPLETED:
        kind = result.error_kind
        if kind is ErrorKind.REFUSED:
            phase: str | None = "agent_setup" if timings.agent_setup is not None else "environment_setup"
        else:
            phase = _PHASE.get(kind, "agent_execution") if kind is not None else "agent_execution"
        message = result.error or _STOPPED.get(result.status, f"the trial {result.status.value}")
        return (kind.value if kind is not None else result.status.value), message, phase
    if result.verifier is not None and result.verifier.error is not None:
        return VERIFIER_ERROR, result.verifier.error, "verifier"
    return None


def exception_info(result: TaskResult) -> dict[str, Any] | None:
    """Harbor's `ExceptionInfo` of the trial's failure (`failure`), with the `phase` it happened in; when it
    occurred is that phase's end. `exception_traceback` says there is none and where it happened."""
    found = failure(result)
    if found is None:
        return None
    kind, message, phase = found
    span = getattr(result.timings, phase) if phase is not None else None
    where = f"in the {phase} phase" if phase is not None else "on the Ray worker"
    return {
        "exception_type": kind,
        "exception_message": message,
        "exception_traceback": f"no traceback is kept; it happened {where}",
        "occurred_at": iso(span.finished_at if span is not None else finished_at(result.timings)),
        "phase": phase,
    }


def _timing(span: Span | None) -> dict[str, str] | None:
    """Harbor's `TimingInfo`."""
    if span is None:
        return None
    return {"started_at": iso(span.started_at), "finished_at": iso(span.finished_at)}


def _verifier(result: TaskResult) -> dict[str, Any] | None:
    """Harbor's verifier `TimingInfo` with the line's `verifier` (exit code, seconds, error); null when it did not
    run."""
    checked = result.verifier
    if checked is None:
        return None
    times: dict[str, Any] = _timing(result.timings.verifier) or {"started_at": None, "finished_at": None}
    return times | {"exit_code": checked.exit_code, "seconds": checked.seconds, "error": checked.error}
