"""Discovery over a fake HOME and PATH made of real directories and executable stub files."""

from __future__ import annotations

import os
import select
import shutil
from pathlib import Path

import pytest

from omniagent.protocols.sidecar.agents import AgentInstallation, InstallationSource
from omniagent.protocols.sidecar.base import DiagnosticLevel
from omniagent.runtime import discovery
from omniagent.runtime.catalog import AgentProfile, ConnectionKind
from omniagent.runtime.discovery import discover, discover_async, resolve
from tests.sidecar_schema import validate

# A CLI name no machine has, so the real /usr/local/bin and /opt/homebrew/bin searched as known locations
# cannot interfere.
CLI = "omniagent-test-stub-agent"
FAKE = AgentProfile(
    id="fake",
    name="Fake Agent",
    cli=CLI,
    connection=ConnectionKind.ACP,
    launch_args=("acp",),
    install_hint="npm install -g fake-agent",
    extra_dirs=(".fake/bin",),
)
NO_SHELL = {"OMNIAGENT_NO_LOGIN_SHELL": "1"}


def stub(directory: Path, name: str = CLI, mode: int = 0o755) -> Path:
    """A real file that would run, with the given mode."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


def find(env: dict[str, str], *rows: AgentProfile) -> AgentInstallation:
    report = discover(env=env, profiles=rows or (FAKE,))
    (agent,) = report.agents
    return agent


def test_env_override_wins_over_path(tmp_path: Path) -> None:
    """Step 1: the override is checked before any directory."""
    stub(tmp_path / "path")
    override = stub(tmp_path / "custom", "my-agent")
    env = {"PATH": str(tmp_path / "path"), "HOME": str(tmp_path), "OMNIAGENT_FAKE_BIN": str(override), **NO_SHELL}
    agent = find(env)
    assert (agent.executable_path, agent.source) == (str(override), InstallationSource.ENV_OVERRIDE)


@pytest.mark.parametrize("var", ["OMNIAGENT_FAKE_BIN", "ANYAGENT_FAKE_BIN"])
def test_either_override_variable_is_honoured(tmp_path: Path, var: str) -> None:
    """Issue: OMNIAGENT_<ID>_BIN, and anyagent's ANYAGENT_<ID>_BIN so existing setups carry over."""
    override = stub(tmp_path / "custom")
    agent = find({"PATH": "", "HOME": str(tmp_path), var: str(override), **NO_SHELL})
    assert (agent.executable_path, agent.source) == (str(override), InstallationSource.ENV_OVERRIDE)


def test_omniagent_override_wins_over_anyagent_override(tmp_path: Path) -> None:
    """Our choice: our own variable is read first."""
    ours, theirs = stub(tmp_path / "ours"), stub(tmp_path / "theirs")
    env = {"OMNIAGENT_FAKE_BIN": str(ours), "ANYAGENT_FAKE_BIN": str(theirs), "HOME": str(tmp_path), **NO_SHELL}
    assert find(env).executable_path == str(ours)


def test_override_naming_no_executable_file_warns_and_the_search_goes_on(tmp_path: Path) -> None:
    """A Warning "{VAR} is set but {path} is not an executable file", then the normal search."""
    not_executable = stub(tmp_path / "custom", mode=0o644)
    on_path = stub(tmp_path / "path")
    env = {
        "OMNIAGENT_FAKE_BIN": str(not_executable),
        "ANYAGENT_FAKE_BIN": str(tmp_path / "nowhere"),
        "PATH": str(tmp_path / "path"),
        "HOME": str(tmp_path),
        **NO_SHELL,
    }
    report = discover(env=env, profiles=(FAKE,))
    assert [(d.level, d.message) for d in report.diagnostics] == [
        (DiagnosticLevel.WARNING, f"OMNIAGENT_FAKE_BIN is set but {not_executable} is not an executable file"),
        (DiagnosticLevel.WARNING, f"ANYAGENT_FAKE_BIN is set but {tmp_path / 'nowhere'} is not an executable file"),
    ]
    (agent,) = report.agents
    assert (agent.executable_path, agent.source) == (str(on_path), InstallationSource.PATH)


def test_first_path_directory_holding_an_executable_wins(tmp_path: Path) -> None:
    """The first directory with an executable named after the CLI wins; files without an x bit and
    directories do not count."""
    stub(tmp_path / "a", mode=0o644)
    (tmp_path / "b" / CLI).mkdir(parents=True)
    winner = stub(tmp_path / "c", mode=0o700)
    stub(tmp_path / "d")
    path = os.pathsep.join(str(tmp_path / name) for name in "abcd")
    agent = find({"PATH": path, "HOME": str(tmp_path), **NO_SHELL})
    assert (agent.executable_path, agent.source) == (str(winner), InstallationSource.PATH)


def test_a_symlink_to_an_executable_is_found_as_the_link(tmp_path: Path) -> None:
    """npm global bins are symlinks: the link is followed for the check, and its own path is reported."""
    target = stub(tmp_path / "lib", "cli.js")
    (tmp_path / "bin").mkdir()
    link = tmp_path / "bin" / CLI
    link.symlink_to(target)
    assert find({"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path), **NO_SHELL}).executable_path == str(link)


def test_relative_path_entry_gives_an_absolute_executable_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our choice: sessions run in another directory, so a relative PATH entry is resolved at discovery."""
    found = stub(tmp_path / "rel")
    monkeypatch.chdir(tmp_path)
    assert find({"PATH": "rel", "HOME": str(tmp_path), **NO_SHELL}).executable_path == str(found)


def test_path_beats_version_managers_which_beat_known_locations(tmp_path: Path) -> None:
    """Order: Path, then VersionManager, then KnownLocation (profile extras under HOME)."""
    home = tmp_path / "home"
    known = stub(home / ".fake" / "bin")
    managed = stub(home / ".volta" / "bin")
    on_path = stub(tmp_path / "path")
    env = {"HOME": str(home), **NO_SHELL}
    agent = find({**env, "PATH": str(tmp_path / "path")})
    assert (agent.executable_path, agent.source) == (str(on_path), InstallationSource.PATH)
    agent = find({**env, "PATH": ""})
    assert (agent.executable_path, agent.source) == (str(managed), InstallationSource.VERSION_MANAGER)
    managed.unlink()
    agent = find({**env, "PATH": ""})
    assert (agent.executable_path, agent.source) == (str(known), InstallationSource.KNOWN_LOCATION)


def test_version_managers_search_the_newest_node_version_first(tmp_path: Path) -> None:
    """nvm/fnm versions newest first, numerically with the leading "v" stripped (v20 above v9)."""
    home = tmp_path / "home"
    stub(home / ".nvm/versions/node/v9.9.9/bin")
    newest = stub(home / ".nvm/versions/node/v20.1.0/bin")
    stub(home / ".nvm/versions/node/v20.0.12/bin")
    agent = find({"PATH": "", "HOME": str(home), **NO_SHELL})
    assert (agent.executable_path, agent.source) == (str(newest), InstallationSource.VERSION_MANAGER)


def test_fixed_manager_dirs_come_before_nvm_and_fnm(tmp_path: Path) -> None:
    """Version managers in order: volta, bun, pnpm, npm-global, then nvm, then fnm."""
    home = tmp_path / "home"
    stub(home / ".nvm/versions/node/v22.0.0/bin")
    stub(home / ".local/share/fnm/node-versions/v23.0.0/installation/bin")
    npm_global = stub(home / ".npm-global/bin")
    assert find({"PATH": "", "HOME": str(home), **NO_SHELL}).executable_path == str(npm_global)


def test_missing_agent_lists_every_directory_searched_once_in_order_with_its_hint(tmp_path: Path) -> None:
    """MissingAgent{id, name, searched: every dir in order, deduplicated, install_hint}."""
    home = tmp_path / "home"
    (home / ".nvm/versions/node/v18.0.0").mkdir(parents=True)
    (home / ".nvm/versions/node/v20.0.0").mkdir(parents=True)
    path = os.pathsep.join(["/p/one", "/p/two", "", "/p/one", str(home / ".volta/bin")])
    report = discover(env={"PATH": path, "HOME": str(home), **NO_SHELL}, profiles=(FAKE,))
    assert report.agents == [] and report.diagnostics == []
    (missing,) = report.missing
    assert (missing.id, missing.name, missing.install_hint) == ("fake", "Fake Agent", "npm install -g fake-agent")
    h = str(home)
    assert missing.searched == [
        "/p/one",
        "/p/two",
        f"{h}/.volta/bin",
        f"{h}/.bun/bin",
        f"{h}/.local/share/pnpm",
        f"{h}/Library/pnpm",
        f"{h}/.npm-global/bin",
        f"{h}/.nvm/versions/node/v20.0.0/bin",
        f"{h}/.nvm/versions/node/v18.0.0/bin",
        "/opt/homebrew/bin",
        "/usr/local/bin",
        f"{h}/.fake/bin",
    ]
    validate("DiscoveryReport", report.dump())


def test_without_home_only_path_and_absolute_known_locations_are_searched(tmp_path: Path) -> None:
    """Our choice: with HOME unset, home-relative directories would resolve against the working directory."""
    report = discover(env={"PATH": "/p", **NO_SHELL}, profiles=(FAKE,))
    assert report.missing[0].searched == ["/p", "/opt/homebrew/bin", "/usr/local/bin"]


def test_pinned_installations_come_first_and_hide_the_catalog_row_of_the_same_id(tmp_path: Path) -> None:
    """Pinned installations are prepended, and a pinned id is not searched again."""
    pinned = AgentInstallation(id="fake", name="Pinned", executable_path="/x/fake", source=InstallationSource.PINNED)
    other = AgentProfile(
        id="other", name="Other", cli=CLI + "-2", connection=ConnectionKind.ACP, launch_args=(), install_hint="-"
    )
    stub(tmp_path / "path", CLI + "-2")
    report = discover(env={"PATH": str(tmp_path / "path"), **NO_SHELL}, pinned=[pinned], profiles=(FAKE, other))
    assert [(a.id, a.source) for a in report.agents] == [
        ("fake", InstallationSource.PINNED),
        ("other", InstallationSource.PATH),
    ]
    assert report.missing == []
    assert resolve("fake", report) == pinned
    assert resolve("absent", report) is None
    validate("DiscoveryReport", report.dump())


async def test_async_discovery_gives_the_same_report(tmp_path: Path) -> None:
    """Our choice: `discover_async` is `discover` on a worker thread."""
    stub(tmp_path / "path")
    env = {"PATH": str(tmp_path / "path"), "HOME": str(tmp_path), **NO_SHELL}
    assert await discover_async(env=env, profiles=(FAKE,)) == discover(env=env, profiles=(FAKE,))


# --- the login shell ----------------------------------------------------------------------------------------


def fake_shell(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A shell that logs each start, sets PATH as a login profile would, then runs its `-c` command."""
    log = tmp_path / "shell.log"
    shell = tmp_path / "fakesh"
    shell.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\necho "Welcome to the rc banner"\n{body}\neval "$2"\n')
    shell.chmod(0o755)
    return shell, log


def test_login_shell_path_is_searched_after_path(tmp_path: Path) -> None:
    """Step 3: the login shell's PATH, after the process PATH; its banner output is ignored."""
    login_bin = tmp_path / "login-bin"
    found = stub(login_bin)
    shell, log = fake_shell(tmp_path, f'PATH="{login_bin}:$PATH"')
    report = discover(env={"PATH": "/p", "HOME": str(tmp_path), "SHELL": str(shell)}, profiles=(FAKE,))
    (agent,) = report.agents
    assert (agent.executable_path, agent.source) == (str(found), InstallationSource.LOGIN_SHELL_PATH)
    assert log.read_text().split() == ["-lic"]


def test_login_shell_falls_back_to_a_non_interactive_login_shell(tmp_path: Path) -> None:
    """`-lic`, falling back to `-lc`."""
    login_bin = tmp_path / "login-bin"
    stub(login_bin)
    shell, log = fake_shell(tmp_path, f'[ "$1" = -lic ] && exit 1\nPATH="{login_bin}"')
    agent = find({"PATH": "", "HOME": str(tmp_path), "SHELL": str(shell)})
    assert agent.source is InstallationSource.LOGIN_SHELL_PATH
    assert log.read_text().split() == ["-lic", "-lc"]


@pytest.mark.parametrize("var", ["OMNIAGENT_NO_LOGIN_SHELL", "ANYAGENT_NO_LOGIN_SHELL"])
def test_login_shell_is_never_started_when_disabled(tmp_path: Path, var: str) -> None:
    """OMNIAGENT_NO_LOGIN_SHELL=1 disables it, and so does anyagent's ANYAGENT_NO_LOGIN_SHELL=1."""
    login_bin = tmp_path / "login-bin"
    stub(login_bin)
    shell, log = fake_shell(tmp_path, f'PATH="{login_bin}"')
    report = discover(env={"PATH": "", "HOME": str(tmp_path), "SHELL": str(shell), var: "1"}, profiles=(FAKE,))
    assert report.agents == []
    assert str(login_bin) not in report.missing[0].searched
    assert not log.exists()


def test_login_shell_is_not_started_when_path_already_found_every_agent(tmp_path: Path) -> None:
    """Our choice: the login shell could change nothing then, so it is skipped."""
    stub(tmp_path / "path")
    shell, log = fake_shell(tmp_path, "")
    find({"PATH": str(tmp_path / "path"), "HOME": str(tmp_path), "SHELL": str(shell)})
    assert not log.exists()


def test_login_shell_runs_once_per_environment_and_is_cached(tmp_path: Path) -> None:
    """Captured once and cached."""
    shell, log = fake_shell(tmp_path, 'PATH="/from/login"')
    env = {"PATH": "", "HOME": str(tmp_path), "SHELL": str(shell)}
    first = discover(env=env, profiles=(FAKE,))
    second = discover(env=env, profiles=(FAKE,))
    assert first.missing[0].searched[0] == "/from/login" == second.missing[0].searched[0]
    assert log.read_text().split() == ["-lic"]


def test_slow_login_shell_is_killed_at_the_timeout_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our choice (anyagent: 5 s timeout): a shell past LOGIN_SHELL_TIMEOUT is killed with what it started, and an
    Info diagnostic says how to skip it; discovery goes on without its PATH."""
    monkeypatch.setattr(discovery, "LOGIN_SHELL_TIMEOUT", 0.3)
    pid_file = tmp_path / "sleeper.pid"
    sleep = shutil.which("sleep")
    assert sleep is not None
    shell, _ = fake_shell(tmp_path, f'{sleep} 60 &\necho $! > "{pid_file}"\nwait')
    report = discover(env={"PATH": "", "HOME": str(tmp_path), "SHELL": str(shell)}, profiles=(FAKE,))
    assert report.agents == []
    (diagnostic,) = report.diagnostics
    assert (diagnostic.level, diagnostic.message) == (
        DiagnosticLevel.INFO,
        f"login shell {shell} did not print its PATH within 0.3 s; set OMNIAGENT_NO_LOGIN_SHELL=1 to skip it",
    )
    wait_until_gone(int(pid_file.read_text()))


def wait_until_gone(pid: int, limit: float = 5.0) -> None:
    """Bounded wait for a process we did not start to exit, on its pidfd (readable once it has terminated)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        readable, _, _ = select.select([fd], [], [], limit)
    finally:
        os.close(fd)
    assert readable, f"process {pid} still running {limit} s after the login shell was killed"
