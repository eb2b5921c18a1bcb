"""Many tasks, many agents, many machines: `omniagent batch` and its Python API (docs/batch.md).

from omniagent.batch import load_tasks, run

async for result in run(load_tasks(Path("tasks.jsonl")), agents=["omniagent"], jobs=4, out="out"):
    print(result.task, result.status, result.text)
"""

from omniagent.batch.results import Status, TaskResult
from omniagent.batch.scheduler import BatchError, RayOptions, run
from omniagent.batch.tasks import Task, TaskFileError, load_tasks, parse_task

__all__ = [
    "BatchError",
    "RayOptions",
    "Status",
    "Task",
    "TaskFileError",
    "TaskResult",
    "load_tasks",
    "parse_task",
    "run",
]
