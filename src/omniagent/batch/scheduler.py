"""`run()`: the batch engine under the CLI. Plans the runs (task by agent by trial), skips the ones `results.jsonl`
already holds, hands the rest to a backend (this machine, N at a time, or a Ray cluster), writes each run's files as
its events and result arrive, yields the results as they finish, and writes `job.json` (the job's metrics) and
`result.json` (the same with Harbor's job fields; also when it starts) and `report.html` (the same as a page) at
the end, stopped or not.

    async for result in omniagent.batch.run(load_tasks(path), agents=["omniagent"], jobs=4, out="out"):
        print(result.task, result.agent, result.status)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from omniagent.batch import trajectory
from omniagent.batch.evaluation import job, job_result, report, trial_result
from omniagent.batch.execute import RunSpec, run_one, with_retries
from omniagent.batch.oracle import ORACLE
from omniagent.batch.reporting import Observer, Reporter, interrupted
from omniagent.batch.results import (
    ResultsFile,
    Status,
    TaskResult,
    run_dir,
    workspace_dir,
    write_outputs,
)
from omniagent.batch.tasks import Task, id_problem
from omniagent.errors import OmniagentError
from omniagent.runtime.runtime import Runtime


class BatchError(OmniagentError):
    """The batch cannot start (a task without an agent, a bad id or option) or cannot write its files under `out`;
    the message says what to change."""


@dataclass(frozen=True, slots=True)
class RayOptions:
    """Run on a Ray cluster: `address` None starts a local one on 127.0.0.1 (see `ray_backend.py`)."""

    address: str | None = None


class Backend(Protocol):
    async def run_all(
        self, specs: list[RunSpec], reporter: Reporter, deliver: Callable[[TaskResult], None], stop: asyncio.Event
    ) -> None: ...


def plan(
    tasks: Sequence[Task],
    agents: Sequence[str],
    out: Path,
    *,
    allow_unsandboxed: bool,
    trials: int = 1,
    retries: int = 0,
) -> list[RunSpec]:
    """Every (task, agent, trial) run in file order, trials 1..`trials` of each (task, agent) together: `agents` (the
    CLI's `--agent`) when given, else the task's own; each retried `retries` times on an infrastructure failure.

    Every id is checked here, before anything touches the disk: ids become directory names under `out`.
    Raises: `BatchError` for a task that names no agent when `agents` is empty, a task or agent id that breaks
    the id rule (a `Task` built in Python is not validated as a task file line is), the oracle on a solution whose
    env cannot be made (`Solution.unresolved`), or fewer than 1 trial or 0 retries.
    """
    if trials < 1:
        raise BatchError("the attempts (trials of each task by each agent) must be at least 1")
    if retries < 0:
        raise BatchError("the retries must be 0 or more")
    specs: list[RunSpec] = []
    for task in tasks:
        chosen = list(agents) or task.agents()
        if not chosen:
            raise BatchError(f'task {task.id!r} names no agent; add "agent" to it or pass --agent ID')
        problem = id_problem([("task", task.id), *(("agent", agent) for agent in chosen)])
        if problem is None and ORACLE in chosen and task.solution is not None:
            problem = task.solution.unresolved
        if problem is not None:
            raise BatchError(problem)
        for agent in dict.fromkeys(chosen):
            for trial in range(1, trials + 1):
                where = workspace_dir(out, task.id, agent, trial)
                logs = run_dir(out, task.id, agent, trial)
                specs.append(
                    RunSpec(task, agent, where, logs, allow_unsandboxed=allow_unsandboxed, trial=trial, retries=retries)
                )
    return specs


async def run(
    tasks: Sequence[Task],
    *,
    out: str | Path,
    agents: Sequence[str] = (),
    jobs: int = 4,
    trials: int = 1,
    retries: int = 0,
    resume: bool = True,
    allow_unsandboxed: bool = False,
    ray: RayOptions | None = None,
    observer: Observer | None = None,
    stop: asyncio.Event | None = None,
) -> AsyncIterator[TaskResult]:
    """Run every task with every agent, `trials` times each, `jobs` at a time (locally) or over Ray; yield each
    result as it finishes. Results (and their files under `out`) are written as they arrive; with `resume`, trials
    already in `out/results.jsonl` are skipped. A trial the infrastructure failed (execute.py) runs again, up to
    `retries` more times. Setting `stop` cancels the running turns: their results come back `interrupted` and are
    not written, so the next run starts them again. `out/result.json` (at the start and the end), `job.json` and
    `report.html` (at the end, stopped or not) hold its metrics (evaluation/). Raises: BatchError, RayUnavailable."""
    if jobs < 1:
        raise BatchError("jobs must be at least 1")
    out = _absolute(out)
    specs = plan(tasks, agents, out, allow_unsandboxed=allow_unsandboxed, trials=trials, retries=retries)
    results = ResultsFile(out)
    done = results.finished() if resume else {}
    pending = [spec for spec in specs if spec.key not in done]
    prompts = {spec.task.id: spec.task.prompt for spec in specs}
    planned = [spec.key for spec in specs]
    if observer is not None:
        observer.planned(len(specs), [done[key] for key in planned if key in done])
    where = None if ray is None else (ray.address or "local")
    chosen = job.options(agents=agents, trials=trials, retries=retries, jobs=jobs, resume=resume, ray=where)
    files = _JobFiles.start(out, planned, chosen, done)
    backend = _backend(ray, jobs)
    stop = stop or asyncio.Event()
    arrived: asyncio.Queue[TaskResult] = asyncio.Queue()
    reporter = Reporter(observer)
    worker = asyncio.create_task(backend.run_all(pending, reporter, arrived.put_nowait, stop))
    try:
        for _ in pending:
            getter = asyncio.ensure_future(arrived.get())
            await asyncio.wait({getter, worker}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                raise _failure(worker.exception() or BatchError("the batch's backend ended early"), out)
            result = getter.result()
            if result.status is not Status.INTERRUPTED:
                _commit(out, prompts[result.task], result)
            if observer is not None:
                observer.finished(result)
            yield result
        await worker
    finally:
        if not worker.done():
            stop.set()
            with suppress(asyncio.CancelledError):
                await worker
        with suppress(OSError, ValueError, OmniagentError):  # the batch's own failure, if any, is the news
            files.write(results.finished(), stopped=stop.is_set(), ended=True)


@dataclass(frozen=True, slots=True)
class _JobFiles:
    """The job's result files over its planned trials: `result.json` (`job_result.py`), `job.json` (`job.py`) and
    `report.html` (`report.py`)."""

    out: Path
    planned: list[tuple[str, str, int]]  # in plan order, the report's
    chosen: dict[str, Any]  # the options, as job.json records them
    identity: job_result.Identity

    @classmethod
    def start(
        cls, out: Path, planned: list[tuple[str, str, int]], chosen: dict[str, Any], done: dict[Any, TaskResult]
    ) -> _JobFiles:
        """The job's files, its `result.json` written as it starts (the job's id and start kept across resumes).
        Raises: `BatchError` when it cannot be written."""
        files = cls(out, planned, chosen, job_result.identity(out))
        try:
            files.write(done, stopped=False, ended=False)
        except OSError as error:
            raise _failure(error, out) from error
        return files

    def write(self, finished: dict[tuple[str, str, int], TaskResult], *, stopped: bool, ended: bool) -> None:
        """The job's result over the planned trials in `finished`: `result.json`, and once `ended`, `job.json` and
        `report.html`. Raises: `OSError`, and for the report `ValueError`, `ResultsFileError`."""
        planned = set(self.planned)
        summary = job.summary(finished, planned, self.chosen, stopped=stopped)
        if ended:
            job.write(self.out, summary)
        mine = [result for key, result in finished.items() if key in planned]
        job_result.write(self.out, job_result.record(self.identity, summary, mine, ended=ended))
        if ended:
            report.write(self.out, self.planned)


def _commit(out: Path, prompt: str, result: TaskResult) -> None:
    """A finished trial's files: its trajectory, then its other files and its results line (the commit point)."""
    try:
        trajectory.write(out, prompt, result)
        write_outputs(out, result, trial_result.record(out, result))
    except OSError as error:
        raise _failure(error, out) from error


def _failure(error: BaseException, out: Path) -> BaseException:
    """What to raise when the batch cannot go on: a file it could not write under `out` (a bad --out, a full disk),
    wherever it happened (a backend's task group wraps it in an ExceptionGroup), as one BatchError sentence naming
    the file; anything else as it is."""
    unwritable = next((leaf for leaf in _leaves(error) if isinstance(leaf, OSError)), None)
    if unwritable is None:
        return error
    reason = unwritable.strerror or str(unwritable)
    where = f": {unwritable.filename}" if unwritable.filename else ""
    return BatchError(f"cannot write the batch's files under {out}: {reason}{where}")


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(path))


def _backend(ray: RayOptions | None, jobs: int) -> Backend:
    if ray is None:
        return LocalBackend(jobs)
    from omniagent.batch.ray_backend import RayBackend

    return RayBackend(ray.address, jobs)


class LocalBackend:
    """This machine: one Runtime, `jobs` runs at a time."""

    def __init__(self, jobs: int) -> None:
        self._jobs = jobs

    async def run_all(
        self, specs: list[RunSpec], reporter: Reporter, deliver: Callable[[TaskResult], None], stop: asyncio.Event
    ) -> None:
        slots = asyncio.Semaphore(self._jobs)
        async with Runtime() as runtime, asyncio.TaskGroup() as group:
            for spec in specs:
                group.create_task(self._trial(runtime, spec, slots, reporter, deliver, stop))

    @staticmethod
    async def _trial(
        runtime: Runtime,
        spec: RunSpec,
        slots: asyncio.Semaphore,
        reporter: Reporter,
        deliver: Callable[[TaskResult], None],
        stop: asyncio.Event,
    ) -> None:
        async def once(_number: int) -> TaskResult:
            on_event = reporter.started(spec)  # a retry's events.jsonl starts afresh, as its workspace does
            try:
                return await run_one(runtime, spec, on_event, stop)
            finally:
                reporter.ended(spec)

        async with slots:  # the retries hold the trial's slot: the job never runs more than `jobs` at once
            if stop.is_set():
                deliver(interrupted(spec))
                return
            deliver(await with_retries(once, spec.retries, stop))
