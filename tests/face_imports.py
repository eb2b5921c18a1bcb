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
    return await run_face_lines(face, data_dir, [json.dumps(r).encode() for r in requests])


async def run_face_lines(face: str, data_dir: Path, lines: list[bytes]) -> tuple[list[dict[str, Any]], set[str]]:
    """`run_face` with the input lines as bytes, written at once."""
    out, imported = await _run(face, data_dir, lines)
    return [json.loads(line) for line in out.splitlines()], imported


async def run_face_raw(face: str, data_dir: Path, lines: list[bytes]) -> list[bytes]:
    """`run_face_lines`, the reply lines as the bytes written."""
    out, _ = await _run(face, data_dir, lines)
    return out.splitlines()


async def _run(face: str, data_dir: Path, lines: list[bytes]) -> tuple[bytes, set[str]]:
    out, err = await _exchange(face, data_dir, lines, stderr=asyncio.subprocess.PIPE)
    imported = {line.rsplit("|", 1)[1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    assert "omniagent.faces.cli.main" in imported  # the probe reads what it thinks it reads
    return out, imported


async def imported_before_reply(face: str, data_dir: Path, request: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Send one request line and close stdin; the first reply and the modules whose import finished before it was
    written. stderr (where `-X importtime` writes, unbuffered) and stdout share one pipe, so their order is the
    order of the writes."""
    out, _ = await _exchange(face, data_dir, [json.dumps(request).encode()], stderr=asyncio.subprocess.STDOUT)
    before: list[str] = []
    for line in out.decode().splitlines():
        if line.startswith("import time:"):
            before.append(line.rsplit("|", 1)[1].strip())
        elif line.startswith("{"):
            return json.loads(line), before
    raise AssertionError(f"no reply line in {out.decode()[-2000:]}")


async def _exchange(face: str, data_dir: Path, lines: list[bytes], *, stderr: int) -> tuple[bytes, bytes]:
    """Run the face under `-X importtime`, write the lines, close stdin, wait for a clean exit: (stdout, stderr)."""
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
        stderr=stderr,
    )
    async with asyncio.timeout(STEP):
        out, err = await proc.communicate(b"".join(line + b"\n" for line in lines))
    assert proc.returncode == 0, (err or out).decode()[-2000:]
    return out, err or b""
