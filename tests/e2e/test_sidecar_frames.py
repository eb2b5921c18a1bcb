"""Bad input and failing opens through a real `omniagent serve` subprocess (docs/sidecar.md, "Errors" and G7).

A bad line gets a clear BadFrame and the loop goes on; an open that cannot work fails typed and never hangs.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from omniagent.wire.jsonl import MAX_LINE_BYTES
from tests.e2e.sidecar_client import Sidecar

DISCOVER_OK = {"agents": [{"id": "mock", "name": "Mock", "executable_path": "mock", "source": "Pinned"}],
               "missing": [], "diagnostics": []}  # fmt: skip


async def _bad_frame(sidecar: Sidecar, raw: bytes) -> dict[str, object]:
    """Send one raw line and return the error line it caused (lines are sent one at a time, so it is the next)."""
    start = len(sidecar.lines)
    await sidecar.send_raw(raw)
    line = await sidecar.wait_for(lambda line: "error" in line and "session" not in line, "a BadFrame", start=start)
    assert line["error"]["kind"] == "BadFrame", line
    assert line["error"]["message"] == f"not a command: {line['error']['detail']}"
    return line


async def test_a_line_that_is_not_json_or_is_empty_is_bad_frame_with_a_null_id_and_the_loop_goes_on() -> None:
    """G7: invalid JSON (an empty line, a lone surrogate escape) is BadFrame with `id: null`."""
    async with Sidecar.running(mock="turn") as sidecar:
        lone_surrogate = b'{"id":4,"cmd":"info","session":"\\ud800"}\n'  # not Unicode text: serde refuses it too
        for raw in (b"not json\n", b"\n", b'{"id":3,\n', b"[1,2]\n", b'{"cmd":"discover"}\n', lone_surrogate):
            assert (await _bad_frame(sidecar, raw))["id"] is None, raw
        assert await sidecar.ok("discover") == DISCOVER_OK


async def test_a_frame_with_a_u64_id_but_a_bad_command_or_fields_is_bad_frame_with_that_id() -> None:
    """Valid JSON with a u64 id keeps it; `turns:0` fails deserialization → BadFrame."""
    async with Sidecar.running(mock="turn") as sidecar:
        cases = {
            b'{"id":1001,"cmd":"nope"}\n': 1001,
            b'{"id":1002,"cmd":"rollback","session":"s1","turns":0,"scope":"Conversation"}\n': 1002,
            b'{"id":1003,"cmd":"prompt","session":"s1"}\n': 1003,
            b'{"id":18446744073709551615,"cmd":"open","agent":"mock"}\n': 2**64 - 1,
        }
        for raw, frame_id in cases.items():
            assert (await _bad_frame(sidecar, raw))["id"] == frame_id, raw
        assert await sidecar.ok("discover") == DISCOVER_OK


async def test_a_frame_whose_id_is_not_a_u64_is_bad_frame_with_a_null_id_and_never_runs() -> None:
    """A string, float or negative id → BadFrame with `"id":null` (and the command does not run)."""
    async with Sidecar.running(mock="turn") as sidecar:
        for frame_id in ('"7"', "7.0", "7.5", "-7", "true", "null", "18446744073709551616", "[7]"):
            line = await _bad_frame(sidecar, b'{"id":%s,"cmd":"discover"}\n' % frame_id.encode())
            assert line["id"] is None, frame_id
        assert await sidecar.ok("discover") == DISCOVER_OK
        assert [line for line in sidecar.lines if "ok" in line] == [{"id": 1, "ok": DISCOVER_OK}]


async def test_unknown_extra_fields_in_a_frame_are_ignored() -> None:
    """Unknown extra fields are ignored, not rejected."""
    async with Sidecar.running(mock="turn") as sidecar:
        assert await sidecar.ok("discover", verbose=True, trace={"x": 1}) == DISCOVER_OK


async def test_a_line_over_the_sixteen_mib_cap_is_bad_frame_and_the_next_line_is_served() -> None:
    """G7 and our framing rule (wire/jsonl.py): an oversize line is skipped whole, answered, never fatal."""
    async with Sidecar.running(mock="turn") as sidecar:
        text = "x" * (MAX_LINE_BYTES + 1024 * 1024)
        line = await _bad_frame(sidecar, b'{"id":5,"cmd":"prompt","session":"s1","text":"%s"}\n' % text.encode())
        assert line["id"] is None
        assert str(MAX_LINE_BYTES) in str(line["error"])
        assert await sidecar.ok("discover") == DISCOVER_OK


async def test_opening_an_agent_that_is_not_installed_fails_not_installed_naming_it() -> None:
    """`NotInstalled.agent == "nope"` and the message contains it."""
    async with Sidecar.running(mock="turn") as sidecar:
        error = await sidecar.error("open", agent="nope", dir=".")
        assert error == {
            "kind": "NotInstalled",
            "message": "agent not installed: nope; `omniagent agents` lists the agents omniagent knows",
            "agent": "nope",
        }
        assert await sidecar.ok("probe", agent="mock") is not None  # the sidecar still serves


async def test_opening_an_inline_acp_agent_that_cannot_start_fails_spawn_failed_and_leaves_no_session(
    tmp_path: Path,
) -> None:
    """An inline `{"acp":…}` agent is not looked up, so a bad path surfaces at open as SpawnFailed
    (detail "<path>: <os error>"); never a hang, never a session."""
    async with Sidecar.running(mock="turn") as sidecar:
        missing = str(tmp_path / "missing-agent")
        agent = {"acp": {"name": "ghost-acp", "path": missing, "args": ["--acp"]}}
        error = await sidecar.error("open", agent=agent, dir=str(tmp_path))
        assert error["kind"] == "SpawnFailed", error
        assert missing in error["detail"]
        assert error["message"] == f"could not start agent: {error['detail']}"
        assert sidecar.check.opened == []


async def test_opening_a_discovered_agent_that_cannot_serve_fails_protocol_failed_with_its_stderr(
    tmp_path: Path,
) -> None:
    """ProtocolFailed for a handshake the agent closed, with its stderr tail appended: kiro (an ACP
    agent) and pi (its own RPC), each a binary that exits at once."""
    for name in ("kiro-cli", "pi"):
        fake = tmp_path / name
        fake.write_text("#!/bin/sh\necho 'not an agent' >&2\nexit 3\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "OMNIAGENT_NO_LOGIN_SHELL": "1",
           "OMNIAGENT_KIRO_BIN": str(tmp_path / "kiro-cli"), "OMNIAGENT_PI_BIN": str(tmp_path / "pi")}  # fmt: skip
    async with Sidecar.running(env=env) as sidecar:
        report = await sidecar.ok("discover")
        assert {a["id"] for a in report["agents"] if a["executable_path"].startswith(str(tmp_path))} == {"kiro", "pi"}
        kiro = await sidecar.error("open", agent="kiro", dir=str(tmp_path))
        assert kiro["kind"] == "ProtocolFailed", kiro
        assert "not an agent" in kiro["detail"]
        pi = await sidecar.error("open", agent="pi", dir=str(tmp_path))
        assert pi["kind"] == "ProtocolFailed", pi
        assert "not an agent" in pi["detail"]
        assert sidecar.check.opened == []
