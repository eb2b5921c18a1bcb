"""The exec sandbox (bubblewrap, Linux) at the tool level: the environment allowlist, the process lifetime rules
inside the sandbox's own PID namespace, and a sandbox that cannot start (docs/security.md, "A hostile model")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniagent.engine.tools import default_tools
from omniagent.engine.tools.shell.sandbox import SandboxPolicy, child_env

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
