"""`omniagent serve` writes its hello before importing the runtime, the sidecar models, msgspec, pydantic, httpx or
rich (issue 11): a real process, its imports read from outside with `-X importtime`. Its stdin ends right after
the hello, so everything the process imported was imported for the hello."""

from __future__ import annotations

import asyncio
import json
import sys

STEP = 30.0  # seconds: bound on the process's start and exit
HEAVY = (
    "omniagent.runtime.runtime",
    "omniagent.protocols.sidecar.events",
    "msgspec",
    "pydantic",
    "httpx",
    "rich",
)


async def _serve(*args: str, stdin: int, stderr: int = asyncio.subprocess.PIPE) -> tuple[int | None, bytes, bytes]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *args, "-m", "omniagent", "serve",
        stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=stderr,
    )  # fmt: skip
    async with asyncio.timeout(STEP):
        out, err = await proc.communicate(b"" if stdin == asyncio.subprocess.PIPE else None)
    return proc.returncode, out, err or b""


async def test_the_hello_is_written_before_the_runtime_models_pydantic_httpx_or_rich_are_imported() -> None:
    code, out, err = await _serve("-X", "importtime", stdin=asyncio.subprocess.PIPE)
    assert code == 0, err.decode()[-2000:]
    assert [json.loads(line) for line in out.splitlines()] == [{"hello": {"protocol": 1, "anyagent": "0.1.0"}}]
    imported = {line.rsplit("|", 1)[1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}
    assert "omniagent.faces.sidecar.serve" in imported  # the probe reads what it thinks it reads
    for heavy in HEAVY:
        assert heavy not in imported, f"{heavy} was imported to write the hello"


async def test_stdin_from_dev_null_ends_the_sidecar_like_an_empty_pipe() -> None:
    """`omniagent serve < /dev/null`: the event loop cannot watch /dev/null, so it is read by a thread, whose EOF
    ends the process after the hello (it used to wait forever)."""
    code, out, err = await _serve(stdin=asyncio.subprocess.DEVNULL)
    assert code == 0, err.decode()[-2000:]
    assert out == b'{"hello":{"protocol":1,"anyagent":"0.1.0"}}\n'
    assert b"Traceback" not in err


async def test_the_hello_is_written_before_asyncio_or_logging_are_imported() -> None:
    """asyncio is most of a bare Python start: the hello goes out first. stderr (where `-X importtime` writes,
    unbuffered) shares stdout's pipe, so the order of the lines is the order of the writes."""
    code, out, _ = await _serve("-X", "importtime", stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert code == 0, out.decode()[-2000:]
    lines = out.decode().splitlines()
    hello = lines.index('{"hello":{"protocol":1,"anyagent":"0.1.0"}}')
    before = {line.rsplit("|", 1)[1].strip() for line in lines[:hello] if line.startswith("import time:")}
    assert "omniagent.faces.sidecar.serve" in before  # the probe reads what it thinks it reads
    for module in ("asyncio", "logging", "omniagent.faces.sidecar.connection"):
        assert module not in before, f"{module} was imported before the hello"
