"""`OUT/result.json`: the job's result as Harbor's `JobResult` (harbor 0.20.0, `harbor.models.job.result`) has it,
its fields named and shaped as Harbor's where they mean the same thing, followed by what `job.json` holds
(job.py), so one file serves both readers (docs/batch.md, "`result.json`").

The job's `id` and `started_at` are the first run's: a rerun of the same `--out` (a resume) is the same job, so they
are read back from the file. It is written when a batch starts (`finished_at` null: the job is running, and a
`kill -9` keeps its id and start) and when it ends, beside `job.json`.

What this is not: the metrics themselves (metrics.py), `job.json` (job.py), a trial's `result.json`
(trial_result.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from omniagent.batch.evaluation import job as job_files
from omniagent.batch.evaluation import trial_result
from omniagent.batch.results import TaskResult

RESULT = "result.json"


@dataclass(frozen=True, slots=True)
class Identity:
    """The job's id (a UUID, as Harbor's) and when it first started (ISO 8601)."""

    id: str
    started_at: str


def identity(out: Path) -> Identity:
    """The job's identity as `OUT/result.json` has it, else a new one starting now (no file, or one that does
    not say: another tool's, a torn one)."""
    try:
        written = json.loads((out / RESULT).read_text(encoding="utf-8"))
        found = Identity(str(uuid.UUID(written["id"])), written["started_at"])
        datetime.fromisoformat(found.started_at)
        return found
    except (OSError, ValueError, TypeError, KeyError):
        return Identity(str(uuid.uuid4()), trial_result.iso(time.time()))


def record(job: Identity, summary: dict[str, Any], results: Sequence[TaskResult], *, ended: bool) -> dict[str, Any]:
    """The job's result: Harbor's fields over `results` (the planned trials that have a result, each once), then
    `summary` (job.json's: options, counts, metrics). `ended`: the batch is over (else it is starting)."""
    now = trial_result.iso(time.time())
    planned: int = summary["planned"]
    harbor = {
        "id": job.id,
        "started_at": job.started_at,
        "updated_at": now,
        "finished_at": now if ended else None,
        "n_total_trials": planned,
        "stats": stats(results, planned, summary),
    }
    return harbor | {key: value for key, value in summary.items() if key not in harbor}


def stats(results: Sequence[TaskResult], planned: int, summary: dict[str, Any]) -> dict[str, Any]:
    """Harbor's `JobStats`. A trial with a result is `completed` as Harbor counts (whatever its status); an
    interrupted one is not written, so it is pending, never cancelled. Tokens as in `agent_result` (null)."""
    errored = sum(1 for r in results if trial_result.failure(r) is not None)
    costs = [r.usage.cost_usd for r in results if r.usage.cost_usd is not None]
    agents = list(dict.fromkeys(r.agent for r in results))
    return {
        "n_completed_trials": len(results),
        "n_errored_trials": errored,
        "n_running_trials": 0,
        "n_pending_trials": max(planned - len(results), 0),
        "n_cancelled_trials": 0,
        "n_retries": sum(len(r.retried) for r in results),
        "evals": {agent: evals([r for r in results if r.agent == agent], summary["agents"][agent]) for agent in agents},
        "n_input_tokens": None,
        "n_cache_tokens": None,
        "n_output_tokens": None,
        "cost_usd": sum(costs) if costs else None,
    }


def evals(results: Sequence[TaskResult], metrics: dict[str, Any]) -> dict[str, Any]:
    """Harbor's `AgentDatasetStats` of one agent (Harbor keys it by agent, model and dataset; here by agent id):
    `n_trials` the trials with rewards, `n_errors` those that failed, `metrics` the mean reward (`metrics`: the
    agent's in job.json), `pass_at_k` ours (every k from 1), `reward_stats` the trial names by reward name and
    value, `exception_stats` by exception type (each list in name order, whatever order the trials finished in)."""
    rewards: dict[str, dict[str, list[str]]] = {}
    exceptions: dict[str, list[str]] = {}
    for result in results:
        trial = trial_result.name(result.task, result.agent, result.trial)
        for key, value in (result.rewards or {}).items():
            rewards.setdefault(key, {}).setdefault(str(value), []).append(trial)
        found = trial_result.failure(result)
        if found is not None:
            exceptions.setdefault(found[0], []).append(trial)
    return {
        "n_trials": sum(1 for r in results if r.rewards is not None),
        "n_errors": sum(len(names) for names in exceptions.values()),
        "metrics": [{"mean": metrics["mean_reward"]}] if metrics["mean_reward"] is not None else [],
        "pass_at_k": metrics["pass_at_k"] or {},
        "reward_stats": {key: {value: sorted(names) for value, names in by.items()} for key, by in rewards.items()},
        "exception_stats": {kind: sorted(names) for kind, names in exceptions.items()},
    }


def write(out: Path, job: dict[str, Any]) -> None:
    """`OUT/result.json`, replaced whole."""
    job_files.write_whole(out / RESULT, job_files.json_text(job))
