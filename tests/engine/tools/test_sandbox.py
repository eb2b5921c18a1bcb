"""The exec sandbox (bubblewrap, Linux) at the tool level: the environment allowlist, the process lifetime rules
inside the sandbox's own PID namespace, and a sandbox that cannot start (docs/security.md, "A hostile model")."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniagent.engine.tools import default_tools
from omniagent.sandbox import Bind, SandboxPolicy, view_prefix
from omniagent.sandbox.environment import child_env

from .conftest import WAIT_LIMIT, make_ctx

SANDBOXED = SandboxPolicy(mode="sandboxed")


def _with_marker(marker: str) -> list[int]:
    """Host pids whose command line holds `marker` (the sandbox's own pids mean nothing out here)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def _none_with_marker(marker: str) -> bool:
    """Wait (bounded) until no process carries `marker`; says whether that happened in time."""
    deadline = asyncio.get_running_loop().time() + WAIT_LIMIT
    while _with_marker(marker):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def test_the_sandboxed_environment_is_an_allowlist_without_named_keys() -> None:
    """Issue 9: only harmless variables pass; a key variable providers.json names is dropped even if allowlisted."""
    policy = SandboxPolicy(mode="sandboxed", secret_env=frozenset({"LANG"}))
    env = child_env(policy, {"PATH": "/bin", "HOME": "/h", "LANG": "key!", "AWS_SECRET": "s", "LC_ALL": "C"})
    assert env == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "TMPDIR": "/tmp",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",
    }
    unsandboxed = child_env(SandboxPolicy(mode="unsandboxed", secret_env=frozenset({"LAB"})), {"LAB": "k", "X": "1"})
    assert unsandboxed == {"X": "1", "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
    # A shared store's URL may hold its password (docs/fleet.md): no command gets it, sandboxed or not.
    store = {"OMNIAGENT_STORE": "postgresql://u:pw@db/x", "PGPASSWORD": "pw", "X": "1"}
    assert "pw" not in str(child_env(SandboxPolicy(mode="unsandboxed"), store))
    assert "pw" not in str(child_env(SandboxPolicy(mode="sandboxed"), store))


async def test_a_sandboxed_command_runs_in_the_workspace_and_sees_only_its_own_processes(workspace: Path) -> None:
    """Issue 9: a fresh PID namespace and /proc: the shell's parent is the sandbox's init, nothing else shows."""
    result = await default_tools().run("exec", {"command": "pwd; echo $PPID; ls /proc | grep -c '^[0-9]'"}, make_ctx(
        workspace, sandbox=SANDBOXED))  # fmt: skip
    lines = result.output.splitlines()
    assert lines[0] == str(workspace)
    assert lines[1] == "1"
    assert int(lines[2]) <= 4  # init, sh, ls, grep
    assert lines[-1] == "[exit code 0]"


async def test_a_timed_out_sandboxed_command_leaves_no_process_behind(workspace: Path) -> None:
    """Our choice: killing the sandbox kills its whole PID namespace, setsid-escaped children included."""
    marker = "31.4159"
    command = f"setsid sleep {marker} & sleep {marker}"
    ctx = make_ctx(workspace, sandbox=SANDBOXED)
    result = await asyncio.wait_for(default_tools().run("exec", {"command": command, "timeout": 0.5}, ctx), WAIT_LIMIT)
    assert "timed out after 0.5 s" in result.output
    assert await _none_with_marker(marker)


async def test_cancelling_a_sandboxed_command_kills_it(workspace: Path) -> None:
    """Task brief: cancellation kills everything the command started, then propagates."""
    marker = "27.1828"
    started = asyncio.Event()
    ctx = make_ctx(workspace, on_output=lambda text: started.set() if "up" in text else None, sandbox=SANDBOXED)
    task = asyncio.ensure_future(default_tools().run("exec", {"command": f"echo up; sleep {marker}"}, ctx))
    await asyncio.wait_for(started.wait(), WAIT_LIMIT)
    assert _with_marker(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, WAIT_LIMIT)
    assert await _none_with_marker(marker)


async def test_a_sandbox_that_cannot_start_is_an_error_naming_why(workspace: Path) -> None:
    """Issue 9: no silent fallback. Here bubblewrap itself refuses: a path to hide that the sandbox's fresh /proc
    does not have (this process's own /proc directory)."""
    ctx = make_ctx(workspace, sandbox=SandboxPolicy(mode="sandboxed", hidden=(Path("/proc/self"),)))
    result = await default_tools().run("exec", {"command": "touch ran"}, ctx)
    assert result.is_error
    assert result.output.startswith("the command was not run: the exec sandbox could not start: bwrap: ")
    assert not (workspace / "ran").exists()


async def test_the_hosts_kernel_settings_are_read_only_in_the_sandbox_even_as_root(workspace: Path) -> None:
    """Issue 22, hole 1: a fresh /proc still reaches the host's kernel, and its files are checked by uid, so a
    sandboxed command run as root (CI, containers) could write `kernel/core_pattern` and have the host run a program
    as root. Every host-writable /proc entry refuses a write ("Read-only file system"); CI runs this as root."""
    probes = {
        "/proc/sys/vm/swappiness": "cat /proc/sys/vm/swappiness",
        "/proc/sys/kernel/core_pattern": "cat /proc/sys/kernel/core_pattern",
        "/proc/sysrq-trigger": "echo",  # writing any key is the attack; writing nothing useful keeps the host calm
    }
    script = "; ".join(
        f'v=$({read}); (printf "%s\\n" "$v" > {path}) 2>/dev/null && echo "WROTE {path}" || echo "refused {path}"'
        for path, read in probes.items()
    )
    script += "; touch /proc/irq/x 2>/dev/null && echo WROTE /proc/irq || echo refused /proc/irq"
    result = await default_tools().run("exec", {"command": script}, make_ctx(workspace, sandbox=SANDBOXED))
    assert "WROTE" not in result.output, result.output
    assert result.output.count("refused") == len(probes) + 1, result.output


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A temporary folder the sandbox would show: not under /tmp, which the sandbox covers with its own tmpfs."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


async def test_omniagents_own_default_dirs_are_hidden_whatever_the_data_dir_says(
    workspace: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, hole 2: an engine run with `--data-dir` elsewhere still shares the machine with the user's own
    omniagent folders (keys, grants, providers.json with literal keys, the hub's token). Decoys in every default
    location (data, config, state, cache, `$OMNIAGENT_DATA_DIR`) and in the configured dirs: none readable."""
    from omniagent.engine.providers.auth.credentials import CredentialStore
    from omniagent.engine.providers.catalog.table import Catalog
    from omniagent.engine.sandboxes import Sandboxes

    xdg = visible_dir / "xdg"
    defaults = []
    for variable, folder in (("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                             ("XDG_CACHE_HOME", "cache")):  # fmt: skip
        monkeypatch.setenv(variable, str(xdg / folder))
        defaults.append(xdg / folder / "omniagent")
    monkeypatch.setenv("OMNIAGENT_DATA_DIR", str(visible_dir / "env-data"))
    configured = [visible_dir / "configured-data", visible_dir / "configured-config"]
    decoys = [folder / "credentials.json" for folder in (*defaults, visible_dir / "env-data", *configured)]
    for number, decoy in enumerate(decoys):
        decoy.parent.mkdir(parents=True)
        decoy.write_text(f"DECOY-{number}\n")
    sandboxes = Sandboxes(*configured, home=visible_dir / "home")
    policy = sandboxes.policy("s1", Catalog(None, CredentialStore(visible_dir / "keys")))
    command = "; ".join(f"cat {decoy} 2>/dev/null || echo hidden" for decoy in decoys)
    result = await default_tools().run("exec", {"command": command}, make_ctx(workspace, sandbox=policy))
    assert "DECOY" not in result.output, result.output
    assert result.output.count("hidden") == len(decoys), result.output


def _text(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _absent(path: Path) -> bool:
    return not os.path.lexists(path)


async def test_a_policy_may_show_the_workspace_at_another_path_beside_more_binds(workspace: Path) -> None:
    """Batch's task environment: the workspace at `/app` (a path the host lacks), one read-only and one writable
    bind beside it; the rest of the root is as read-only as without them."""
    (workspace / "in.txt").write_text("from the workspace\n")
    with tempfile.TemporaryDirectory() as given, tempfile.TemporaryDirectory() as kept:
        shutil.copy(workspace / "in.txt", given)
        policy = SandboxPolicy(
            mode="sandboxed",
            workdir=Path("/app"),
            binds=(Bind(Path(given), Path("/tests")), Bind(Path(kept), Path("/logs/verifier"), writable=True)),
        )
        command = (
            "pwd; cat in.txt; cat /tests/in.txt; echo out > /logs/verifier/r.txt; echo new > made.txt; "
            "touch /tests/x 2>/dev/null || echo tests read-only; touch /top 2>/dev/null || echo root read-only"
        )
        result = await default_tools().run("exec", {"command": command}, make_ctx(workspace, sandbox=policy))
        assert not result.is_error, result.output
        assert result.output.splitlines()[:6] == [
            "/app",
            "from the workspace",
            "from the workspace",
            "tests read-only",
            "root read-only",
            "[exit code 0]",
        ]
        assert _text(Path(kept, "r.txt")) == "out\n"
    assert _text(workspace / "made.txt") == "new\n"
    assert _text(Path("/top")) is None


async def test_a_workdir_the_host_lacks_below_one_of_its_directories_is_made_in_a_copy_of_it(workspace: Path) -> None:
    """A Dockerfile-style workdir under /var (which the host has, /var/<new>/app it lacks): the command starts
    there, /var still lists the host's entries and stays read-only, and nothing is made under the host's /var."""
    fresh = Path("/var") / f"omniagent-{secrets.token_hex(4)}"
    policy = SandboxPolicy(mode="sandboxed", workdir=fresh / "app")
    command = "pwd; ls /var | grep -qx lib && echo host entries; touch /var/x 2>/dev/null || echo read-only; echo m > m"
    result = await default_tools().run("exec", {"command": command}, make_ctx(workspace, sandbox=policy))
    assert not result.is_error, result.output
    assert result.output.splitlines()[:3] == [str(fresh / "app"), "host entries", "read-only"]
    assert _text(workspace / "m") == "m\n"
    assert _absent(fresh) and _absent(Path("/var/x"))


def test_a_view_shows_this_machine_as_it_is_with_the_workspace_at_the_workdir(tmp_path: Path) -> None:
    """`view_prefix`, what a process agent runs under: it starts at the workdir (here below a directory the host
    has, tmp_path/seen/app), writes there land in the workspace, a file elsewhere is written on the host (a view,
    not a sandbox), a sandbox of its own (a nested bubblewrap) still starts, and the workdir is not made here."""
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    workdir = tmp_path / "seen" / "app"
    nested = "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-user true && echo nested sandbox"
    script = f"pwd; echo in > made.txt; echo out > {elsewhere}/host.txt; {nested}"
    done = subprocess.run(
        [*view_prefix(workspace, workdir), "/bin/sh", "-c", script], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(workdir), "nested sandbox"]
    assert _text(workspace / "made.txt") == "in\n"
    assert _text(elsewhere / "host.txt") == "out\n"
    assert _absent(tmp_path / "seen")
