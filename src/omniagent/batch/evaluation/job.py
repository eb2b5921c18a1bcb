"""`OUT/job.json`: the job's result, written whole at the end of every batch (stopped or not): the options, the
counts of planned and finished trials, and the metrics (`metrics.py`) over the planned trials that have a result,
each counted once. Not `results.jsonl` (one line per trial, the commit point; results.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omniagent.batch.evaluation.metrics import job_metrics
from omniagent.batch.results import TaskResult
from omniagent.files import write_whole as replace_whole

JOB = "job.json"


def options(
    *, agents: Sequence[str], trials: int, retries: int, jobs: int, resume: bool, ray: str | None
) -> dict[str, Any]:
    """The job's options as job.json records them (`ray`: None on this machine, "local", or the cluster's address)."""
    return {"agents": list(agents), "trials": trials, "retries": retries, "jobs": jobs, "resume": resume, "ray": ray}


def summary(
    finished: dict[tuple[str, str, int], TaskResult],
    planned: set[tuple[str, str, int]],
    chosen: dict[str, Any],
    *,
    stopped: bool,
) -> dict[str, Any]:
    """What job.json holds: `chosen` options, the counts, and the metrics over the planned trials in `finished`
    (`ResultsFile.finished()`, keyed by trial: so resumes and retries never count a trial twice)."""
    mine = [result for key, result in finished.items() if key in planned]
    return {
        "options": chosen,
        "planned": len(planned),
        "finished": len(mine),
        "complete": len(mine) == len(planned),
        "stopped": stopped,
    } | job_metrics(mine)


def write(out: Path, job: dict[str, Any]) -> None:
    """`OUT/job.json`, replaced whole."""
    write_whole(out / JOB, json_text(job))


def write_whole(path: Path, text: str) -> None:
    """`text` into `path`, replaced whole (written beside, then renamed), so a reader never sees half of it: the
    job's files (job.json, result.json, report.html)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_whole(path, text, mode=0o644)


def json_text(value: dict[str, Any]) -> str:
    """A job file's JSON as written: indented, UTF-8 as is, one newline at the end."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def read(out: Path) -> dict[str, Any]:
    """`OUT/job.json` as written. Raises `OSError`, `ValueError`."""
    loaded: dict[str, Any] = json.loads((out / JOB).read_text(encoding="utf-8"))
    return loaded
