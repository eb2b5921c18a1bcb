"""One of our faces (`rpc`, `acp`, …) as a real process over a few request lines, read from outside: its reply lines
and the modules it imported (`-X importtime`), for the tests of lazy start-up."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

STEP = 30.0  # seconds: bound on the process's start and exit


async def run_face(face: str, data_dir: Path, *requests: dict[str, Any]) -> tuple[list[dict[str, Any]], set[str]]:
    """Send the request lines, close stdin, wait for a clean exit; the reply lines and the modules imported."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "omniagent",
        face,
        "--data-dir",
        str(data_dir),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(STEP):
        out, err = await proc.communicate(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    assert proc.returncode == 0, err.decode()[-2000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    assert "omniagent.cli" in imported  # the probe reads what it thinks it reads
    return [json.loads(line) for line in out.splitlines()], imported
