"""The agent process every direct benchmark client drives: the world's launcher on pipes, in a process group of its
own, killed whole when the client is done (closing is not measured: some agents ignore stdin EOF)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator

from tests.e2e.agents.harness import World


@contextlib.asynccontextmanager
async def agent_process(world: World) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        *world.argv,
        cwd=world.work,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=64 * 1024 * 1024,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
