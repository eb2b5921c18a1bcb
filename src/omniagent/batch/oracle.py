"""The `oracle` agent: batch's built-in pseudo-agent (not a runtime agent) that runs the task's reference solution
(`solution/solve.sh` of a Harbor task) in the task's environment, as Harbor's oracle agent does: the solution's
directory at `/solution`, its output in `/logs/agent/oracle.txt` (`OUT/tasks/T/oracle/agent/`), `[solution] env`,
the `[agent] timeout_sec`. Run over a task set it checks the set itself: every task whose solution is right should
score its full reward before agents are measured.

What this is not: the verifier (verifier.py), which runs after it as after any agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omniagent.batch.environment import run_in_environment
from omniagent.batch.results import Status
from omniagent.batch.tasks import Task

ORACLE = "oracle"
SOLUTION = "/solution"
LOGS = "/logs/agent"
LOG_FILE = "oracle.txt"
# Harbor's oracle runs without a time limit when the task sets none; ours has one, so a solution that hangs ends.
DEFAULT_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class Solved:
    """How the solution ran: the run's status, why it failed (None when it did not), and its seconds."""

    status: Status
    error: str | None
    seconds: float


async def solve(task: Task, workspace: Path, logs: Path) -> Solved:
    """Run the task's solution on `workspace` (its log under `logs`)."""
    solution = task.solution
    if solution is None:
        error = "the task has no solution (solution/solve.sh) for the oracle agent to run"
        return Solved(Status.FAILED, error, 0.0)
    seconds = task.time_limit or DEFAULT_SECONDS
    ran = await run_in_environment(
        solution.command,
        workspace=workspace,
        environment=task.environment,
        binds={SOLUTION: Path(solution.directory)} if solution.directory is not None else {},
        writable={LOGS: logs},
        env=solution.env,
        seconds=seconds,
        log=f"{LOGS}/{LOG_FILE}",
    )
    if ran.timed_out:
        return Solved(Status.TIMED_OUT, f"the solution did not finish within {seconds:g} s", ran.seconds)
    if ran.exit_code == 0 and ran.problem is None:
        return Solved(Status.COMPLETED, None, ran.seconds)
    why = ran.problem or f"exit code {ran.exit_code}; its output is in {LOGS}/{LOG_FILE}"
    return Solved(Status.FAILED, f"the solution failed: {why.strip('[]')}", ran.seconds)
