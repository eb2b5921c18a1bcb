"""The batch task file: one JSON object per line, validated into `Task`s (schema: `task.schema.json`, docs/batch.md).

A task says what to ask (`prompt`), whom (`agent`, or a list to compare), where (`workspace`: a directory copied, a
git repository checked out at a commit, or an empty directory), with which session options, within which limits,
and how its permission requests are answered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omniagent.errors import OmniagentError

TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"  # safe as a directory name on every system
SCHEMA_FILE = Path(__file__).with_name("task.schema.json")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CopyWorkspace(_Model):
    """A local directory, copied whole into the task's own workspace."""

    copy_from: str = Field(alias="copy", description="the directory to copy (relative: to the task file)")


class GitWorkspace(_Model):
    """A git repository, checked out at `commit` into a worktree of the task's own (detached HEAD)."""

    git: str = Field(description="a local repository (relative: to the task file)")
    commit: str = Field(default="HEAD", description="a commit, tag or branch")


class AllowTools(_Model):
    """Allow the tools named here (a tool's name or kind, e.g. `write`, `edit`, `execute`), deny the rest."""

    allow: list[str] = Field(min_length=1)


Permissions = Literal["deny", "auto"] | AllowTools
Workspace = CopyWorkspace | GitWorkspace


class Resources(_Model):
    """What one task needs from a Ray worker (ignored when running locally)."""

    num_cpus: float = Field(default=1.0, ge=0)
    num_gpus: float = Field(default=0.0, ge=0)
    memory: int | None = Field(default=None, ge=0, description="bytes")
    custom: dict[str, float] = Field(default_factory=dict, description="custom Ray resources")


class Task(_Model):
    """One line of the task file."""

    id: Annotated[str, Field(pattern=TASK_ID, description="unique in the file; names its output directory")]
    prompt: Annotated[str, Field(min_length=1)]
    agent: str | list[str] | None = Field(default=None, description="an agent id, or several to compare")
    workspace: Workspace | None = Field(default=None, description="absent: an empty directory")
    model: str | None = None
    mode: str | None = None
    config: dict[str, str | bool] = Field(default_factory=dict, description="more session config options")
    time_limit: float | None = Field(default=None, gt=0, description="seconds before the turn is cancelled")
    max_turns: int | None = Field(default=None, ge=1, description="the most tool calls the agent may make")
    permissions: Permissions = "deny"
    resources: Resources = Field(default_factory=Resources)

    def agents(self) -> list[str]:
        """The agents this task names (none: the batch's `--agent` list decides)."""
        if self.agent is None:
            return []
        return [self.agent] if isinstance(self.agent, str) else list(self.agent)

    def configure(self) -> dict[str, str | bool]:
        """The session options to open with: `config`, plus `model` and `mode` when given."""
        options: dict[str, str | bool] = dict(self.config)
        if self.model is not None:
            options["model"] = self.model
        if self.mode is not None:
            options["mode"] = self.mode
        return options


class TaskFileError(OmniagentError):
    """The task file cannot be used; the message names the file, the line and what is wrong."""


def load_tasks(path: Path) -> list[Task]:
    """The tasks of a JSONL file (blank lines and `#` comments skipped), workspace paths made absolute.

    Raises: `TaskFileError`.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read the task file: {error.strerror or error}") from None
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        task = parse_task(line, where=f"{path}:{number}")
        if task.id in seen:
            raise TaskFileError(f"{path}:{number}: task id {task.id!r} is used twice")
        seen.add(task.id)
        tasks.append(absolute_paths(task, path.parent))
    if not tasks:
        raise TaskFileError(f"{path}: the task file holds no task")
    return tasks


def parse_task(line: str, *, where: str = "task") -> Task:
    """One task from one JSON line. Raises: `TaskFileError` naming the first problem."""
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as error:
        raise TaskFileError(f"{where}: not JSON: {error.msg} (column {error.colno})") from None
    try:
        return Task.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "the line"
        raise TaskFileError(f"{where}: {field}: {first['msg']}") from None


def absolute_paths(task: Task, base: Path) -> Task:
    """The task with its workspace source resolved against `base` (the task file's directory)."""
    source = task.workspace
    if isinstance(source, CopyWorkspace):
        resolved: Workspace = CopyWorkspace.model_validate({"copy": str((base / source.copy_from).resolve())})
    elif isinstance(source, GitWorkspace):
        resolved = GitWorkspace(git=str((base / source.git).resolve()), commit=source.commit)
    else:
        return task
    return task.model_copy(update={"workspace": resolved})


def task_schema() -> dict[str, Any]:
    """The JSON Schema of one task line (what `task.schema.json` holds)."""
    schema = Task.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "omniagent batch task"
    return schema


if __name__ == "__main__":  # regenerate the schema file: python -m omniagent.batch.tasks
    SCHEMA_FILE.write_text(json.dumps(task_schema(), indent=2) + "\n", encoding="utf-8")
