"""Harbor task folders as batch tasks: a folder holding `task.toml`, or a folder of such folders, read into `Task`s
(docs/batch.md, "Harbor task folders").

    task.toml            schema 1.x: [task] name, [metadata], [agent] timeout_sec, [verifier] timeout_sec/env,
                         [environment] workdir/cpus/memory_mb/network_mode/env, [solution] env; an env value that
                         is `${VAR}` or `${VAR:-default}` is the host's variable, as Harbor resolves it
    instruction.md       the prompt (leading canary comment lines stripped, as Harbor does)
    tests/test.sh        the verifier, run with tests/ at /tests
    solution/solve.sh    optional: what the `oracle` agent runs, with solution/ at /solution
    environment/         optional: a Dockerfile of FROM, WORKDIR, COPY and ENV lines only is honoured here (WORKDIR:
                         the workdir; COPY into the workdir: the workspace's files; ENV: the environment); any other
                         instruction (RUN, USER, ADD, ...) or a compose file needs an image we do not build, so the
                         task is refused with that reason, unless `host_image` (the user's `--host-image`): then it
                         runs on this machine's system, the other instructions skipped, and its result says so.

What this is not: running them (execute.py, environment.py, verifier.py, oracle.py); Harbor's multi-step tasks,
allowlist networks, GPUs and storage limits, which are refused by name.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from omniagent.batch.tasks import (
    TASK_ID,
    Environment,
    SeedFile,
    Solution,
    Task,
    TaskFileError,
    Verifier,
)

CONFIG = "task.toml"
# Harbor's own rule (harbor.models.task.task): leading HTML or hash comment lines that mention a canary.
_CANARY = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
_ID = re.compile(TASK_ID)
# Dockerfile instructions that mean the same here as in an image built FROM this machine's system.
_HONOURED = {"FROM", "WORKDIR", "COPY", "ENV"}
# Harbor's test and solve commands: run directly when executable (its shebang decides), else with bash.
TEST_COMMAND = "if [ -x /tests/test.sh ]; then exec /tests/test.sh; else exec bash /tests/test.sh; fi"
SOLVE_COMMAND = "if [ -x /solution/solve.sh ]; then exec /solution/solve.sh; else exec bash /solution/solve.sh; fi"
_NETWORK = ("public", "no-network")
# Harbor's reference to a host variable in an env table (harbor.utils.env): a value that is wholly `${NAME}` or
# `${NAME:-default}`; any other value (`$NAME`, `x${NAME}`) is literal.
_HOST_VARIABLE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")


def is_task_folder(path: Path) -> bool:
    return (path / CONFIG).is_file()


def load_folder(path: Path, *, host_image: bool = False) -> list[Task]:
    """The tasks of `path`: one task folder, or a folder of them (each a direct child holding `task.toml`), in name
    order. Raises: `TaskFileError` naming the folder and what is wrong."""
    if is_task_folder(path):
        return [load_task(path, host_image=host_image)]
    try:
        children = sorted(child for child in path.iterdir() if is_task_folder(child))
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read the folder: {error.strerror or error}") from None
    if not children:
        raise TaskFileError(f"{path}: neither a task folder nor a folder of them (no {CONFIG} in it or beside it)")
    return [load_task(child, host_image=host_image) for child in children]


def load_task(folder: Path, *, host_image: bool = False) -> Task:
    """One Harbor task folder as a `Task` (its id: the folder's name). Raises: `TaskFileError`."""
    folder = folder.resolve()
    where = str(folder)
    if not _ID.match(folder.name):
        raise TaskFileError(f"{where}: the folder name {folder.name!r} cannot be a task id (it names its outputs)")
    config = _toml(folder / CONFIG)
    prompt = _instruction(folder / "instruction.md")
    if not (folder / "tests" / "test.sh").is_file():
        raise TaskFileError(f"{where}: tests/test.sh is missing (a task needs its verifier)")
    if config.get("steps"):
        raise TaskFileError(f"{where}: multi-step tasks ([[steps]]) are not supported by omniagent batch")
    section = _tables(config, where)
    verifier = Verifier(
        command=TEST_COMMAND,
        tests=str(folder / "tests"),
        timeout_sec=_number(section["verifier"], "timeout_sec", where, 600.0),
        env=_host_env(section["verifier"], where, "verifier"),
    )
    solution = None
    if (folder / "solution" / "solve.sh").is_file():
        # Harbor needs the solution's variables only when the oracle runs it: the batch's plan refuses that then.
        env, unresolved = _resolve(_env(section["solution"], where, "solution"), where, "solution")
        solution = Solution(command=SOLVE_COMMAND, directory=str(folder / "solution"), env=env, unresolved=unresolved)
    agent_seconds = section["agent"].get("timeout_sec")
    return Task(
        id=folder.name,
        prompt=prompt,
        # Harbor gives its agents the run of their container; here the agent's own sandbox is that container.
        permissions="auto",
        time_limit=float(agent_seconds) if isinstance(agent_seconds, int | float) and agent_seconds > 0 else None,
        verifier=verifier,
        solution=solution,
        environment=_environment(folder, section["environment"], host_image=host_image),
    )


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read it: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise TaskFileError(f"{path}: not TOML: {error}") from None


def _instruction(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read the instruction: {error.strerror or error}") from None
    lines = text.split("\n")
    start = 0
    while start < len(lines) and _CANARY.match(lines[start].strip()):
        start += 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    prompt = "\n".join(lines[start:])
    if not prompt.strip():
        raise TaskFileError(f"{path}: the instruction is empty")
    return prompt


def _tables(config: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    for name in ("verifier", "agent", "environment", "solution"):
        value = config.get(name, {})
        if not isinstance(value, dict):
            raise TaskFileError(f"{where}: task.toml's {name} must be a table ([{name}])")
        tables[name] = value
    return tables


def _number(table: dict[str, Any], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskFileError(f"{where}: task.toml's {key} must be a positive number of seconds")
    return float(value)


def _env(table: dict[str, Any], where: str, name: str) -> dict[str, str]:
    value = table.get("env", {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TaskFileError(f"{where}: task.toml's [{name}] env must map names to strings")
    return {str(k): v for k, v in value.items()}


def _host_env(table: dict[str, Any], where: str, name: str) -> dict[str, str]:
    """The table's env with its host variables resolved (`_resolve`). Raises: `TaskFileError` when one is unset."""
    env, unresolved = _resolve(_env(table, where, name), where, name)
    if unresolved is not None:
        raise TaskFileError(unresolved)
    return env


def _resolve(env: dict[str, str], where: str, name: str) -> tuple[dict[str, str], str | None]:
    """`env` with each `${VAR}` or `${VAR:-default}` value replaced as Harbor replaces it: by the variable in this
    process's environment when it is set (even empty), else by the default; and when one is unset without a
    default, why, as a sentence naming the task folder, the table and the variable, never a value (that entry is
    left out)."""
    resolved: dict[str, str] = {}
    unresolved: str | None = None
    for key, value in env.items():
        match = _HOST_VARIABLE.fullmatch(value)
        if match is None:
            resolved[key] = value
        elif match[1] in os.environ:
            resolved[key] = os.environ[match[1]]
        elif match[2] is not None:
            resolved[key] = match[2]
        elif unresolved is None:
            unresolved = (
                f"{where}: task.toml's [{name}] env {key} needs the host variable {match[1]}, which is not set "
                f"(set it, or give a default: ${{{match[1]}:-VALUE}})"
            )
    return resolved, unresolved


def _environment(folder: Path, table: dict[str, Any], *, host_image: bool) -> Environment:
    where = str(folder)
    unsupported = [key for key in ("gpus", "tpu", "docker_image") if table.get(key)]
    mode = table.get("network_mode", "public")
    if table.get("allow_internet") is False and "network_mode" not in table:
        mode = "no-network"  # Harbor's deprecated spelling of the same
    if mode not in _NETWORK:
        unsupported.append(f"network_mode {mode!r}")
    workdir = table.get("workdir")
    if workdir is not None and (not isinstance(workdir, str) or not workdir.startswith("/")):
        raise TaskFileError(f"{where}: task.toml's workdir must be an absolute path")
    env = _host_env(table, where, "environment")
    refused: str | None = None
    if unsupported:
        refused = f"task {folder.name}: this machine cannot give it {', '.join(unsupported)}"
    seed: list[SeedFile] = []
    foreign: list[str] = []
    image = _dockerfile(folder / "environment")
    if image is not None:
        workdir_seen, seed, image_env, foreign = _read_dockerfile(folder / "environment", image, workdir)
        workdir = workdir or workdir_seen
        env = {**image_env, **env}
        if foreign and not host_image and refused is None:
            refused = (
                f"task {folder.name}: its environment needs an image omniagent batch does not build "
                f"({'; '.join(foreign)}); pass --host-image to run it on this machine's system instead"
            )
    elif (folder / "environment").is_dir() and any((folder / "environment").glob("*compose*.y*ml")):
        refused = f"task {folder.name}: its environment is a compose file, which omniagent batch does not run"
    return Environment(
        workdir=workdir,
        cpus=_positive_int(table, "cpus", where),
        memory_mb=_positive_int(table, "memory_mb", where),
        network_mode="no-network" if mode == "no-network" else "public",
        env=env,
        seed=seed,
        refused=refused,
        skipped=foreign if host_image and image is not None else [],
    )


def _positive_int(table: dict[str, Any], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TaskFileError(f"{where}: task.toml's {key} must be a positive whole number")
    return value


def _dockerfile(environment: Path) -> Path | None:
    path = environment / "Dockerfile"
    return path if path.is_file() else None


def _read_dockerfile(
    context: Path, path: Path, workdir: str | None
) -> tuple[str | None, list[SeedFile], dict[str, str], list[str]]:
    """What a Dockerfile means here: its WORKDIR, the COPYs into the workdir as seed files, its ENV, and a phrase for
    each instruction that needs a real image (anything else, or a COPY elsewhere)."""
    current = PurePosixPath("/")
    copies: list[tuple[list[str], PurePosixPath, bool]] = []
    env: dict[str, str] = {}
    foreign: list[str] = []
    for line in _instructions(path.read_text(encoding="utf-8")):
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword not in _HONOURED:
            foreign.append(f"{keyword} in {path.name}")
        elif keyword == "WORKDIR":
            current = current / rest.strip()
        elif keyword == "ENV":
            env.update(_env_pairs(rest))
        elif keyword == "COPY":
            words = shlex.split(rest)
            if any(word.startswith("--") for word in words) or len(words) < 2:
                foreign.append(f"COPY {rest.strip()}")
                continue
            copies.append((words[:-1], current / words[-1], words[-1].endswith("/")))
    root = PurePosixPath(workdir) if workdir else current
    seed: list[SeedFile] = []
    for sources, target, into in copies:
        if not target.is_relative_to(root):
            foreign.append(f"COPY to {target}, outside the workdir {root}")
            continue
        relative = str(target.relative_to(root))
        for source in sources:
            resolved = (context / source).resolve()
            if not resolved.is_relative_to(context.resolve()):
                foreign.append(f"COPY of {source}, outside the build context")
                continue
            seed.append(SeedFile(source=str(resolved), target=relative + ("/" if into or len(sources) > 1 else "")))
    return (str(current) if current != PurePosixPath("/") else None), seed, env, foreign


def _instructions(text: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped."""
    joined: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    if pending.strip():
        joined.append(pending)
    return joined


def _env_pairs(rest: str) -> dict[str, str]:
    words = shlex.split(rest)
    if len(words) >= 2 and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}  # the old `ENV NAME value` form
    return dict(word.split("=", 1) for word in words if "=" in word)
