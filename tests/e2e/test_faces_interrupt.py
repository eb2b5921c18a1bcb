"""Ctrl-C (SIGINT) ends each face quietly with 130, once its first line is out: no traceback on stderr."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

STEP = 30.0  # seconds: bound on the process's start and exit
FIRST = {
    "acp": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    "rpc": {"id": "1", "method": "initialize"},
    "serve": None,  # the hello comes unasked
}


@pytest.mark.parametrize("face", sorted(FIRST))
async def test_sigint_after_the_first_line_exits_130_without_a_traceback(tmp_path: Path, face: str) -> None:
    data = ["--data-dir", str(tmp_path)] if face != "serve" else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omniagent", face, *data,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    async with asyncio.timeout(STEP):
        request = FIRST[face]
        if request is not None:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
        first = json.loads(await proc.stdout.readline())
        assert "result" in first or "hello" in first
        proc.send_signal(signal.SIGINT)
        err = await proc.stderr.read()
        assert await proc.wait() == 130
    assert b"Traceback" not in err, err.decode()[-2000:]
