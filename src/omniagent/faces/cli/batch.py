"""`omniagent batch TASKS`: load the task file (JSONL) or Harbor task folders, run them (live view on a terminal),
print the summary table, or with `--json` the job's result (`job.json`).

Exit codes (docs/batch.md): 0 every run completed; 1 some run failed or timed out; 2 usage (a bad task file or
option); 3 `--ray` without Ray installed; 130 stopped with Ctrl-C (what finished is kept; run again to resume).
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from omniagent.batch.evaluation import job
from omniagent.batch.harbor import load_folder
from omniagent.batch.progress import ProgressView, print_summary
from omniagent.batch.results import ResultsFile, ResultsFileError, Status
from omniagent.batch.scheduler import BatchError, RayOptions, plan, run
from omniagent.batch.tasks import Task, TaskFileError, load_tasks
from omniagent.errors import OmniagentError
from omniagent.faces.pipes import stdout_console

EXIT_ALL_COMPLETED = 0
EXIT_SOME_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_RAY = 3
EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class BatchOptions:
    """What `omniagent batch` was asked to do (its arguments, by name)."""

    tasks: Path
    out: Path
    agents: Sequence[str] = ()
    jobs: int = 4
    ray: str | None = None  # None: run on this machine; "": on a local Ray cluster; else the cluster to join
    allow_unsandboxed: bool = False
    host_image: bool = False  # run Harbor tasks whose image cannot be built on this machine's system
    attempts: int = 1  # trials of every (task, agent)
    retries: int = 0  # tries more of a trial the infrastructure failed
    as_json: bool = False  # print job.json on stdout instead of the table


def run_batch(**arguments: Any) -> int:
    """Entry point of `omniagent batch`, given its parsed arguments (`BatchOptions`' fields); returns the exit code."""
    options = BatchOptions(**arguments)
    notes = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        tasks = (
            load_folder(options.tasks, host_image=options.host_image)
            if options.tasks.is_dir()
            else load_tasks(options.tasks)
        )
        if options.jobs < 1:
            raise BatchError("-j must be at least 1")
        if options.attempts < 1:
            raise BatchError("-k/--attempts must be at least 1")
        if options.retries < 0:
            raise BatchError("--retries must be 0 or more")
        plan(
            tasks,
            options.agents,
            options.out,
            allow_unsandboxed=options.allow_unsandboxed,
            trials=options.attempts,
            retries=options.retries,
        )
        ResultsFile(options.out).finished()  # a results file that cannot be read stops the batch before it starts
    except (TaskFileError, BatchError, ResultsFileError) as error:
        _error(str(error))
        return EXIT_USAGE
    if options.ray is not None:
        from omniagent.batch.ray_backend import RayUnavailable, require_ray

        try:
            require_ray()
        except RayUnavailable as error:
            _error(str(error))
            return EXIT_NO_RAY
    logging.basicConfig(level=logging.ERROR, format="omniagent: %(message)s", stream=sys.stderr)
    try:
        stopped = asyncio.run(_run(options, tasks, notes))
    except OmniagentError as error:  # e.g. the Ray cluster cannot be joined: nothing ran
        _error(str(error))
        return EXIT_NO_RAY if type(error).__name__ == "RayUnavailable" else EXIT_USAGE
    results = [r for r in ResultsFile(options.out).finished().values()]
    if options.as_json:
        try:
            written = job.read(options.out)
        except (OSError, ValueError) as error:  # the batch could not write it (a full disk): say so, no traceback
            _error(f"cannot read {options.out / job.JOB}: {getattr(error, 'strerror', None) or error}")
            return EXIT_USAGE
        sys.stdout.write(json.dumps(written, indent=2, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    elif results:
        print_summary(stdout_console(highlight=False), results)
    if stopped:
        notes.print("stopped: finished runs are kept; run the same command again to resume", style="yellow")
        return EXIT_INTERRUPTED
    return EXIT_ALL_COMPLETED if all(r.status is Status.COMPLETED for r in results) else EXIT_SOME_FAILED


async def _run(options: BatchOptions, tasks: list[Task], notes: Console) -> bool:
    """Run the batch under the live view; True when Ctrl-C stopped it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        with ProgressView(notes) as view:
            ray = RayOptions(options.ray or None) if options.ray is not None else None
            async for _ in run(
                tasks,
                out=options.out,
                agents=options.agents,
                jobs=options.jobs,
                trials=options.attempts,
                retries=options.retries,
                allow_unsandboxed=options.allow_unsandboxed,
                ray=ray,
                observer=view,
                stop=stop,
            ):
                pass
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    return stop.is_set()


def _error(message: str) -> None:
    print(f"omniagent batch: error: {message}", file=sys.stderr)
