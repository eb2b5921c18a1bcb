"""The `omniagent serve` process: EOF, a consumer that stops reading, a consumer that goes away, bad arguments
(docs/sidecar.md, "Starting it" and G4-G6)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.e2e.sidecar_client import WAIT, Sidecar, kind_of, texts


async def test_eof_closes_every_session_writes_every_closed_and_exits_zero() -> None:
    """G5: stdin EOF closes every session (a running turn ends Cancelled), closed ids = opened ids."""
    async with Sidecar.running(mock="turn") as sidecar:
        sessions = [await sidecar.open() for _ in range(3)]
        await sidecar.ok("prompt", session=sessions[0], text="go")
        await sidecar.wait_event(sessions[0], "RequestOpened")
        await sidecar.end_input()
        assert await sidecar.wait_exit() == 0
        assert sorted(sidecar.check.closed) == sorted(sidecar.check.opened) == sessions
        stops = [e["kind"]["TurnEnded"]["stop"] for e in sidecar.events(sessions[0]) if kind_of(e) == "TurnEnded"]
        assert stops == ["Cancelled"]
        assert not [line for line in sidecar.lines if "session" in line]  # closing is not an error


async def test_eof_while_a_session_streams_still_writes_its_remaining_events_and_closed() -> None:
    """G4 and G5: `closed` exactly once on every path, EOF mid-stream included; exit 0."""
    async with Sidecar.running(mock="flood") as sidecar:
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="flood")
        await sidecar.wait_for(lambda line: line.get("event", {}).get("sequence") == 500, "the 500th event")
        await sidecar.end_input()
        assert await sidecar.wait_exit() == 0
        assert sidecar.check.closed == [session]
        assert sidecar.events(session)[-1]["kind"] == {"StatusChanged": "Idle"}


async def test_eof_while_the_reader_is_behind_still_delivers_the_buffered_events_and_closed() -> None:
    """G4/G5: EOF closes sessions but every line already owed (buffered events, then `closed`) is written
    before the exit, even when the reader was far behind at EOF."""
    async with Sidecar.running(mock="starve.json") as sidecar:
        session = await sidecar.open()
        sidecar.pause_reading()
        await sidecar.send("prompt", session=session, text="flood me")
        await sidecar.wait_stderr(f"session {session}: consumer fell")
        await sidecar.end_input()
        sidecar.resume_reading()
        assert await sidecar.wait_exit() == 0
        assert sidecar.check.closed == [session]
        assert len(sidecar.events(session)) > 1024


async def test_eof_while_an_open_is_in_flight_still_answers_it_and_writes_its_closed() -> None:
    """G5: EOF during an in-flight open still yields its `closed`; in-flight commands reply before exit."""
    async with Sidecar.running(mock="turn") as sidecar:
        frame_id = 41
        sidecar.check.sent[frame_id] = "open"
        await sidecar.send_raw(b'{"id":41,"cmd":"open","agent":"mock","dir":"."}\n{"id":42,"cmd":"discover"}\n')
        await sidecar.end_input()  # the frames and the EOF arrive together: the open is still running at EOF
        assert await sidecar.wait_exit() == 0
        reply = next(line for line in sidecar.lines if line.get("id") == frame_id)
        assert reply["ok"]["id"] == "s1"
        assert sidecar.check.closed == ["s1"]
        assert any(line.get("id") == 42 and "ok" in line for line in sidecar.lines)


async def test_a_session_whose_reader_stops_is_closed_without_an_error_and_the_sidecar_survives() -> None:
    """G6 (a lagging consumer gets no error line): the starved session ends with `closed` only;
    another session and later commands still work. The lag is seen on stderr, so nothing sleeps."""
    async with Sidecar.running(mock="starve.json") as sidecar:
        starved, other = await sidecar.open(), await sidecar.open()
        sidecar.pause_reading()
        await sidecar.send("prompt", session=starved, text="flood me")  # 200,000 unpaced deltas
        await sidecar.wait_stderr(f"session {starved}: consumer fell")
        sidecar.resume_reading()
        await sidecar.wait_closed(starved)
        assert not [line for line in sidecar.lines if line.get("session") == starved]
        delivered = texts(sidecar.events(starved))
        assert 1024 <= len(delivered) < 200_000
        assert (await sidecar.ok("discover"))["agents"][0]["id"] == "mock"
        assert (await sidecar.ok("info", session=other))["status"] == "Idle"
        assert (await sidecar.error("prompt", session=starved, text="x"))["kind"] == "SessionClosed"
        assert await sidecar.ok("close", session=other) is None
        await sidecar.wait_closed(other)


async def test_a_consumer_that_closes_our_stdout_makes_the_sidecar_exit_non_zero() -> None:
    """Stdout stops accepting writes → serve returns the io error → exit 1, also while a session
    streams (its forwarder must not hang on a writer that will never drain)."""
    sidecar = await Sidecar.start(mock="starve.json")
    try:
        session = await sidecar.open()
        await sidecar.send("prompt", session=session, text="flood")
        await sidecar.wait_event(session, "TextDelta")
        sidecar.close_stdout()
        await sidecar.send("discover")
        async with asyncio.timeout(WAIT):
            code = await sidecar.proc.wait()
        assert code == 1
    finally:
        await sidecar.aclose()
    assert b"stdout is broken" in sidecar.stderr
    assert b"Traceback" not in sidecar.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--foo"], b"unrecognized arguments: --foo"),
        (["extra"], b"unrecognized arguments: extra"),
        (["--mock", "/nonexistent/script.json"], b"no mock script at /nonexistent/script.json"),
        (["--mock", str(Path(__file__).resolve())], b"invalid mock script"),
    ],
)
async def test_serve_with_stray_args_or_a_bad_mock_script_exits_non_zero_with_stderr_only(
    args: list[str], message: bytes
) -> None:
    """`serve --foo` → message on stderr, exit non-zero; a bad mock script is refused up front:
    nothing reaches stdout, so an app never mistakes it for a hello."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omniagent", "serve", *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(WAIT):
        stdout, stderr = await proc.communicate()
    assert proc.returncode not in (0, None)
    assert stdout == b""
    assert message in stderr
    assert b"Traceback" not in stderr
