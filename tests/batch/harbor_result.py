"""The checks every `result.json` of the tests must pass: a trial's and the job's, in Harbor's shape.

The shape is `harbor-result.schema.json` (the part of Harbor's `TrialResult` and `JobResult` we write: see
README.md beside it), its date-times ISO 8601 and its ids UUIDs. A trial's `result.json` must also say what its
`results.jsonl` line says: every field of the line as it is (but `agent_info` and `verifier`, which are Harbor's
there and keep the line's fields inside), the rewards as `verifier_result`, an `exception_info` exactly when the
trial failed or its verifier gave no reward, and its phases in order within its start and finish.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from omniagent.batch.results import trial_name

SCHEMA = Path(__file__).with_name("harbor-result.schema.json")
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
MERGED = ("agent_info", "verifier")  # the line's fields that are Harbor's in result.json


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def _validate(name: str, value: Any) -> None:
    errors = _validator(name).iter_errors(value)
    problems = [f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}" for error in errors]
    assert not problems, "\n".join(problems)


def when(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp)
    assert moment.tzinfo is not None, stamp
    return moment


def trial(out: Path, line: dict[str, Any]) -> dict[str, Any]:
    """The trial's `result.json`, checked against its `results.jsonl` line."""
    name = trial_name(line["agent"], line.get("trial", 1))
    path = out / "tasks" / line["task"] / name
    record: dict[str, Any] = json.loads((path / "result.json").read_text(encoding="utf-8"))
    _validate("TrialResult", record)
    assert {k: v for k, v in record.items() if k in line and k not in MERGED} == {
        k: v for k, v in line.items() if k not in MERGED
    }
    assert (record["task_name"], record["trial_name"]) == (line["task"], f"{line['task']}/{name}")
    assert record["trial_uri"] == path.resolve().as_uri()
    about = line.get("agent_info") or {}
    assert record["agent_info"]["name"] == line["agent"]
    assert record["agent_info"]["version"] == (about.get("version") or "unknown")
    assert {k: record["agent_info"][k] for k in ("model", "session_id")} == {
        k: about.get(k) for k in ("model", "session_id")
    }
    rewards = line.get("rewards")
    assert record["verifier_result"] == ({"rewards": rewards} if rewards is not None else None)
    checked = line.get("verifier")
    if checked is None:
        assert record["verifier"] is None
    else:
        assert {k: record["verifier"][k] for k in checked} == checked
    failed = line["status"] != "completed" or (checked is not None and checked["error"] is not None)
    assert (record["exception_info"] is not None) == failed, record["exception_info"]
    _in_order(record)
    return record


def _in_order(record: dict[str, Any]) -> None:
    """started_at ≤ each phase's start ≤ its finish ≤ the next phase's start … ≤ finished_at."""
    moments = [when(record["started_at"])]
    for phase in PHASES:
        timing = record[phase]
        if timing is not None and timing["started_at"] is not None:
            moments += [when(timing["started_at"]), when(timing["finished_at"])]
    moments.append(when(record["finished_at"]))
    assert moments == sorted(moments), [m.isoformat() for m in moments]
    info = record["exception_info"]
    if info is not None:
        assert moments[0] <= when(info["occurred_at"]) <= moments[-1]


def job(out: Path) -> dict[str, Any]:
    """`OUT/result.json`: Harbor's JobResult, with everything job.json holds when the batch has ended."""
    record: dict[str, Any] = json.loads((out / "result.json").read_text(encoding="utf-8"))
    _validate("JobResult", record)
    uuid.UUID(record["id"])
    started = when(record["started_at"])
    assert started <= when(record["updated_at"])
    if record["finished_at"] is not None:
        assert when(record["finished_at"]) == when(record["updated_at"])
        ours = json.loads((out / "job.json").read_text(encoding="utf-8"))
        assert {k: record[k] for k in ours} == ours
    stats = record["stats"]
    assert stats["n_completed_trials"] + stats["n_pending_trials"] == record["n_total_trials"]
    return record
