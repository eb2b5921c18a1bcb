"""Child processes: piped stdio, stderr tail, escalating close, exit status text, PATH order."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from omniagent.wire.process import ExitStatus, SpawnError, child_env, open_process

WAIT = 10.0  # seconds: bound on every wait


async def test_child_that_exits_on_stdin_eof_closes_gracefully_with_its_status() -> None:
    """Our choice: close = stdin EOF first (then TERM, then KILL); a well-behaved child exits by itself."""
    code = "import sys\nfor line in sys.stdin: sys.stdout.write(line.upper()); sys.stdout.flush()\nsys.exit(3)"
    async with open_process([sys.executable, "-c", code]) as child:
        child.stdin.write(b"hello\n")
        await child.stdin.drain()
        async with asyncio.timeout(WAIT):
            assert await child.stdout.readline() == b"HELLO\n"
        status = await child.aclose()
    assert str(status) == "exit status: 3"


async def test_child_ignoring_sigterm_is_killed_within_the_bounded_close() -> None:
    """House style: close stdin → grace → SIGTERM → grace → SIGKILL the group; never a hang."""
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stdin.close()\n"
        "print('ready', flush=True)\n"
        "while True: time.sleep(1)\n"
    )
    async with asyncio.timeout(WAIT):
        async with open_process([sys.executable, "-c", code], close_grace=0.2, term_grace=0.2) as child:
            assert await child.stdout.readline() == b"ready\n"
            status = await child.aclose()
    assert status == ExitStatus(-signal.SIGKILL)
    assert str(status) == "signal: 9 (SIGKILL)"


async def test_close_also_kills_grandchildren_left_in_the_group() -> None:
    """Our choice: the child runs in its own process group and the whole group goes when it closes."""
    # The grandchild inherits the child's stdout, so our stdout reader sees EOF only once both are dead.
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('started', flush=True)\n"
        "sys.stdin.read()\n"
    )
    async with asyncio.timeout(WAIT):
        async with open_process([sys.executable, "-c", code], close_grace=0.3, term_grace=0.5) as child:
            assert await child.stdout.readline() == b"started\n"
            await child.aclose()
            assert await child.stdout.read() == b""


async def test_stderr_tail_keeps_the_last_lines() -> None:
    """Our choice: error reports quote the child's last stderr lines."""
    code = "import sys\nfor i in range(100): print('line', i, file=sys.stderr)\nsys.exit(1)"
    async with open_process([sys.executable, "-c", code], stderr_lines=3) as child:
        status = await child.wait()
        await child.aclose()
        assert child.stderr_tail() == ["line 97", "line 98", "line 99"]
    assert str(status) == "exit status: 1"


async def test_a_missing_executable_is_a_spawn_error() -> None:
    """House style: bad input gets a clear error, not an OSError traceback."""
    with pytest.raises(SpawnError):
        async with open_process(["/nonexistent/agent-binary"]):
            pass


async def test_one_long_stdout_line_is_read_whole() -> None:
    """asyncio's 64 KiB default stream limit must not break a long line."""
    code = "import sys\nsys.stdout.write('x' * 1_000_000 + '\\n')\nsys.stdout.flush()\nsys.stdin.read()"
    async with open_process([sys.executable, "-c", code]) as child:
        async with asyncio.timeout(WAIT):
            line = await child.stdout.readline()
    assert len(line) == 1_000_001


def test_child_path_puts_the_executable_directory_first(tmp_path: Path) -> None:
    """Our choice: an npm agent's `#!/usr/bin/env node` finds the node installed beside it."""
    env = child_env(str(tmp_path / "agent"), {"PATH": "/usr/bin:/bin"})
    assert env["PATH"].split(os.pathsep) == [str(tmp_path), "/usr/bin", "/bin"]


async def test_a_leader_that_dies_is_seen_at_once_and_orphans_holding_our_pipes_are_swept() -> None:
    """Our choice (found with codex-acp's npm launcher): the leader's death is the agent's death, even while a
    grandchild still holds stdout; the orphan is killed so stdout reaches EOF and nobody waits forever."""
    async with asyncio.timeout(10), open_process(["sh", "-c", "sleep 60 & exit 3"]) as child:
        assert str(await child.wait()) == "exit status: 3"
        assert await child.stdout.read() == b""
