"""The exec sandbox's system-call filter over a real `omniagent rpc` in auto mode (issue 22): the fake LLM plays a
hostile model that tries to leave the sandbox through the kernel (a new user namespace, a host service's Unix
socket, the session keyring, ptrace), and each test asserts what the model is told and what the host saw."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.test_rpc_escapes import SANDBOXED_WHY, World, _blocked, _turn, world

__all__ = ["world"]  # the fixture, shared with test_rpc_escapes.py

REFUSED = "Operation not permitted"
# The interpreter itself: a venv under /tmp would be under the sandbox's private /tmp.
PYTHON = os.path.realpath(sys.executable)


@pytest.fixture
async def host_service() -> AsyncIterator[tuple[Path, list[int]]]:
    """A Unix socket server of the host's in a folder the sandbox shows read-only (not /tmp, which it replaces);
    the list counts the connections it accepted."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    path = folder / "agent.sock"
    accepted: list[int] = []

    async def on_connect(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.write(b"host secret")
        writer.close()

    try:
        async with await asyncio.start_unix_server(on_connect, str(path)):
            yield path, accepted
    finally:
        shutil.rmtree(folder)


def _python(code: str) -> str:
    return f'{PYTHON} -c "{code}"'


async def test_exec_cannot_leave_the_sandbox_through_the_kernel(
    world: World, host_service: tuple[Path, list[int]]
) -> None:
    """Issue 22: `unshare -r` (a user namespace, where every capability comes back), a connection to a host
    service's socket file, reading the session keyring (the kernel's keyrings are not namespaced) and ptrace are
    each refused with "Operation not permitted", and the model is told the sandbox refused them; a socket pair,
    which reaches nothing outside, still works. The host service never saw a connection."""
    w = world
    path, accepted = host_service
    keyring = "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(250, 0, -3, 0)"
    told = await _turn(
        w,
        ("exec", {"command": "unshare -r cat /proc/self/uid_map"}),
        ("exec", {"command": _python(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}')")}),
        ("exec", {"command": _python(f"{keyring}; print(r if r >= 0 else os.strerror(ctypes.get_errno()))")}),
        ("exec", {"command": "strace -o /dev/null true"}),
        ("exec", {"command": _python("import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(9))")}),
    )
    assert "unshare: unshare failed: Operation not permitted" in told["call_0"][0]
    assert "PermissionError: [Errno 1] Operation not permitted" in told["call_1"][0]
    assert told["call_2"][0] == f"{REFUSED}\n[exit code 0]"  # the probe reports and exits cleanly
    assert REFUSED in told["call_3"][0]
    for i in (0, 1, 3):
        _blocked(told[f"call_{i}"], SANDBOXED_WHY)
        assert "some system calls are refused" in told[f"call_{i}"][0]
    assert told["call_4"] == ("b'pair'\n[exit code 0]", False)
    assert accepted == []
