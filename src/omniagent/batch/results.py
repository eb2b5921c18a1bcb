"""What a batch leaves behind: one `TaskResult` per trial of (task, agent), the per-trial files, `results.jsonl`,
`job.json` (the job's metrics) and `report.html` (`evaluation/`).

    OUT/results.jsonl                        one TaskResult per line, appended as each run finishes
    OUT/tasks/<task>/<agent>/events.jsonl    the session's events (sidecar `Event` JSON), as they arrived
    OUT/tasks/<task>/<agent>/diff.patch      the workspace's final diff
    OUT/tasks/<task>/<agent>/final.txt       the agent's last top-level message
    OUT/tasks/<task>/<agent>/result.json     the TaskResult and Harbor's names for it (evaluation/trial_result.py)
    OUT/tasks/<task>/<agent>/trajectory.json the run as an ATIF trajectory (`trajectory.py`)
    OUT/tasks/<task>/<agent>/verifier/       the verifier's /logs/verifier: reward file, test-stdout.txt (verifier.py)
    OUT/tasks/<task>/<agent>/agent/          the oracle's /logs/agent: oracle.txt, its output (oracle.py)
    OUT/workspaces/<task>/<agent>/           the workspace itself, kept for inspection
    OUT/job.json                             the job's result: metrics per agent and totals (evaluation/job.py)
    OUT/result.json                          the same and Harbor's JobResult fields (evaluation/job_result.py)
    OUT/report.html                          the job's result and its trials as a page (evaluation/report.py)

Trial 1 of a (task, agent) lives in `<task>/<agent>/`, trial i > 1 in `<task>/<agent>@i/` (`@` is in no id, so this
never meets another agent's directory): a trial's directory depends on the trial alone, so `-k` can grow or shrink
between reruns of the same --out without one trial's files landing inside another's.

A line in `results.jsonl` is the commit point: it is written (and fsynced) after the task's files, so a run killed
at any moment leaves every listed task complete, and resuming starts again every task not listed.
"""

from __future__ import annotations

import json
import os
import shutil
from enum import StrEnum
from pathlib import Path
from typing import Any

import msgspec

from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.agents import SessionInfo

RESULTS = "results.jsonl"
TRIAL_MARK = "@"  # between an agent id and its trial number in a directory name; in no id (tasks.id_problem)


class Status(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"  # the turn failed or was refused, the agent died or could not start
    TIMED_OUT = "timed_out"  # the time limit passed; the turn was cancelled
    TURN_LIMIT = "turn_limit"  # more tool calls than `max_turns` (the turn was cancelled), or the agent's own limit
    INTERRUPTED = "interrupted"  # the batch was stopped (Ctrl-C) or the worker was lost; never written


class ErrorKind(StrEnum):
    """Why a run did not complete, where `status` alone does not say (a `failed` run has many causes)."""

    WORKSPACE = "workspace"  # the workspace could not be made (infrastructure)
    AGENT_START = "agent_start"  # the agent could not start (infrastructure)
    AGENT_DIED = "agent_died"  # the agent's session ended before its turn did (infrastructure)
    REFUSED = "refused"  # the task's environment, or `auto` where the agent does not sandbox, was refused
    UNANSWERABLE = "unanswerable"  # the agent asked something a batch cannot answer
    TURN_FAILED = "turn_failed"  # the agent ended its turn failed, refused or cancelled
    SOLUTION_FAILED = "solution_failed"  # the oracle's solve.sh failed
    STUCK = "stuck"  # the agent did not stop within the bound after a cancel
    RAY = "ray"  # the Ray worker was lost twice, or the run failed on it


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens and cost as the agent reported them (its last context usage), where it reports them."""

    context_tokens: int | None = None
    cost_usd: float | None = None


class AgentInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What the agent said of itself in the session, where it said it (for `trajectory.json` and the reader)."""

    name: str | None = None
    version: str | None = None
    model: str | None = None  # the session's model option
    session_id: str | None = None  # the agent's own id of the session (its resume token)

    @classmethod
    def of(cls, info: SessionInfo) -> AgentInfo:
        model = next((o.current for o in info.details.config_options if o.category == "model"), None)
        return cls(
            name=info.agent.name,
            version=info.details.version,
            model=model if isinstance(model, str) else None,
            session_id=info.resume_token,
        )


class Span(msgspec.Struct, frozen=True, kw_only=True):
    """One phase of a run, as Unix times (Harbor's `TimingInfo`)."""

    started_at: float
    finished_at: float


class Timings(msgspec.Struct, frozen=True, kw_only=True):
    """When the run and its phases ran. The phases are Harbor's: null where the phase did not happen (and in
    older lines); each lies within `started_at` .. `finished_at`, in this order."""

    started_at: float  # Unix time the workspace preparation began
    open_seconds: float = 0.0  # preparing the workspace and opening the session
    turn_seconds: float = 0.0  # prompt sent → turn ended
    total_seconds: float = 0.0
    finished_at: float | None = None  # Unix time the run ended (the verifier's end, when it ran)
    environment_setup: Span | None = None  # the workspace made (or refused, or failed)
    agent_setup: Span | None = None  # the agent's session opened (or failed to); none for the oracle
    agent_execution: Span | None = None  # the turn, prompt to its end; the oracle's solve.sh
    verifier: Span | None = None  # the task's verifier


class VerifierInfo(msgspec.Struct, frozen=True, kw_only=True):
    """How the task's verifier ran: its exit code (recorded, never the reward; None when it never ended), its
    seconds, and why no reward could be read (`error`, naming the file or the limit), when none could."""

    exit_code: int | None = None
    seconds: float = 0.0
    error: str | None = None


class TaskResult(msgspec.Struct, frozen=True, kw_only=True):
    """One finished (or interrupted) run of one task by one agent."""

    task: str
    agent: str
    status: Status
    stop: Any = None  # the TurnEnded stop reason as sidecar JSON, when the turn ended
    error: str | None = None
    text: str = ""
    usage: Usage = msgspec.field(default_factory=Usage)
    timings: Timings
    tool_calls: int = 0
    events: int = 0
    changed_files: list[str] = []
    attempt: int = 1  # on Ray: 2 when the first worker was lost mid-run (a restart of the same try)
    trial: int = 1  # which of the `-k` trials of (task, agent) this is, 1..k
    error_kind: ErrorKind | None = None  # why it did not complete, where known (None in older lines)
    retried: list[str] = []  # the infrastructure errors of the earlier tries of this trial that were run again
    where: str = "local"  # "local", or "ray:<node ip>" (the node the run ran on; "ray" when it never said)
    agent_info: AgentInfo | None = None  # None when the session never opened
    diff: str = ""  # in diff.patch, not in the JSON (`to_json`)
    rewards: dict[str, float] | None = None  # the verifier's rewards; None: no verifier, or it gave none
    verifier: VerifierInfo | None = None  # None: the task has no verifier, or it did not run
    notes: list[str] = []  # what the reader must know of how the run ran (e.g. where the agent saw its workspace)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.agent, self.trial)

    @property
    def reward(self) -> float:
        """The run's one reward: `rewards["reward"]` (Harbor's name for it), else the mean of its rewards; 0 when the
        verifier gave none (a missing reward counts as a failed check)."""
        if not self.rewards:
            return 0.0
        if "reward" in self.rewards:
            return self.rewards["reward"]
        return sum(self.rewards.values()) / len(self.rewards)

    def to_json(self, *, indent: int = 0) -> str:
        """The result as JSON, without the diff."""
        fields = msgspec.structs.asdict(self)
        del fields["diff"]
        encoded = msgspec.json.encode(fields)
        return (msgspec.json.format(encoded, indent=indent) if indent else encoded).decode()

    @classmethod
    def from_json(cls, text: str | bytes, *, diff: str = "") -> TaskResult:
        """A result from its JSON (`to_json`), with its diff. Raises `msgspec.DecodeError`."""
        result = msgspec.json.decode(text, type=cls)
        return msgspec.structs.replace(result, diff=diff) if diff else result


def run_dir(out: Path, task: str, agent: str, trial: int = 1) -> Path:
    return out / "tasks" / task / trial_name(agent, trial)


def workspace_dir(out: Path, task: str, agent: str, trial: int = 1) -> Path:
    return out / "workspaces" / task / trial_name(agent, trial)


def trial_name(agent: str, trial: int) -> str:
    """The directory name of an agent's trial: the agent id for trial 1 (as before trials existed), `agent@i` else."""
    return agent if trial == 1 else f"{agent}{TRIAL_MARK}{trial}"


class ResultsFileError(OmniagentError):
    """`results.jsonl` cannot be read or holds a line that is not a result, so what is done cannot be known."""


class ResultsFile:
    """`results.jsonl`: read once to know what is done, then appended to, one durable line per result."""

    def __init__(self, out: Path) -> None:
        self.path = out / RESULTS

    def finished(self) -> dict[tuple[str, str, int], TaskResult]:
        """The results already written, by (task, agent, trial) (a line without `trial` is trial 1). A torn last
        line (a kill mid-write) is cut off."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as error:  # --out is a file, or unreadable
            raise ResultsFileError(f"{self.path}: cannot read it: {error.strerror or error}") from None
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) != len(data):
            with self.path.open("r+b") as file:
                file.truncate(len(whole))
        found: dict[tuple[str, str, int], TaskResult] = {}
        for number, line in enumerate(whole.decode("utf-8", errors="replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                result = TaskResult.from_json(line)
            except msgspec.DecodeError:
                raise ResultsFileError(
                    f"{self.path}:{number}: not a batch result; fix or remove the line (or use another --out)"
                ) from None
            found[result.key] = result
        return found

    def append(self, result: TaskResult) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(result.to_json() + "\n")
            file.flush()
            os.fsync(file.fileno())


class EventLog:
    """A run's `events.jsonl`, written as events arrive (reset when a run starts again)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.iterdir():
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)  # a verifier's or an oracle's logs of an earlier attempt
            else:
                stale.unlink()
        self._file = (directory / "events.jsonl").open("w", encoding="utf-8")

    def write(self, event: dict[str, Any]) -> None:
        self._file.write(json.dumps(event, ensure_ascii=False) + "\n")

    def close(self) -> None:
        self._file.close()


def write_outputs(out: Path, result: TaskResult, record: dict[str, Any]) -> None:
    """The run's files, `record` (the result as `result.json` holds it: `evaluation/trial_result.py`) among them,
    then its `results.jsonl` line (the commit point)."""
    directory = run_dir(out, result.task, result.agent, result.trial)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "diff.patch").write_text(result.diff, encoding="utf-8")
    (directory / "final.txt").write_text(result.text, encoding="utf-8")
    (directory / "result.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    ResultsFile(out).append(result)
