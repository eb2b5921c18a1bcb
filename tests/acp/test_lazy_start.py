"""`omniagent acp` answers `initialize` without importing the engine's store, httpx, rich or pydantic (issue 11): a
real process, its imports read from outside with `-X importtime`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

STEP = 30.0  # seconds: bound on the process's start and exit
HEAVY = ("omniagent.engine.store", "omniagent.engine.engine", "httpx", "rich", "pydantic")
# The ACP models are cheap now, yet the answer needs none of them.
MODELS = ("omniagent.protocols.acp.v1", "omniagent.protocols.acp.v2")


async def test_initialize_is_answered_before_the_engine_store_httpx_rich_or_pydantic_are_imported(
    tmp_path: Path,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "omniagent",
        "acp",
        "--data-dir",
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    async with asyncio.timeout(STEP):
        out, err = await proc.communicate(json.dumps(request).encode() + b"\n")
    assert proc.returncode == 0, err.decode()[-2000:]
    reply = json.loads(out)
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == 1
    imported = {line.rsplit("|", 1)[1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    assert "omniagent.acp.serve" in imported  # the probe reads what it thinks it reads
    for heavy in HEAVY + MODELS:
        assert heavy not in imported, f"{heavy} was imported to answer initialize"
    assert not (tmp_path / "engine.sqlite3").exists()  # nor was the store opened
