"""`omniagent run` against real agent CLIs: the pinned Qwen Code (ACP) and Codex (its app-server, natively), in the
loopback-only network namespace of the real-agent harness (tests/e2e/agents/harness.py), answering from the fake
LLM."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import select
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.e2e.agents.harness import STEP, agent_world, plain_scenario, tool_scenario
from tests.e2e.agents.peers import TEXT
from tests.sidecar_schema import validate

pytestmark = pytest.mark.timeout(300)


async def _run_cli(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "omniagent",
        "run",
        *args,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(STEP):
            out, err = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_run_agent_qwen_say_hello_prints_the_scripted_answer_and_exits_0(tmp_path: Path) -> None:
    """Issue "ACP client", part 7 acceptance: `omniagent run --agent qwen "say hello"` against the fake LLM prints
    the scripted answer and exits 0."""
    async with agent_world("qwen", tmp_path, plain_scenario()) as world:
        code, out, err = await _run_cli("--agent", "qwen", "say hello", env=world.runtime_env, cwd=world.work)
        assert world.requests(), "qwen never called the fake LLM"
    assert code == 0, err
    assert out.strip() == TEXT


async def test_run_json_without_a_terminal_denies_qwens_shell_command(tmp_path: Path) -> None:
    """Issue part 7: without a TTY a permission is denied; `--json` prints schema-valid events only. The shell
    command the fake LLM asks for must not run."""
    async with agent_world("qwen", tmp_path, tool_scenario("qwen")) as world:
        code, out, err = await _run_cli(
            "--json", "--agent", "qwen", "make the file", env=world.runtime_env, cwd=world.work
        )
        touched = world.touched.exists()
    events = [json.loads(line) for line in out.splitlines()]
    for event in events:
        validate("Event", event)
    kinds = [next(iter(event["kind"])) for event in events]
    assert "RequestOpened" in kinds, err
    assert kinds[-1] == "TurnEnded"
    assert "denied" in err
    assert not touched
    assert events[-1]["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}  # qwen goes on
    assert code == 0


async def test_run_yes_lets_qwen_run_its_shell_command_and_shows_the_tool(tmp_path: Path) -> None:
    """Issue part 7: `--yes` auto-approves (the command runs); the tool call is one line with its final status."""
    async with agent_world("qwen", tmp_path, tool_scenario("qwen")) as world:
        code, out, err = await _run_cli(
            "--yes", "--agent", "qwen", "make the file", env=world.runtime_env, cwd=world.work
        )
        touched = world.touched.exists()
    assert code == 0, err
    assert touched
    assert any(line.endswith("completed") and "touch" in line for line in out.splitlines()), out


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _read_pty(fd: int, marker: str, within: float) -> str:
    """Text from a pty master until `marker` shows up or the other side closes; bounded by `within` seconds."""
    deadline, seen = time.monotonic() + within, b""
    while marker.encode() not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {marker!r}; saw {seen!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the pty's other side closed
            chunk = b""
        if not chunk:
            break
        seen += chunk
    return _ANSI.sub("", seen.decode(errors="replace"))


async def test_run_agent_codex_on_a_terminal_asks_and_completes_the_turn(tmp_path: Path) -> None:
    """Issue 8 acceptance: `omniagent run --agent codex "…"` on a pty drives the codex app-server natively: the
    command approval is asked on the terminal with codex's three choices and its reason, `y` allows it once, the
    command runs and the turn completes with the model's answer (exit 0)."""
    async with agent_world("codex", tmp_path, tool_scenario("codex")) as world:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        process = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "omniagent", "run", "--agent", "codex", "create the marker file"],
            cwd=world.work,
            stdin=slave,
            stdout=slave,
            stderr=asyncio.subprocess.PIPE,
            env={**world.runtime_env, "TERM": "xterm-256color"},
        )
        os.close(slave)
        try:
            prompt = await asyncio.to_thread(_read_pty, master, "choice [1-3, y/n]: ", STEP)
            assert "1) allow once  2) allow always  3) deny once" in prompt, prompt
            assert "create the marker file" in prompt  # codex's reason, shown as the request's detail
            os.write(master, b"y\n")
            rest = await asyncio.to_thread(_read_pty, master, "\0never\0", STEP)
            async with asyncio.timeout(STEP):
                _, stderr = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            os.close(master)
        touched = world.touched.exists()
    code, err = process.returncode, stderr.decode()
    assert code == 0, err
    assert touched
    assert "→ allow once" in rest and "tool done" in rest, rest
