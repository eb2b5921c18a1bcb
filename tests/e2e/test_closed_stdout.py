"""Issue 26: every command that writes to stdout ends quietly when its reader closes the pipe
(`omniagent run --json "…" | head -5`), as other command-line tools do: exit status 141 (128 + SIGPIPE, what a shell
shows for a process SIGPIPE ended), nothing on stderr that reads as a bug: no traceback, no "internal error", no
"Exception ignored" from the interpreter flushing stdout at exit. The stdio faces (`serve`, `rpc`, `acp`) end the
same way once a write finds their reader gone, without waiting for their stdin to end.

Real processes with stdout a pipe whose read end the test closes: after a line for a command that writes many, before
the first write for one that writes a single document (it would otherwise be done before the test could close it).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from omniagent.batch.results import Status, TaskResult, Timings
from omniagent.faces.cli.sessions import SessionRecord

WAIT = 30.0  # seconds: the bound on one process's start, output and exit
EXIT_READER_GONE = 141  # 128 + SIGPIPE
BUG_WORDS = ("internal error", "Traceback", "Exception ignored", "this is a bug")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An empty machine: no agent on PATH, an empty HOME and state dir, no provider key, no login shell."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("PATH", "HOME")}
    env |= {"PATH": "", "HOME": str(home), "OMNIAGENT_NO_LOGIN_SHELL": "1"}
    env |= {"OMNIAGENT_STATE_DIR": str(tmp_path / "state"), "OMNIAGENT_LOG": "WARNING"}
    return env | extra


def _omniagent(*args: str) -> list[str]:
    return [sys.executable, "-m", "omniagent", *args]


def _read_some(proc: subprocess.Popen[bytes]) -> bytes:
    """The first bytes the process writes to stdout (bounded wait)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], WAIT)
    assert ready, "no output"
    data = os.read(proc.stdout.fileno(), 4096)
    assert data, "stdout ended before any output"
    return data


def _finish(proc: subprocess.Popen[bytes], stderr: Path) -> tuple[int, str]:
    """The exit status (bounded wait, stdin left as it is) and what the process wrote to stderr."""
    try:
        code = proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, stderr.read_text(errors="replace")


def _assert_quiet(code: int, err: str, expected: int = EXIT_READER_GONE) -> None:
    assert code == expected, err[-2000:]
    for words in BUG_WORDS:
        assert words not in err, err[-2000:]


@pytest.mark.parametrize("json_lines", [True, False], ids=["json", "text"])
def test_run_ends_quietly_when_its_reader_goes_away_mid_turn(tmp_path: Path, json_lines: bool) -> None:
    """`omniagent run --json "say hi" | head -5`: the bundled `flood` script streams 20,000 deltas, so the reader
    leaves mid-turn; the run stops, its agent is closed, and the exit status says why."""
    stderr = tmp_path / "stderr"
    args = _omniagent("run", *(["--json"] if json_lines else []), "--mock", "flood", "say hi")
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=_env(tmp_path), cwd=tmp_path
        )
    first = _read_some(proc)
    if json_lines:
        json.loads(first.split(b"\n")[0])
    assert proc.stdout is not None
    proc.stdout.close()
    _assert_quiet(*_finish(proc, stderr))


def _with_a_session_record(tmp_path: Path) -> None:
    """One resumable chat in the test's directory, so `sessions` prints a table (else it writes only to stderr)."""
    record = SessionRecord("mock", str(tmp_path), "token-1", "a title", 1_700_000_000.0)
    state = tmp_path / "state"
    state.mkdir()
    (state / "chat-sessions.json").write_text(json.dumps({"sessions": [asdict(record)]}))


@pytest.mark.parametrize(
    "args",
    [
        ["agents", "--json"],
        ["agents"],
        ["sessions", "--json"],
        ["sessions"],
        ["usage", "--json"],
        ["usage"],
        ["version"],
    ],
    ids=" ".join,
)
def test_a_command_whose_reader_is_gone_before_it_writes_ends_quietly(tmp_path: Path, args: list[str]) -> None:
    """The reader leaves before the command writes its one document (`omniagent agents --json | true`): the write
    fails, and the command says nothing about it. The human tables (rich) end the same way as the JSON."""
    _with_a_session_record(tmp_path)
    stderr = tmp_path / "stderr"
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read: the first write fails with EPIPE
    try:
        with stderr.open("wb") as err:
            proc = subprocess.Popen(
                _omniagent(*args), stdin=subprocess.DEVNULL, stdout=write_end, stderr=err, env=_env(tmp_path),
                cwd=tmp_path,
            )  # fmt: skip
    finally:
        os.close(write_end)
    _assert_quiet(*_finish(proc, stderr))


def test_batch_whose_reader_is_gone_before_the_summary_ends_quietly(tmp_path: Path) -> None:
    """`omniagent batch … | true`: a batch whose one run is already done (a resume) goes straight to its summary
    table, which finds the pipe closed."""
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "t1", "prompt": "hi", "agent": "omniagent"}) + "\n")
    done = TaskResult(task="t1", agent="omniagent", status=Status.COMPLETED, timings=Timings(started_at=1.0))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text(done.to_json() + "\n")
    stderr = tmp_path / "stderr"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with stderr.open("wb") as err:
            proc = subprocess.Popen(
                _omniagent("batch", "tasks.jsonl", "--out", "out"), stdin=subprocess.DEVNULL, stdout=write_end,
                stderr=err, env=_env(tmp_path), cwd=tmp_path,
            )  # fmt: skip
    finally:
        os.close(write_end)
    _assert_quiet(*_finish(proc, stderr))


def _initialize(face: str, request_id: int) -> bytes:
    if face == "rpc":
        return json.dumps({"id": f"i{request_id}", "method": "initialize"}).encode() + b"\n"
    if face == "acp":
        params = {"protocolVersion": 1}
        return (
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}).encode() + b"\n"
        )
    return json.dumps({"id": request_id, "cmd": "discover"}).encode() + b"\n"


@pytest.mark.parametrize("face", ["serve", "rpc", "acp"])
def test_a_stdio_face_ends_quietly_once_a_write_finds_its_reader_gone(tmp_path: Path, face: str) -> None:
    """An app that closes our stdout and keeps our stdin open (or dies with it half closed): the next reply finds
    the pipe closed, and the face shuts down by itself, without a traceback, with the status of a closed pipe (`serve`:
    1, as `anyagent serve` exits when its stdout stops accepting writes)."""
    stderr = tmp_path / "stderr"
    args = _omniagent(face) if face == "serve" else _omniagent(face, "--data-dir", str(tmp_path / "data"))
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=_env(tmp_path), cwd=tmp_path
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if face != "serve":  # serve greets first
            proc.stdin.write(_initialize(face, 1))
            proc.stdin.flush()
        json.loads(_read_some(proc).split(b"\n")[0])
        proc.stdout.close()
        proc.stdin.write(_initialize(face, 2))
        proc.stdin.flush()
        _assert_quiet(*_finish(proc, stderr), expected=1 if face == "serve" else EXIT_READER_GONE)
    finally:
        proc.stdin.close()
