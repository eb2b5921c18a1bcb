"""The verifier: after the agent's turn, the task's verifier command runs in the task's environment (environment.py)
with its tests at `/tests` and a fresh `OUT/tasks/T/A/verifier/` at `/logs/verifier`, and its reward is read the way
Harbor reads it:

- `reward.json` (a flat object of numbers) wins over `reward.txt` (one number, as `{"reward": x}`);
- a missing, empty or unparsable reward file is a verifier error that names the file; so is a verifier that timed
  out or hit a limit before writing one;
- the command's exit code is recorded, never the reward.

What this is not: running the command (environment.py), scoring the batch (reporting and the summary).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

from omniagent.batch.environment import run_in_environment
from omniagent.batch.results import VerifierInfo
from omniagent.batch.tasks import Task

LOGS = "/logs/verifier"
TESTS = "/tests"
STDOUT = "test-stdout.txt"


async def verify(task: Task, workspace: Path, logs: Path) -> tuple[dict[str, float] | None, VerifierInfo]:
    """Run `task.verifier` on `workspace`, its logs under `logs`; the rewards (None when none could
    be read) and how it ran. The task must have a verifier."""
    verifier = task.verifier
    assert verifier is not None
    binds = {TESTS: Path(verifier.tests)} if verifier.tests is not None else {}
    ran = await run_in_environment(
        verifier.command,
        workspace=workspace,
        environment=task.environment,
        binds=binds,
        writable={LOGS: logs},
        env=verifier.env,
        seconds=verifier.timeout_sec,
        log=f"{LOGS}/{STDOUT}",  # beside the reward, as Harbor's verifier writes it
    )
    if ran.timed_out:
        late = f"the verifier timed out after {verifier.timeout_sec:g} s ([verifier] timeout_sec)"
        return None, VerifierInfo(exit_code=None, seconds=ran.seconds, error=late)
    rewards, error = read_rewards(logs)
    if error is not None and ran.problem is not None:
        error = f"{error}; the verifier {ran.problem.strip('[]')}"
    return rewards, VerifierInfo(exit_code=ran.exit_code, seconds=ran.seconds, error=error)


def read_rewards(logs: Path) -> tuple[dict[str, float] | None, str | None]:
    """The rewards the verifier left in `logs` (reward.json, else reward.txt), or None and why not."""
    json_file, text_file = logs / "reward.json", logs / "reward.txt"
    if json_file.exists():
        return _parse(json_file, _from_json)
    if text_file.exists():
        return _parse(text_file, _from_text)
    return None, f"no reward file: the verifier wrote neither {LOGS}/reward.json nor {LOGS}/reward.txt"


def _parse(path: Path, parse: Callable[[str], dict[str, float] | None]) -> tuple[dict[str, float] | None, str | None]:
    name = f"{LOGS}/{path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return None, f"the reward file {name} cannot be read: {error}"
    if not text.strip():
        return None, f"the reward file {name} is empty"
    rewards = parse(text)
    if rewards is None:
        return None, f"the reward file {name} cannot be parsed: {_EXPECTED[path.name]}"
    return rewards, None


_EXPECTED = {"reward.json": "it must be a flat JSON object of numbers", "reward.txt": "it must hold one number"}


def _from_json(text: str) -> dict[str, float] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not value:
        return None
    if not all(_number(item) for item in value.values()):
        return None
    return {str(key): float(item) for key, item in value.items()}


def _from_text(text: str) -> dict[str, float] | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return {"reward": value} if math.isfinite(value) else None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
