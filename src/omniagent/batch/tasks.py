"""The batch task file: one JSON object per line, validated into `Task`s (schema: `task.schema.json`, docs/batch.md).

A task says what to ask (`prompt`), whom (`agent`, or a list to compare), where (`workspace`: a directory copied, a
git repository checked out at a commit, or an empty directory), with which session options, within which limits,
and how its permission requests are answered; optionally how it is checked (`verifier`: a command run after the
agent's turn in the task's environment, whose reward file is the score), a reference `solution` (what the `oracle`
agent runs), and the `environment` both run in (workdir, network, CPUs, memory). Harbor task folders become the same
`Task`s (harbor.py).
"""

from __future__ import annotations

import abc
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta

from omniagent.errors import OmniagentError
from omniagent.protocols.sidecar.base import describe

# Task and agent ids both name directories (OUT/tasks/TASK/AGENT, OUT/workspaces/TASK/AGENT), so both follow this
# rule: safe as a directory name on every system, never `..` or a path. `(?!\n)` because `$` alone also matches
# before a final newline.
TASK_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?!\n)$"
ID_RULE = "1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit"
SCHEMA_FILE = Path(__file__).with_name("task.schema.json")
_ID = re.compile(TASK_ID)
AgentId = Annotated[str, Meta(pattern=TASK_ID, description="an agent id, as `omniagent agents` lists it")]


class _Model(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Task file objects: unknown fields are errors (a typo must not be ignored)."""


class CopyWorkspace(_Model, frozen=True):
    """A local directory, copied whole into the task's own workspace."""

    copy_from: Annotated[str, Meta(description="the directory to copy (relative: to the task file)")] = msgspec.field(
        name="copy"
    )


class GitWorkspace(_Model, frozen=True):
    """A git repository, cloned and checked out at `commit` (detached HEAD) in the task's own workspace."""

    git: Annotated[str, Meta(description="a local repository (relative: to the task file)")]
    commit: Annotated[str, Meta(description="a commit, tag or branch")] = "HEAD"


class AllowTools(_Model, frozen=True):
    """Allow the tools named here (a tool's name or kind, e.g. `write`, `edit`, `execute`), deny the rest."""

    allow: Annotated[list[str], Meta(min_length=1)]


class _Workspace(abc.ABC):  # noqa: B024 (a union's runtime type: nothing to implement)
    """The workspace union as msgspec sees it: it decodes no union of two untagged structs, so its decode hook
    picks the arm by key (`git`, else `copy`)."""


_Workspace.register(CopyWorkspace)
_Workspace.register(GitWorkspace)
Permissions = Literal["deny", "auto"] | AllowTools
if TYPE_CHECKING:
    Workspace = CopyWorkspace | GitWorkspace
else:
    Workspace = _Workspace


class Resources(_Model, frozen=True):
    """What one task needs from a Ray worker (ignored when running locally)."""

    num_cpus: Annotated[float, Meta(ge=0)] = 1.0
    num_gpus: Annotated[float, Meta(ge=0)] = 0.0
    memory: Annotated[int, Meta(ge=0, description="bytes")] | None = None
    custom: Annotated[dict[str, float], Meta(description="custom Ray resources")] = {}


Env = Annotated[dict[str, str], Meta(description="environment variables, literal values")]


class Verifier(_Model, frozen=True):
    """How a run is scored: `command` runs in the task's environment after the agent's turn and writes its reward
    to /logs/verifier/reward.json (a flat object of numbers) or reward.txt (one number) (verifier.py)."""

    command: Annotated[str, Meta(min_length=1, description="a shell command; e.g. `bash /tests/test.sh`")]
    tests: (
        Annotated[str, Meta(description="a directory shown read-only at /tests (relative: to the task file)")] | None
    ) = None
    timeout_sec: Annotated[float, Meta(gt=0)] = 600.0
    env: Env = {}


class Solution(_Model, frozen=True):
    """A reference solution: `command` runs in the task's environment when the agent is `oracle`. `unresolved`: why
    its env cannot be made; the batch then refuses to start the oracle on it (Harbor asks for the solution's host
    variables only when the oracle runs)."""

    command: Annotated[str, Meta(min_length=1, description="a shell command; e.g. `bash /solution/solve.sh`")]
    directory: Annotated[str, Meta(description="shown read-only at /solution (relative: to the task file)")] | None = (
        None
    )
    env: Env = {}
    unresolved: (
        Annotated[str, Meta(description="why its env cannot be made (a Harbor task's unset host variable)")] | None
    ) = None


class SeedFile(_Model, frozen=True):
    """A file or directory copied into the workspace after its source (a Dockerfile's `COPY` into the workdir)."""

    source: Annotated[str, Meta(description="relative: to the task file")]
    target: Annotated[str, Meta(description="relative to the workspace; '.' is the workspace itself")] = "."


NetworkMode = Literal["public", "no-network"]


class Environment(_Model, frozen=True):
    """Where the verifier and the solution run (Harbor's `[environment]`). `refused`: why this task cannot run
    here (an image that cannot be built); the run fails with that sentence and nothing runs."""

    workdir: Annotated[str, Meta(pattern="^/", description="where the workspace appears, e.g. /app")] | None = None
    cpus: Annotated[int, Meta(ge=1)] | None = None
    memory_mb: Annotated[int, Meta(ge=16)] | None = None
    network_mode: NetworkMode = "public"
    env: Env = {}
    seed: list[SeedFile] = []
    refused: str | None = None
    skipped: Annotated[list[str], Meta(description="image instructions not run (the user's --host-image)")] = []


class Task(_Model, frozen=True):
    """One line of the task file."""

    id: Annotated[str, Meta(pattern=TASK_ID, description="unique in the file; names its output directory")]
    prompt: Annotated[str, Meta(min_length=1)]
    agent: Annotated[AgentId | list[AgentId], Meta(description="an agent id, or several to compare")] | None = None
    workspace: Annotated[Workspace, Meta(description="absent: an empty directory")] | None = None
    model: str | None = None
    mode: str | None = None
    config: Annotated[dict[str, str | bool], Meta(description="more session config options")] = {}
    time_limit: Annotated[float, Meta(gt=0, description="seconds before the turn is cancelled")] | None = None
    max_turns: Annotated[int, Meta(ge=1, description="the most tool calls the agent may make")] | None = None
    permissions: Permissions = "deny"
    resources: Resources = msgspec.field(default_factory=Resources)
    verifier: Verifier | None = None
    solution: Solution | None = None
    environment: Environment = msgspec.field(default_factory=Environment)

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


def _decode_hook(type_: type, value: Any) -> Any:
    if type_ is _Workspace:
        arm = GitWorkspace if isinstance(value, dict) and "git" in value else CopyWorkspace
        try:
            return msgspec.convert(value, arm)
        except msgspec.ValidationError as error:
            raise ValueError(str(error)) from None  # msgspec then adds where: `$.workspace`
    raise NotImplementedError


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
    bad = _bad_id(value)
    if bad is not None:
        raise TaskFileError(f"{where}: {bad}")
    try:
        return msgspec.convert(value, Task, dec_hook=_decode_hook)
    except msgspec.ValidationError as error:
        raise TaskFileError(f"{where}: {describe(error, top='the line')}") from None


def id_problem(named: Iterable[tuple[str, object]]) -> str | None:
    """Why the first of `named` (`("task" or "agent", id)` pairs) that breaks the id rule cannot be an id, or None
    when none does. Values that are not strings are left to the type check."""
    for kind, value in named:
        if isinstance(value, str) and not _ID.match(value):
            return f"{kind} id {value!r} is not valid: an id is {ID_RULE}"
    return None


def _bad_id(value: Any) -> str | None:
    """The first id of a task line that breaks the id rule, said in words (msgspec would quote the regex)."""
    if not isinstance(value, dict):
        return None
    agent = value.get("agent")
    agents = agent if isinstance(agent, list) else [agent]
    return id_problem([("task", value.get("id")), *(("agent", item) for item in agents)])


def absolute_paths(task: Task, base: Path) -> Task:
    """The task with its paths (workspace source, tests, solution, seed files) resolved against `base` (the task
    file's directory)."""

    def resolve(path: str) -> str:
        return str((base / path).resolve())

    source = task.workspace
    resolved: Workspace | None = source
    if isinstance(source, CopyWorkspace):
        resolved = CopyWorkspace(copy_from=resolve(source.copy_from))
    elif isinstance(source, GitWorkspace):
        resolved = GitWorkspace(git=resolve(source.git), commit=source.commit)
    verifier, solution, environment = task.verifier, task.solution, task.environment
    if verifier is not None and verifier.tests is not None:
        verifier = msgspec.structs.replace(verifier, tests=resolve(verifier.tests))
    if solution is not None and solution.directory is not None:
        solution = msgspec.structs.replace(solution, directory=resolve(solution.directory))
    if environment.seed:
        seed = [msgspec.structs.replace(item, source=resolve(item.source)) for item in environment.seed]
        environment = msgspec.structs.replace(environment, seed=seed)
    return msgspec.structs.replace(
        task, workspace=resolved, verifier=verifier, solution=solution, environment=environment
    )


def task_schema() -> dict[str, Any]:
    """The JSON Schema of one task line (what `task.schema.json` holds)."""

    def workspace_schema(type_: type) -> dict[str, Any]:
        if type_ is _Workspace:
            return {"anyOf": [{"$ref": f"#/$defs/{arm.__name__}"} for arm in (CopyWorkspace, GitWorkspace)]}
        raise NotImplementedError

    (_, _, _), components = msgspec.json.schema_components(
        [Task, CopyWorkspace, GitWorkspace], schema_hook=workspace_schema, ref_template="#/$defs/{name}"
    )
    schema: dict[str, Any] = components.pop("Task")
    schema["$defs"] = components
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "omniagent batch task"
    return schema


if __name__ == "__main__":  # regenerate the schema file: python -m omniagent.batch.tasks
    SCHEMA_FILE.write_text(json.dumps(task_schema(), indent=2) + "\n", encoding="utf-8")
