"""The check every `trajectory.json` of the tests must pass: ATIF-v1.7 as Harbor publishes it.

Two halves, as the published definition has them: the shape (`atif-v1.7.schema.json`, derived from Harbor's models:
see README.md beside it) and the rules its models state in code, written here from that definition:

- `schema_version` is "ATIF-v1.7" (what we write; the schema itself admits every version up to 1.7);
- step ids run 1, 2, 3… in each trajectory, embedded ones included;
- `timestamp`s are ISO 8601;
- `model_name`, `reasoning_effort`, `reasoning_content`, `tool_calls` and `metrics` appear on `agent` steps only;
- an `agent` step with `llm_call_count` 0 has no `metrics` and no `reasoning_content`;
- an observation result's `source_call_id` names a tool call of its own step;
- a content part of type `text` has `text` and no `source`, one of type `image` a `source` and no `text`;
- every embedded subagent has a `trajectory_id`, unique among its siblings, and is itself a valid trajectory;
- a subagent reference sets `trajectory_id` or `trajectory_path`;

and two that the RFC states and Harbor's models leave to the reader, checked here because we promise them: a
reference by `trajectory_id` names an embedded subagent of the same trajectory, and `total_steps`, when it differs
from the number of steps, is explained in `notes`.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from tests.batch import harbor_validator

SCHEMA = Path(__file__).with_name("atif-v1.7.schema.json")
VERSION = "ATIF-v1.7"
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class InvalidTrajectory(AssertionError):
    """A trajectory that breaks ATIF-v1.7; the message says where and which rule."""


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def validate(trajectory: Any) -> None:
    """Raise `InvalidTrajectory` (every problem found, one per line) unless `trajectory` is valid ATIF-v1.7, by
    this module's check and by Harbor's own validator (`harbor_validator.py`)."""
    problems = [
        f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in _validator().iter_errors(trajectory)
    ]
    if not problems:
        if trajectory.get("schema_version") != VERSION:
            problems.append(f"schema_version: {trajectory.get('schema_version')!r}, not {VERSION!r}")
        problems += _rules(trajectory, "")
    problems += [f"Harbor's validator: {error}" for error in harbor_validator.errors(trajectory)]
    if problems:
        raise InvalidTrajectory("\n".join(problems))


def load(path: Path) -> dict[str, Any]:
    """A `trajectory.json`, validated."""
    trajectory: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    try:
        validate(trajectory)
    except InvalidTrajectory as error:
        raise InvalidTrajectory(f"{path}:\n{error}") from None
    return trajectory


def _rules(trajectory: dict[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    embedded = trajectory.get("subagent_trajectories") or []
    ids = [sub.get("trajectory_id") for sub in embedded]
    for index, step in enumerate(trajectory["steps"]):
        problems += _step(step, index, f"{where}steps/{index}", set(ids))
    for index, sub in enumerate(embedded):
        here = f"{where}subagent_trajectories/{index}"
        if sub.get("trajectory_id") is None:
            problems.append(f"{here}: an embedded subagent needs a trajectory_id")
        elif ids.count(sub["trajectory_id"]) > 1:
            problems.append(f"{here}: trajectory_id {sub['trajectory_id']!r} is not unique among its siblings")
        problems += _rules(sub, here + "/")
    final = trajectory.get("final_metrics") or {}
    total = final.get("total_steps")
    if total is not None and total != len(trajectory["steps"]) and not trajectory.get("notes"):
        problems.append(f"{where}final_metrics/total_steps: {total} for {len(trajectory['steps'])} steps, no notes")
    return problems


def _step(step: dict[str, Any], index: int, where: str, embedded: set[str | None]) -> list[str]:
    problems: list[str] = []
    if step["step_id"] != index + 1:
        problems.append(f"{where}/step_id: {step['step_id']}, expected {index + 1}")
    stamp = step.get("timestamp")
    if stamp is not None:
        try:
            datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{where}/timestamp: {stamp!r} is not ISO 8601")
    if step["source"] != "agent":
        problems += [f"{where}/{name}: only agent steps have it" for name in AGENT_ONLY if step.get(name) is not None]
    elif step.get("llm_call_count") == 0:
        problems += [
            f"{where}/{name}: a step with llm_call_count 0 has none"
            for name in ("metrics", "reasoning_content")
            if step.get(name) is not None
        ]
    calls = {call["tool_call_id"] for call in step.get("tool_calls") or []}
    results = (step.get("observation") or {}).get("results", [])
    for number, result in enumerate(results):
        here = f"{where}/observation/results/{number}"
        source = result.get("source_call_id")
        if source is not None and source not in calls:
            problems.append(f"{here}/source_call_id: {source!r} is no tool call of this step")
        problems += _content(result.get("content"), f"{here}/content")
        for ref in result.get("subagent_trajectory_ref") or []:
            if ref.get("trajectory_id") is None and ref.get("trajectory_path") is None:
                problems.append(f"{here}: a subagent reference needs a trajectory_id or a trajectory_path")
            elif ref.get("trajectory_path") is None and ref["trajectory_id"] not in embedded:
                problems.append(f"{here}: subagent {ref['trajectory_id']!r} is not embedded")
    return problems + _content(step["message"], f"{where}/message")


def _content(content: Any, where: str) -> list[str]:
    if not isinstance(content, list):
        return []
    problems: list[str] = []
    for index, part in enumerate(content):
        has_text, has_source = part.get("text") is not None, part.get("source") is not None
        if part["type"] == "text" and (not has_text or has_source):
            problems.append(f"{where}/{index}: a text part has text and no source")
        if part["type"] == "image" and (has_text or not has_source):
            problems.append(f"{where}/{index}: an image part has a source and no text")
    return problems
