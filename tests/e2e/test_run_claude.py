"""`omniagent run` with Claude Code driven natively: the pinned `claude` in the loopback-only network namespace of the
real-agent harness (tests/e2e/agents/harness.py), answering from the fake LLM; the permission is asked and answered
on a pseudo-terminal."""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.e2e.agents.harness import agent_world, tool_scenario
from tests.runtime.adapters.engine.harness import ENGINE_VARS
from tests.test_run_command import _read_until as read_pty_until

pytestmark = pytest.mark.timeout(300)
# Seconds for one wait on the CLI: claude starts in ~1 s, slower on 2 busy cores.
WAIT = 60.0
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _read(fd: int, marker: bytes) -> str:
    return _ANSI.sub("", read_pty_until(fd, marker, time.monotonic() + WAIT).decode(errors="replace"))


def _without_engine(env: dict[str, str], home: Path) -> dict[str, str]:
    """`env` with no provider key for our engine and a HOME of its own, so `run` does not prefer the engine."""
    kept = {k: v for k, v in env.items() if k not in ENGINE_VARS}
    return kept | {"HOME": str(home), "OMNIAGENT_DATA_DIR": str(home / "data"), "XDG_CONFIG_HOME": str(home / "cfg")}


def _terminal_run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str, str]:
    """Run `omniagent run ARGS` on a pty, answer its permission prompt with `y`; (exit code, prompt, rest, stderr)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "omniagent", "run", *args],
        cwd=cwd,
        env=env | {"TERM": "xterm-256color"},
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    try:
        prompt = _read(master, b"choice [")
        os.write(master, b"y\n")
        rest = _read(master, b"\0never\0")
        code = process.wait(timeout=WAIT)
        assert process.stderr is not None
        notes = process.stderr.read().decode()
    finally:
        process.kill()
        process.wait()
        os.close(master)
    return code, prompt, rest, notes


async def test_run_agent_claude_asks_the_permission_on_the_terminal_and_completes(tmp_path: Path) -> None:
    """Issue 8 acceptance: `omniagent run --agent claude "…"` completes a turn with a permission asked on a pty:
    the choices Claude Code offers are listed, `y` allows once, the command runs, the answer is printed, exit 0."""
    async with agent_world("claude", tmp_path, tool_scenario("claude")) as world:
        env = _without_engine(world.runtime_env, tmp_path / "user")
        code, prompt, rest, notes = await asyncio.to_thread(
            _terminal_run, ["--agent", "claude", "create the marker file"], env, world.work
        )
        touched = world.touched.exists()
    assert code == 0, notes
    assert "allow once" in prompt and "allow always" in prompt and "deny once" in prompt
    assert "touch fake_tool_ran.txt" in prompt
    assert touched
    assert "tool done" in rest


async def test_run_prefers_claude_over_claude_code_acp_when_both_are_installed(tmp_path: Path) -> None:
    """docs/run.md: with `claude` and `claude-code-acp` both installed (and no engine key), `run` picks `claude`,
    driven natively, says so, and completes the turn through it."""
    async with agent_world("claude", tmp_path, tool_scenario("claude")) as world:
        acp = tmp_path / "bin" / "claude-code-acp"
        acp.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")  # found, never started
        acp.chmod(0o755)
        env = _without_engine(world.runtime_env, tmp_path / "user") | {"OMNIAGENT_CLAUDE_CODE_ACP_BIN": str(acp)}
        code, _, rest, notes = await asyncio.to_thread(_terminal_run, ["create the marker file"], env, world.work)
        launcher = world.launcher
    assert code == 0, notes
    why = f"the first agent CLI found: {launcher}; our engine has no model provider key"
    assert f"omniagent: using Claude Code ({why})\n" in notes
    assert "tool done" in rest
