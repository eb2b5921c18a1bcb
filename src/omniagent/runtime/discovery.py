"""Discovery: finds the agent CLIs installed on this machine. Never launches an agent, never touches the network.

Each catalog row is resolved in this order (docs/agents.md "How discovery searches"), the first executable found
winning:

1. `EnvOverride`: `OMNIAGENT_<ID>_BIN`, then `ANYAGENT_<ID>_BIN`. A variable that is set but does not name an
   executable file yields a Warning diagnostic and the search goes on.
2. `Path`: the directories of `PATH`.
3. `LoginShellPath`: the `PATH` a login shell sets up (`$SHELL -lic`, see `login_shell_path`).
4. `VersionManager`: volta, bun, pnpm, npm-global, then nvm and fnm node versions, newest first.
5. `KnownLocation`: `/opt/homebrew/bin`, `/usr/local/bin`, then the row's extra directories under `$HOME`.

The `omniagent` row (our engine, driven in process) is never searched for: it is always reported, source `Pinned`.
Pinned installations given by the caller are prepended and hide catalog rows with the same id. Directories are
searched once each, in order, and a `MissingAgent` lists all of them.

The login shell is the one process discovery may start. It runs at most once per environment and process, only
when some agent is still missing after `PATH` (otherwise it could change nothing), with a bounded timeout, and
never when `OMNIAGENT_NO_LOGIN_SHELL` or `ANYAGENT_NO_LOGIN_SHELL` is set.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from omniagent.protocols.sidecar.agents import AgentInstallation, DiscoveryReport, InstallationSource, MissingAgent
from omniagent.protocols.sidecar.base import Diagnostic, DiagnosticLevel
from omniagent.runtime.catalog import PROFILES, AgentProfile, ConnectionKind

# Seconds a login shell may take to print its PATH. anyagent allows 5 s; ours is shorter because `omniagent agents`
# must answer in under 0.5 s, and a slow rc file (nvm init) is covered by the version-manager scan anyway.
LOGIN_SHELL_TIMEOUT = 2.0
# Variables that switch the login shell off (ours, and anyagent's so existing setups carry over).
NO_LOGIN_SHELL_VARS = ("OMNIAGENT_NO_LOGIN_SHELL", "ANYAGENT_NO_LOGIN_SHELL")
# Tag in front of the PATH the shell prints, so rc-file banners and MOTDs around it are ignored.
_MARKER = "__omniagent_path__"
# Searched after PATH and the version managers on every platform: Homebrew (Apple silicon), then Intel/Linux.
_KNOWN_DIRS = ("/opt/homebrew/bin", "/usr/local/bin")
# Node version managers' global bin directories under $HOME, in search order.
_MANAGER_DIRS = (".volta/bin", ".bun/bin", ".local/share/pnpm", "Library/pnpm", ".npm-global/bin")
# (versions root, bin dir inside one version) under $HOME; versions are searched newest first.
_VERSIONED_DIRS = (
    (".nvm/versions/node", "bin"),
    (".local/share/fnm/node-versions", "installation/bin"),
    ("Library/Application Support/fnm/node-versions", "installation/bin"),
)


def discover(
    *,
    env: Mapping[str, str] | None = None,
    pinned: Sequence[AgentInstallation] = (),
    profiles: Sequence[AgentProfile] = PROFILES,
) -> DiscoveryReport:
    """Find every catalog agent on this machine, as seen from `env` (default: this process's environment).

    Pure file-system lookups, plus at most one login-shell spawn (see the module docstring). Never raises for a
    missing or broken installation: those become `missing` entries and `diagnostics`.
    """
    env = os.environ if env is None else env
    report = DiscoveryReport(agents=list(pinned), missing=[], diagnostics=[])
    pinned_ids = {agent.id for agent in pinned}
    login_path = _LazyLoginPath(env, report.diagnostics)
    for row in profiles:
        if row.id in pinned_ids:
            continue
        if row.connection is ConnectionKind.ENGINE:
            report.agents.append(engine_installation(row))
            continue
        found: AgentInstallation | list[str] | None = _env_override(row, env, report.diagnostics)
        if found is None:
            found = _search(row, env, login_path)
        if isinstance(found, list):
            report.missing.append(MissingAgent(id=row.id, name=row.name, searched=found, install_hint=row.install_hint))
        else:
            report.agents.append(found)
    return report


async def discover_async(
    *,
    env: Mapping[str, str] | None = None,
    pinned: Sequence[AgentInstallation] = (),
    profiles: Sequence[AgentProfile] = PROFILES,
) -> DiscoveryReport:
    """`discover` on a worker thread, so the file-system walk and the login shell never block the event loop."""
    import asyncio  # here: `omniagent agents` runs `discover` without an event loop, and need not import asyncio

    return await asyncio.to_thread(discover, env=env, pinned=pinned, profiles=profiles)


def resolve(agent_id: str, report: DiscoveryReport) -> AgentInstallation | None:
    """The installation of `agent_id` in `report`, or None when it was not found."""
    return next((agent for agent in report.agents if agent.id == agent_id), None)


def engine_installation(row: AgentProfile) -> AgentInstallation:
    """The installation of the engine's row: always there, source `Pinned`, nothing to search for (it runs in
    process)."""
    return _installation(row, engine_executable(), InstallationSource.PINNED)


def engine_executable() -> str:
    """Where the engine row says it lives: the `omniagent` entry beside the running interpreter (a venv's bin dir),
    else the interpreter itself. Informational: the engine runs in this process, nothing is launched."""
    script = os.path.join(os.path.dirname(sys.executable), "omniagent")
    return script if is_executable(script) else sys.executable


def is_executable(path: str) -> bool:
    """A regular file (symlinks followed) with any execute bit, as anyagent checks it."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(mode) and bool(mode & 0o111)


# --- the search ---------------------------------------------------------------------------------------------


def _env_override(row: AgentProfile, env: Mapping[str, str], diagnostics: list[Diagnostic]) -> AgentInstallation | None:
    for var in row.env_overrides:
        # An empty value counts as unset (`FOO= cmd` is how shells clear a variable for one command).
        value = env.get(var, "")
        if not value:
            continue
        if is_executable(value):
            return _installation(row, os.path.abspath(value), InstallationSource.ENV_OVERRIDE)
        message = f"{var} is set but {value} is not an executable file"
        diagnostics.append(Diagnostic(level=DiagnosticLevel.WARNING, message=message))
    return None


def _search(
    row: AgentProfile, env: Mapping[str, str], login_path: Callable[[], str | None]
) -> AgentInstallation | list[str]:
    """The installation found in the search directories, or every directory searched when there is none."""
    searched: list[str] = []
    for directory, source in _directories(row, env, login_path):
        searched.append(directory)
        candidate = os.path.join(directory, row.cli)
        if is_executable(candidate):
            # A relative PATH entry is resolved now: sessions later run with another working directory.
            return _installation(row, os.path.abspath(candidate), source)
    return searched


def _directories(
    row: AgentProfile, env: Mapping[str, str], login_path: Callable[[], str | None]
) -> Iterator[tuple[str, InstallationSource]]:
    """Every directory to search for `row`, in order, each once. Lazy: the login shell runs only if reached."""
    seen: set[str] = set()

    def fresh(directories: Sequence[str], source: InstallationSource) -> Iterator[tuple[str, InstallationSource]]:
        for directory in directories:
            if directory and directory not in seen:
                seen.add(directory)
                yield directory, source

    yield from fresh(env.get("PATH", "").split(os.pathsep), InstallationSource.PATH)
    yield from fresh((login_path() or "").split(os.pathsep), InstallationSource.LOGIN_SHELL_PATH)
    # Without HOME the home-relative directories would resolve against the working directory: skip them.
    home = env.get("HOME", "")
    yield from fresh(version_manager_dirs(home) if home else [], InstallationSource.VERSION_MANAGER)
    extras = [os.path.join(home, extra) for extra in row.extra_dirs if home or os.path.isabs(extra)]
    yield from fresh([*_KNOWN_DIRS, *extras], InstallationSource.KNOWN_LOCATION)


def version_manager_dirs(home: str) -> list[str]:
    """The global bin directories of the Node version managers under `home`, each manager's newest version first."""
    dirs = [os.path.join(home, relative) for relative in _MANAGER_DIRS]
    for root, inner in _VERSIONED_DIRS:
        dirs.extend(os.path.join(version, inner) for version in _versions_newest_first(os.path.join(home, root)))
    return dirs


def _versions_newest_first(root: str) -> list[str]:
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return [os.path.join(root, name) for name in sorted(names, key=_version_key, reverse=True)]


def _version_key(name: str) -> tuple[int, ...]:
    """`"v20.1.0"` → `(20, 1, 0)`: numeric, so v20 sorts above v9. Non-numeric parts are dropped."""
    return tuple(int(part) for part in name.removeprefix("v").split(".") if part.isdigit())


def _installation(row: AgentProfile, executable: str, source: InstallationSource) -> AgentInstallation:
    return AgentInstallation(id=row.id, name=row.name, executable_path=executable, source=source)


# --- the login shell ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LoginShellResult:
    """What one login-shell capture gave: its PATH, or None with the reason."""

    path: str | None
    problem: str | None = None


_cache: dict[tuple[str, str, str], LoginShellResult] = {}
_cache_lock = threading.Lock()


def login_shell_path(env: Mapping[str, str] | None = None) -> LoginShellResult:
    """The PATH a login shell of `env`'s `$SHELL` sets up, captured once per (shell, HOME, PATH) and cached.

    Call it early on a worker thread to pre-warm the cache. Disabled (path None, no problem) by
    `OMNIAGENT_NO_LOGIN_SHELL` or `ANYAGENT_NO_LOGIN_SHELL` set to anything but "" or "0".
    """
    env = os.environ if env is None else env
    if any(env.get(var, "") not in ("", "0") for var in NO_LOGIN_SHELL_VARS):
        return LoginShellResult(path=None)
    shell = env.get("SHELL") or "/bin/sh"
    key = (shell, env.get("HOME", ""), env.get("PATH", ""))
    # Held across the capture so concurrent discoveries share one shell instead of starting several.
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _capture(shell, env)
        return _cache[key]


def _capture(shell: str, env: Mapping[str, str]) -> LoginShellResult:
    """`$SHELL -lic` (rc files that set PATH are often interactive-only), then `-lc`, within one time budget."""
    command = f"printf '%s\\n' \"{_MARKER}$PATH\""
    deadline = time.monotonic() + LOGIN_SHELL_TIMEOUT
    problem = f"login shell {shell} printed no PATH"
    for flags in ("-lic", "-lc"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            output = _run_shell([shell, flags, command], env, remaining)
        except subprocess.TimeoutExpired:
            problem = f"login shell {shell} did not print its PATH within {LOGIN_SHELL_TIMEOUT:g} s"
            break
        except OSError:
            return LoginShellResult(path=None, problem=f"login shell {shell} could not be started")
        path = _marked_path(output)
        if path is not None:
            return LoginShellResult(path=path)
    return LoginShellResult(path=None, problem=problem)


def _run_shell(argv: list[str], env: Mapping[str, str], timeout: float) -> str:
    # A new session has no controlling terminal, so an interactive shell can neither take over the user's tty nor
    # be stopped by it; stdin is /dev/null so a prompt in an rc file reads EOF instead of waiting.
    with subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=True,
    ) as child:
        try:
            stdout, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            raise
    return stdout.decode(errors="replace")


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill the shell and whatever its rc files started, then reap it; never waits on their open pipes."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    if child.stdout is not None:
        child.stdout.close()
    child.wait()


def _marked_path(output: str) -> str | None:
    for line in reversed(output.splitlines()):
        _, marker, path = line.partition(_MARKER)
        if marker:
            return path.strip() or None
    return None


class _LazyLoginPath:
    """Captures the login-shell PATH the first time a search reaches it, and reports a failure once."""

    def __init__(self, env: Mapping[str, str], diagnostics: list[Diagnostic]) -> None:
        self._env = env
        self._diagnostics = diagnostics
        self._result: LoginShellResult | None = None

    def __call__(self) -> str | None:
        if self._result is None:
            self._result = login_shell_path(self._env)
            if self._result.problem is not None:
                message = f"{self._result.problem}; set OMNIAGENT_NO_LOGIN_SHELL=1 to skip it"
                self._diagnostics.append(Diagnostic(level=DiagnosticLevel.INFO, message=message))
        return self._result.path
