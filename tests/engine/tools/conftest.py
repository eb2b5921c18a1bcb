"""Fixtures for the engine tool tests: a real workspace directory and a real directory outside it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from omniagent.engine.tools import ToolContext, ToolLimits
from omniagent.sandbox import UNSANDBOXED, SandboxPolicy

# Every bounded wait in these tests gives up after this many seconds.
WAIT_LIMIT = 5.0


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace that no tool may touch; holds `secret.txt`."""
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("secret\n")
    return other.resolve()


def make_ctx(
    root: Path,
    on_output: Callable[[str], None] | None = None,
    sandbox: SandboxPolicy = UNSANDBOXED,
    **overrides: Any,
) -> ToolContext:
    """A context on `root` with fast kill/drain graces unless the test overrides them.

    Unsandboxed unless asked: these tests watch the command's processes from outside, which the sandbox's own PID
    namespace would hide (test_sandbox.py covers the sandboxed path).
    """
    limits = replace(ToolLimits(kill_grace=0.2, drain_grace=0.2), **overrides)
    return ToolContext.for_workspace(root, on_output=on_output or (lambda _text: None), limits=limits, sandbox=sandbox)


def is_dead(pid: int) -> bool:
    """True when `pid` no longer runs (gone, or a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


async def wait_dead(pid: int) -> bool:
    """Wait (bounded by WAIT_LIMIT) until `pid` is dead; the answer says whether it died in time."""
    deadline = asyncio.get_running_loop().time() + WAIT_LIMIT
    while not is_dead(pid):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def tree(root: Path) -> set[str]:
    """Every path under `root`, relative, for "nothing was written" assertions."""
    return {os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs}


def listing(directory: Path) -> list[str]:
    """The sorted names directly inside `directory`."""
    return sorted(p.name for p in directory.iterdir())
