"""`omniagent serve`: the anyagent sidecar wire on stdin/stdout.

    ← {"hello":{"protocol":1,"anyagent":"0.1.0"}}
    → {"id":1,"cmd":"open","agent":"mock","dir":"."}
    ← {"id":1,"ok":{"id":"s1",…SessionInfo}}
    → {"id":2,"cmd":"prompt","session":"s1","text":"hi"}
    ← {"event":{"sequence":1,…,"kind":{"TurnStarted":{"origin":{"Prompt":"p1"}}}}}
    ← {"id":2,"ok":{"prompt_id":"p1","kind":{"Started":{"turn_id":"t1"}}}}
    ← {"session":"s1","error":{"kind":"ProcessExited",…}}     (agent death only)
    ← {"closed":"s1"}                                         (exactly once per opened session)

Start-up is lazy (docs/performance.md): `faces/sidecar/serve.py` writes the hello before asyncio is imported;
this module serves what follows. The runtime, the sidecar models and the commands (`serving/sidecar/commands.py`) are
imported when the first line arrives, so an app that only waits for the hello never pays for them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from omniagent.faces.pipes import BrokenStdout
from omniagent.wire.errors import LineTooLarge
from omniagent.wire.jsonl import MAX_LINE_BYTES, LineWriter, read_lines
from omniagent.wire.stdio import open_stdio

if TYPE_CHECKING:
    from omniagent.runtime.adapters.mock import MockScript

log = logging.getLogger("omniagent.serve")


def serve_sidecar(script: MockScript | None) -> int:
    """Serve the app's lines once the hello is out (`serve.run_sidecar`); returns the exit code: 0 on EOF, 1 when
    stdout stopped accepting writes (its reader gone included), as `anyagent serve` does."""
    return asyncio.run(_main(script))


async def _main(script: MockScript | None) -> int:
    broken = BrokenStdout(log)
    async with (
        open_stdio(limit=MAX_LINE_BYTES) as (reader, sink),
        LineWriter(sink, on_error=broken) as writer,
    ):
        lines = read_lines(reader)
        first = await _first_line(lines, broken.event)
        if first is not None:
            from omniagent.runtime.runtime import Runtime
            from omniagent.serving.sidecar.commands import RuntimeHost, Sidecar

            async with Runtime(mock=script) as runtime:
                await Sidecar(RuntimeHost(runtime), writer, broken.event).serve(_after(first, lines))
    return 0 if broken.error is None else 1  # any stdout failure, its reader gone included, is 1


async def _first_line(lines: AsyncIterator[bytes | LineTooLarge], broken: asyncio.Event) -> bytes | LineTooLarge | None:
    """The app's first line; None when stdin ends first or stdout breaks (nothing to serve either way)."""

    async def read() -> bytes | LineTooLarge | None:
        return await anext(lines, None)

    reading = asyncio.ensure_future(read())
    waiting = asyncio.ensure_future(broken.wait())
    await asyncio.wait({reading, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if not reading.done():
        reading.cancel()
        return None
    return reading.result()


async def _after(
    first: bytes | LineTooLarge, rest: AsyncIterator[bytes | LineTooLarge]
) -> AsyncIterator[bytes | LineTooLarge]:
    yield first
    async for line in rest:
        yield line
